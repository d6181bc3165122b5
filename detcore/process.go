package detcore

import (
	"fmt"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// sysClone runs at the seccomp stop of clone, clone3, fork and vfork: it
// remembers the flags for the clone event that follows.
func sysClone(e *Engine, t *thread) {
	r := &t.regs
	t.cloneCTid = 0
	switch t.nr {
	case abi.SYS_FORK:
		t.cloneFlags = abi.SIGCHLD
	case abi.SYS_VFORK:
		t.cloneFlags = abi.CLONE_VM | abi.CLONE_VFORK | abi.SIGCHLD
	case abi.SYS_CLONE:
		t.cloneFlags = r.Rdi
		t.cloneCTid = r.R10
	case abi.SYS_CLONE3:
		// struct clone_args { u64 flags, pidfd, child_tid, parent_tid, ... }
		var b [24]byte
		if err := e.t.ReadMem(t.tid, r.Rdi, b[:]); err != nil {
			t.cloneFlags = 0
			return
		}
		t.cloneFlags = le64(b[0:])
		t.cloneCTid = le64(b[16:])
	}
}

func le64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// handleClone registers the thread or process that t just created.
func (e *Engine) handleClone(t *thread, st Stop) error {
	childTid := int(st.Msg)
	flags := t.cloneFlags
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
	}
	child := e.newThread(childTid, p)
	if flags&abi.CLONE_CHILD_CLEARTID != 0 {
		child.clearTid = t.cloneCTid
	}
	e.digest.add(-2, int64(t.tid), int64(childTid), int64(flags))
	if flags&abi.CLONE_VFORK != 0 {
		// The parent is suspended in the kernel until the child execs or
		// exits; keep it parked so the engine never waits on it.
		t.vforkChild = p
		p.vforkParent = t
		e.park(t)
		return nil
	}
	if err := e.t.Resume(t.tid, ResumeCont, 0); err != nil {
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
	p := t.proc
	for _, o := range append([]*thread(nil), p.threads...) {
		if o == t {
			continue
		}
		if o.tid == st.Tid {
			// The old leader: its tid now belongs to t, and it sends no
			// exit report of its own.
			if o.state == tsDying {
				e.dying--
			}
			if o.state == tsBlocked {
				e.unblock(o)
			}
			delete(e.threads, o.tid)
			p.remove(o)
			continue
		}
		e.setDying(o)
	}
	if former != st.Tid {
		delete(e.threads, former)
		t.tid = st.Tid
		e.threads[t.tid] = t
	}
	if t.clearTid != 0 {
		e.futexWake(futexKey{mm: p.mm, addr: t.clearTid}, 1, abi.FUTEX_BITSET_ANY)
		t.clearTid = 0
	}
	// A new image gets a new address space.
	e.mmSeq++
	p.mm = &addrSpace{id: e.mmSeq}
	if vp := p.vforkParent; vp != nil {
		vp.vforkChild = nil
		p.vforkParent = nil
	}
	e.digest.add(-3, int64(t.tid))
	if err := e.t.Resume(t.tid, ResumeCont, 0); err != nil {
		return e.gone(t, err)
	}
	return nil
}

// sysExit runs at exit: the thread runs the syscall and the engine waits
// for its exit report before scheduling anyone else.
func sysExit(e *Engine, t *thread) {
	p := t.proc
	if p.threads[0] == t && len(p.threads) > 1 && t.nr == abi.SYS_EXIT {
		// A leader exiting before its threads is reported only when the
		// group is empty: clear its tid now, as the kernel will, and do
		// not wait for it.
		if t.clearTid != 0 {
			var zero [4]byte
			_ = e.t.WriteMem(t.tid, t.clearTid, zero[:])
			e.futexWake(futexKey{mm: p.mm, addr: t.clearTid}, 1, abi.FUTEX_BITSET_ANY)
			t.clearTid = 0
		}
		t.act = actCont
		t.exiting = true
		return
	}
	if t.nr == abi.SYS_EXIT_GROUP {
		for _, o := range p.threads {
			if o != t {
				e.setDying(o)
			}
		}
	}
	t.act = actCont
	t.exiting = true
}

// startWatchdog starts the goroutine that preempts a thread which runs too
// long without a scheduling point while others wait.
func (e *Engine) startWatchdog() func() {
	if e.cfg.Watchdog <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(e.cfg.Watchdog / 4)
		defer tick.Stop()
		last, since := e.progress.Load(), time.Now()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			cur := e.progress.Load()
			if cur != last {
				last, since = cur, time.Now()
				continue
			}
			tid := e.waitTid.Load()
			if tid == 0 || e.others.Load() == 0 || time.Since(since) < e.cfg.Watchdog {
				continue
			}
			if e.watchTid.CompareAndSwap(0, tid) {
				if e.t.Preempt(int(tid)) != nil {
					e.watchTid.Store(0)
				}
			}
			since = time.Now()
		}
	}()
	return func() { close(done) }
}
