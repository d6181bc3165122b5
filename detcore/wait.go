package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// Wait options and idtypes from <linux/wait.h>.
const (
	wUntraced  = 0x00000002 // WUNTRACED, WSTOPPED for waitid
	wExited    = 0x00000004
	wContinued = 0x00000008
	pAll       = 0
	pPid       = 1
	pPgid      = 2
)

// childSel is the set of children a wait call waits for.
type childSel struct {
	any  bool
	vpid int // a guest pid, when > 0
	pgrp int // a host process group, when > 0
}

// sysWait handles wait4 and waitid. The engine knows every guest process,
// its parent and whether it has exited, so it can tell without running the
// call whether a child is ready to be reaped: then (or when there is no
// such child at all, for ECHILD) the call runs natively; otherwise the
// thread waits in the engine until a process exits. One stop either way.
func sysWait(e *Engine, t *thread) {
	r := &t.regs
	optArg := 2 // wait4(pid, status, options, rusage)
	if t.nr == abi.SYS_WAITID {
		optArg = 3 // waitid(idtype, id, infop, options, rusage)
	}
	opts := r.Arg(optArg)
	if e.waitTraced(t, optArg, opts) {
		return
	}
	if opts&abi.WNOHANG != 0 {
		e.hideRusage(t, optArg+1)
		return
	}
	sel, ok := e.waitSelection(t, opts)
	if !ok {
		probeWait(e, t, optArg, opts)
		return
	}
	if e.childReady(t.proc, sel) {
		// Another thread of the process may reap the child first: then
		// the call is made again (readyDecided).
		t.readyTurn = e.result.Stats.Turns
		e.hideRusage(t, optArg+1)
		return
	}
	e.waitChild(t, sel, optArg, opts, true)
}

// hideRusage makes a wait call that runs natively return an empty struct
// rusage (the child's real CPU times and page faults are not deterministic):
// it costs a stop at the call's exit, only when a rusage is asked for or a
// child's death needs reporting as natively (faultdeath.go).
func (e *Engine) hideRusage(t *thread, arg int) {
	addr := t.regs.Arg(arg)
	deaths := len(t.proc.faultDeaths) > 0
	if addr == 0 && !deaths {
		return
	}
	t.act = actExitStop
	t.onExit = func(e *Engine, t *thread) {
		if addr != 0 && int64(t.regs.Rax) >= 0 {
			var zero [144]byte
			_ = e.t.WriteMem(t.tid, addr, zero[:])
		}
		if deaths {
			e.reportFaultDeath(t)
		}
	}
}

// waitSelection decodes which children a wait call waits for; false means
// the engine cannot judge it (stopped or continued children wanted).
func (e *Engine) waitSelection(t *thread, opts uint64) (childSel, bool) {
	if opts&(wUntraced|wContinued) != 0 || (t.nr == abi.SYS_WAITID && opts&wExited == 0) {
		return childSel{}, false
	}
	return e.waitTarget(t)
}

// waitTarget decodes which processes a wait call names, whatever it waits
// for.
func (e *Engine) waitTarget(t *thread) (childSel, bool) {
	r := &t.regs
	if t.nr == abi.SYS_WAIT4 {
		switch pid := int(int32(r.Rdi)); {
		case pid == -1:
			return childSel{any: true}, true
		case pid > 0:
			return childSel{vpid: pid}, true
		case pid == 0:
			return e.groupSel(t.tid)
		default:
			return e.guestGroupSel(-pid)
		}
	}
	switch id := int(int32(r.Rsi)); r.Rdi {
	case pAll:
		return childSel{any: true}, true
	case pPid:
		return childSel{vpid: id}, true
	case pPgid:
		if id == 0 {
			return e.groupSel(t.tid)
		}
		return e.guestGroupSel(id)
	}
	return childSel{}, false
}

func (e *Engine) groupSel(tid int) (childSel, bool) {
	_, pgrp, err := e.t.ProcStat(tid)
	return childSel{pgrp: pgrp}, err == nil && pgrp > 0
}

// guestGroupSel selects the group whose leader has guest pid vpid.
func (e *Engine) guestGroupSel(vpid int) (childSel, bool) {
	for _, p := range e.procs {
		if p.vpid == vpid {
			return childSel{pgrp: p.pid}, true
		}
	}
	return childSel{}, false
}

func (e *Engine) matches(c *process, sel childSel) bool {
	switch {
	case sel.any:
		return true
	case sel.vpid > 0:
		return c.vpid == sel.vpid
	}
	_, pgrp, err := e.t.ProcStat(c.pid)
	return err == nil && pgrp == sel.pgrp
}

