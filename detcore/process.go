package detcore

import (
	"fmt"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// cloneArgs reads, at the clone event stop of t, the flags and child-tid
// address of the clone, clone3, fork or vfork it is executing: the syscall
// arguments are still in its registers.
func (e *Engine) cloneArgs(t *thread) (flags, ctid uint64) {
	var r abi.Regs
	if e.t.GetRegs(t.tid, &r) != nil {
		return 0, 0
	}
	switch int(int32(r.OrigRax)) {
	case abi.SYS_FORK:
		return abi.SIGCHLD, 0
	case abi.SYS_VFORK:
		return abi.CLONE_VM | abi.CLONE_VFORK | abi.SIGCHLD, 0
	case abi.SYS_CLONE:
		return r.Rdi, r.R10
	case abi.SYS_CLONE3:
		// struct clone_args { u64 flags, pidfd, child_tid, parent_tid, ... }
		var b [24]byte
		if e.t.ReadMem(t.tid, r.Rdi, b[:]) != nil {
			return 0, 0
		}
		return le64(b[0:]), le64(b[16:])
	}
	return 0, 0
}

func le64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// handleClone registers the thread or process that t just created.
func (e *Engine) handleClone(t *thread, st Stop) error {
	childTid := int(st.Msg)
	flags, ctid := e.cloneArgs(t)
	if st.CloneKind == abi.SYS_VFORK {
		flags |= abi.CLONE_VFORK | abi.CLONE_VM
	}
	var p *process
	if flags&abi.CLONE_THREAD != 0 {
		p = t.proc
	} else {
		var mm *addrSpace
		if flags&abi.CLONE_VM != 0 {
			mm = t.proc.mm
		}
		parent := t.proc
		if flags&abi.CLONE_PARENT != 0 && t.proc.parent != nil {
			parent = t.proc.parent
		}
		p = e.newProcess(childTid, parent, mm)
		// A fork keeps its parent's shared mappings, and its int3s.
		p.mm.shared, p.mm.sharedWrite = t.proc.mm.shared, t.proc.mm.sharedWrite
		if mm == nil {
			forkSpinTraps(t.proc.mm, p.mm)
		}
		// A fork shares the MAP_SHARED clock page, and its descriptors.
		e.shareClock(t.proc, p)
		p.signalfds = t.proc.signalfds
		p.images = append([]image(nil), t.proc.images...)
	}
	child := e.newThread(childTid, p)
	if p.vpid == 0 {
		p.vpid = child.vtid
	}
	if flags&abi.CLONE_CHILD_CLEARTID != 0 {
		child.clearTid = ctid
	}
	// PR_SET_TSC, the seccomp filters and no_new_privs are inherited.
	child.tscMode, child.seccompMode, child.noNewPrivs, child.noCPUID = t.tscMode, t.seccompMode, t.noNewPrivs, t.noCPUID
	e.ownFilter(child)
	child.affinity = t.affinity
	// A thread of a program whose threads compute rather than spin
	// starts with its creator's longer examination budget (spin.go),
	// not a spinner's short one.
	child.spinWait = max(t.spinWait, spinBudget)
	e.digest.add(-2, int64(t.vtid), int64(child.vtid), int64(flags))
	if pj, ok := e.cfg.Journal.(ProcessJournal); ok {
		pj.Clone(t.vtid, child.vtid, flags)
	}
	if flags&abi.CLONE_VFORK != 0 {
		// The parent is suspended in the kernel until the child execs or
		// exits; keep it parked so the engine never waits on it.
		t.vforkChild = p
		p.vforkParent = t
		e.park(t)
		e.traceClone(t, child, flags)
		return nil
	}
	if e.traceClone(t, child, flags) {
		return nil
	}
	// The new thread waits for its turn: the parent counts its calls
	// from here (count.go), as at a scheduling point.
	e.schedPoint(t)
	if err := e.resumeThread(t, t.contMode(), 0); err != nil {
		return e.gone(t, err)
	}
	return nil
}

// handleExec updates the tables after a successful execve. The thread that
// called execve takes over the thread group leader's tid; every other
// thread of the process is gone.
func (e *Engine) handleExec(st Stop) error {
	former := int(st.Msg)
	t := e.threads[former]
	if t == nil {
		t = e.threads[st.Tid]
	}
	if t == nil {
		return fmt.Errorf("exec event from unknown thread %d (was %d)", st.Tid, former)
	}
	p, formerVtid := t.proc, t.vtid
	for _, o := range append([]*thread(nil), p.threads...) {
		if o == t {
			continue
		}
		if o.tid == st.Tid {
			// The old leader: its tid now belongs to t, and it sends no
			// exit report of its own.
			e.forget(o)
			continue
		}
		e.setDying(o)
	}
	if former != st.Tid {
		delete(e.threads, former)
		t.tid = st.Tid
		t.vtid = p.vpid
		e.threads[t.tid] = t
	}
	if t.clearTid != 0 {
		e.futexWake(futexKey{mm: p.mm, addr: t.clearTid}, 1, abi.FUTEX_BITSET_ANY)
		t.clearTid = 0
	}
	// A new image gets a new address space.
	e.mmSeq++
	p.mm = &addrSpace{id: e.mmSeq}
	released := p.vforkParent != nil
	if vp := p.vforkParent; vp != nil {
		vp.vforkChild = nil
		p.vforkParent = nil
		e.traceVforkDone(vp, p)
	}
	e.digest.add(-3, int64(t.vtid))
	t.noCPUID = false // a new program has cpuid (arch_setup_new_exec)
	x, err := e.t.OnExec(t.tid, e.atRandom(), t.seccompMode != 0)
	if err != nil {
		return e.gone(t, err)
	}
	e.ownFilter(t) // the tracer forgot a leader's state that another thread's exec replaced
	e.setupClock(p, x)
	e.execImages(p, t.tid, x)
	t.execReturned = x.Returned
	if j := e.cfg.Journal; j != nil {
		if err := j.Exec(t.tid, t.vtid); err != nil {
			return err
		}
	}
	if e.traceExec(t, formerVtid) {
		return nil
	}
	if released {
		// The parent vfork suspended until this exec goes first (a
		// shell, posix_spawn: it goes on to wait for the child): natively
		// both run at once, and the child, run on, would count its calls
		// (count.go) while the parent waits for its turn.
		e.park(t)
		e.endTurn(t)
		return nil
	}
	e.schedPoint(t)
	if err := e.resumeThread(t, t.contMode(), 0); err != nil {
		return e.gone(t, err)
	}
	return nil
}

// sysExit runs at exit and exit_group: the thread runs the syscall and the
// engine waits for the exit reports before scheduling anyone else (see
// resume).
func sysExit(e *Engine, t *thread) { t.exiting = true }

// exiting runs after t was resumed into exit or exit_group.
func (e *Engine) exiting(t *thread) {
	p := t.proc
	if t.nr == abi.SYS_EXIT_GROUP {
		for _, o := range p.threads {
			if o != t {
				e.setDying(o)
			}
		}
		return
	}
	if len(p.threads) > 1 && p.threads[0] == t {
		// A leader leaving before its threads is reported only when the
		// group is empty: clear its tid as the kernel does, and do not
		// wait for it.
		if t.clearTid != 0 {
			var zero [4]byte
			_ = e.t.WriteMem(p.threads[1].tid, t.clearTid, zero[:])
			e.futexWake(futexKey{mm: p.mm, addr: t.clearTid}, 1, abi.FUTEX_BITSET_ANY)
			t.clearTid = 0
		}
		t.state = tsZombie
		e.running = nil
	}
}

// preempt sends the watchdog's SIGSTOP to tid and reports whether it
// did: not when one is already on its way there: signals do not queue, so a second would be lost. One
// may still be on its way to a thread that reached a syscall stop first
// and then waited: it arrives when the thread next runs.
func (e *Engine) preempt(tid int, spin bool) bool {
	e.preemptMu.Lock()
	defer e.preemptMu.Unlock()
	if _, ok := e.preempts[tid]; ok || e.kwaitTid.Load() == int64(tid) {
		return false
	}
	if e.t.Preempt(tid) != nil {
		return false
	}
	e.preempts[tid] = spin
	return true
}

// stopOnItsWay reports whether a SIGSTOP of the watchdog's (a preemption
// or a look at a kernel wait) is on its way to tid.
func (e *Engine) stopOnItsWay(tid int) bool {
	e.preemptMu.Lock()
	_, ok := e.preempts[tid]
	e.preemptMu.Unlock()
	return ok || e.kwaitTid.Load() == int64(tid)
}

// watchdogStop reports whether the watchdog's SIGSTOP for a preemption
// is on its way to tid, and whether it is for a spin examination.
func (e *Engine) watchdogStop(tid int) (spin, ok bool) {
	e.preemptMu.Lock()
	defer e.preemptMu.Unlock()
	spin, ok = e.preempts[tid]
	return spin, ok
}

// sleepsInKernel reports whether tid sleeps in a syscall, where the
// tracer can tell. It is called from the watchdog's goroutine.
func (e *Engine) sleepsInKernel(tid int) bool {
	kt, ok := e.t.(KernelWaitTracer)
	if !ok {
		return false
	}
	_, in := kt.InKernelWait(tid)
	return in
}

// ownStop reports whether stop st is the watchdog's SIGSTOP, and whether
// it asks for an examination; take forgets it.
func (e *Engine) ownStop(st Stop, take bool) (own, spin bool) {
	if st.Kind != StopSignal || st.Sig != abi.SIGSTOP {
		return false, false
	}
	e.preemptMu.Lock()
	defer e.preemptMu.Unlock()
	spin, own = e.preempts[st.Tid]
	if own && take {
		delete(e.preempts, st.Tid)
	}
	return own, spin
}

// orphanGrace is how long, in virtual time, the processes still running
// when the main process exits may go on (a child finishing its last
// lines, say) before the run ends.
const orphanGrace = 50 * int64(time.Millisecond)

// endRest ends the run as a container's ends when its main process
// exits: the guest processes still running orphanGrace later (daemons,
// orphans) are killed, at that deterministic point, and --summary counts
// them.
func (e *Engine) endRest() {
	e.orphanEnd = -1
	for _, o := range e.ordered() {
		if o.state == tsDying || o.proc.pid != o.tid {
			continue
		}
		if e.signal(o.proc.pid, 0, abi.SIGKILL, nil) == nil {
			e.result.Stats.Orphans++
		}
	}
	for _, o := range e.ordered() {
		e.setDying(o)
	}
}