// childReady reports whether a wait by p for sel would return at once: a
// matching child has exited and not been reaped, or there is no matching
// child at all.
func (e *Engine) childReady(p *process, sel childSel) bool {
	found := false
	for pid, z := range e.zombies {
		if z.parent != p || !e.matches(z, sel) {
			continue
		}
		if state, _, err := e.t.ProcStat(pid); err != nil || state != 'Z' {
			// Reaped since.
			delete(e.zombies, pid)
			continue
		}
		return true
	}
	for _, c := range e.procs {
		if c.parent == p && e.matches(c, sel) {
			found = true
		}
	}
	return !found
}

// processExited records that p's last thread is gone: p is a zombie
// until its parent reaps it, and its children now belong to init.
func (e *Engine) processExited(p *process) {
	if p.parent != nil {
		e.zombies[p.pid] = p
	}
	for _, c := range e.procs {
		if c.parent == p {
			c.parent = nil
		}
	}
	for pid, z := range e.zombies {
		if z.parent == p {
			delete(e.zombies, pid)
		}
	}
}

// probeWait handles the waits sysWait cannot judge from the engine's
// tables (stopped and continued children): the call runs with WNOHANG
// added; if no child was ready the thread is rewound to the syscall
// instruction and waits until some process changes state. It costs a
// second stop.
func probeWait(e *Engine, t *thread, optArg int, opts uint64) {
	r := &t.regs
	orig := *r
	r.SetArg(optArg, opts|abi.WNOHANG)
	if err := e.t.SetRegs(t.tid, r); err != nil {
		return
	}
	epoch := e.childEpoch
	t.act = actExitStop
	t.onExit = func(e *Engine, t *thread) {
		ret := int64(t.regs.Rax)
		none := ret == 0
		if t.nr == abi.SYS_WAITID && ret == 0 && orig.Rdx != 0 {
			// waitid with WNOHANG leaves si_pid 0 when no child was ready.
			var b [4]byte
			if e.t.ReadMem(t.tid, orig.Rdx+16, b[:]) == nil {
				none = b == [4]byte{}
			}
		}
		if !none {
			t.regs.SetArg(optArg, opts)
			_ = e.t.SetRegs(t.tid, &t.regs)
			return
		}
		if !e.rewind(t, orig) {
			return
		}
		b := &blocker{kind: bkChild, epoch: epoch, deadline: -1}
		b.onSignal = func(e *Engine, t *thread) {
			// Rewound, t would take the signal before it made the call
			// again, and then make it whatever the handler's flags (or
			// make it in the kernel, where it waits for a child that
			// waits for its turn): the call returns the kernel's
			// restart code instead, and the kernel restarts it (its
			// WNOHANG probe again) or returns EINTR as it delivers
			// the signal, as natively.
			e.interrupted(t, orig, -abi.ERESTARTSYS)
		}
		e.blockOn(t, b)
	}
}

// remake skips t's call, at its seccomp stop, and rewinds t to its
// syscall instruction, so that it makes the call again (meeting its
// seccomp stop again) when it runs; the skipped call is no call for the
// journal. It reports whether it did.
func (e *Engine) remake(t *thread) bool {
	rew := t.regs
	rew.OrigRax = ^uint64(0)
	rew.Rax = uint64(t.nr)
	rew.Rip -= abi.SyscallInsnLen
	if e.t.SetRegs(t.tid, &rew) != nil {
		return false
	}
	t.regs = rew
	t.atSyscall = false
	return true
}

// interrupted gives t, rewound from a call it made with registers orig
// (rewind), that call back with the restart code a signal leaves in a
// call it interrupts: the kernel restarts the call, or returns EINTR,
// as it delivers the signal, as it does for a call it ran.
func (e *Engine) interrupted(t *thread, orig abi.Regs, restart int64) {
	intr := orig
	intr.Rax = uint64(restart)
	if e.t.SetRegs(t.tid, &intr) == nil {
		t.regs = intr
	}
}

// rewind puts t, at the exit of a call it made with registers orig, back
// at that call's syscall instruction with its own registers: it makes the
// call again when it next runs.
func (e *Engine) rewind(t *thread, orig abi.Regs) bool {
	rew := orig
	rew.Rip -= abi.SyscallInsnLen
	rew.Rax = orig.OrigRax
	if e.t.SetRegs(t.tid, &rew) != nil {
		return false
	}
	t.regs = rew
	return true
}
