package detcore

import (
	"os"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Job control. A process stopped by a signal (SIGSTOP, or SIGTSTP, SIGTTIN
// or SIGTTOU with their default action) must stay stopped until a SIGCONT,
// and its parent's wait must see it stopped; hermit must not resume it at
// its next turn. The kernel completes a group stop only when every thread
// of the process has stopped, but threads hermit parks at their ptrace
// stops would never get there: when the first thread of a process reports
// its group stop, the engine lets the others reach theirs at once (a
// thread parked at a syscall entry gives up its call and makes it again
// once continued). Stopped threads are not scheduled until a guest thread
// sends their process SIGCONT; the engine then lets them run again. All
// of this is driven by the guest's own calls, so it is deterministic.

// isStopSignal reports whether sig stops a process by default.
func isStopSignal(sig int) bool {
	switch sig {
	case abi.SIGSTOP, abi.SIGTSTP, abi.SIGTTIN, abi.SIGTTOU:
		return true
	}
	return false
}

// groupStop handles the report that thread t entered a group stop.
func (e *Engine) groupStop(t *thread) {
	if e.running == t {
		e.running = nil
	}
	if t.state == tsStopping {
		e.stopping--
	}
	if t.state == tsDying {
		return
	}
	if t.state == tsBlocked {
		e.unblock(t)
	}
	t.state = tsStopped
	t.act = actCont
	e.childEpoch++
	for _, o := range t.proc.threads {
		if o != t {
			e.joinStop(o)
		}
	}
}

// joinStop resumes o, a parked thread of a process in a group stop, so
// that it reaches its own. It has the stop pending, so it runs no code of
// the guest's before it stops.
func (e *Engine) joinStop(o *thread) {
	switch o.state {
	case tsReady, tsBlocked:
	default:
		return
	}
	if !o.started || e.running == o {
		return
	}
	if o.state == tsBlocked {
		e.unblock(o)
	}
	if o.atSyscall && !e.skipCall(o) {
		return
	}
	o.act = actCont
	o.onExit, o.inPart = nil, false
	o.state = tsStopping
	e.stopping++
	if err := e.resumeThread(o, ResumeCont, 0); err != nil {
		e.stopping--
		o.state = tsReady
		_ = e.gone(o, err)
	}
}

// stopOthers makes the processes t has just sent SIGSTOP (not its own,
// none with a tracer in the guest) enter their group stops before t goes
// on: their parked threads would otherwise take the signal whenever the
// kernel got to them while t runs, and the SIGCHLD of the stop would
// reach t before or after its next calls by the host's timing (rr's
// ptrace_group_stop: 2 schedules in 6 runs). t is held until every
// thread has stopped.
func (e *Engine) stopOthers(t *thread) {
	for _, p := range e.signalTargets(t) {
		if p == t.proc || traced(p) {
			continue
		}
		for _, o := range p.threads {
			before := e.stopping
			e.joinStop(o)
			if e.stopping > before {
				t.hold = true
			}
		}
	}
}

// traced reports whether a thread of p has a tracer in the guest.
func traced(p *process) bool {
	for _, o := range p.threads {
		if o.pt != nil {
			return true
		}
	}
	return false
}

// stoppedOther handles a stop other than its group stop from a thread
// the engine resumed to join one, and reports whether that is all: a
// signal to deliver (the stop signal was caught, say) waits for the
// thread's next turn.
func (e *Engine) stoppedOther(t *thread, st Stop) bool {
	switch {
	case st.Kind == StopSignal && e.stopsNow(t, st.Sig):
		// The thread that takes the SIGSTOP (or a SIGTSTP, SIGTTIN or
		// SIGTTOU its process does not catch): deliver it, and it
		// stops (unless its tracer in the guest sees the signal
		// first). Left for its next turn, it kept the others, which
		// made their calls again and again to reach the stop, from
		// ever giving it one.
		if t.pt != nil && t.pt.pass != st.Sig {
			e.stopping--
			e.traceStop(t, stopStatus(st.Sig, 0), st.Sig, false)
			return true
		}
		if t.pt != nil {
			t.pt.pass = 0 // its tracer passed it on
		}
		if err := e.resumeThread(t, ResumeCont, st.Sig); err != nil {
			e.stopping--
			_ = e.gone(t, err)
		}
		return true
	case st.Kind == StopSeccomp:
		// It found nothing to take (another thread took the signal and
		// has not started the group stop yet) and made its call again:
		// skip it again until the stop reaches it, so that no thread
		// runs a call while its process stops, whichever thread took
		// the signal.
		if err := e.t.GetRegs(t.tid, &t.regs); err != nil {
			e.stopping--
			_ = e.gone(t, err)
			return true
		}
		t.nr = int(int32(t.regs.OrigRax))
		t.atSyscall = true
		e.skipCall(t)
		if err := e.resumeThread(t, ResumeCont, 0); err != nil {
			e.stopping--
			_ = e.gone(t, err)
		}
		return true
	}
	e.stopping--
	t.state = tsRunning
	if st.Kind != StopSignal {
		return false
	}
	t.state = tsReady
	t.act = actCont
	t.sig = st.Sig
	return true
}

// stopsNow reports whether signal sig stops t's process: SIGSTOP, or
// another stop signal that it does not catch.
func (e *Engine) stopsNow(t *thread, sig int) bool {
	if sig == abi.SIGSTOP {
		return true
	}
	return isStopSignal(sig) && !e.catches(t, 1<<(sig-1))
}

// continueStopped makes the stopped threads of the processes a SIGCONT
// from t reached runnable again, once the kill call has succeeded.
func (e *Engine) continueStopped(t *thread) {
	for _, p := range e.signalTargets(t) {
		for _, o := range p.threads {
			if o.pt != nil {
				o.pt.groupStop = 0
				if o.state == tsStopped && o.pt.seized {
					// Listened to (PTRACE_LISTEN): its tracer hears that
					// the group stop ended.
					e.traceStop(o, stopStatus(abi.SIGTRAP, ptEventStop), 0, true)
					continue
				}
			}
			if o.state == tsStopped {
				o.state = tsReady
				o.act = actCont
			}
		}
	}
	e.childEpoch++
}

// signalTargets returns the guest processes a signal-sending call of t
// reaches (kill's pid rules; the thread-directed calls reach the thread's
// process).
func (e *Engine) signalTargets(t *thread) []*process {
	r := &t.regs
	switch t.nr {
	case abi.SYS_TKILL:
		return e.procsWhere(func(p *process) bool { return p.hasVtid(int(int32(r.Rdi))) })
	case abi.SYS_TGKILL, abi.SYS_RT_TGSIGQUEUEINFO, abi.SYS_RT_SIGQUEUEINFO:
		return e.procsWhere(func(p *process) bool { return p.vpid == int(int32(r.Rdi)) })
	case abi.SYS_PIDFD_SEND_SIGNAL:
		// The target is a descriptor: take every stopped process.
		return e.procsWhere(func(*process) bool { return true })
	}
	switch pid := int(int32(r.Rdi)); {
	case pid > 0:
		return e.procsWhere(func(p *process) bool { return p.vpid == pid })
	case pid == -1:
		return e.procsWhere(func(p *process) bool { return p != t.proc })
	case pid == 0:
		sel, ok := e.groupSel(t.tid)
		if !ok {
			return nil
		}
		return e.procsWhere(func(p *process) bool { return e.matches(p, sel) })
	default:
		sel, ok := e.guestGroupSel(-pid)
		if !ok {
			return nil
		}
		return e.procsWhere(func(p *process) bool { return e.matches(p, sel) })
	}
}

func (e *Engine) procsWhere(f func(p *process) bool) []*process {
	var ps []*process
	for _, p := range e.procs {
		if f(p) {
			ps = append(ps, p)
		}
	}
	return ps
}

func (p *process) hasVtid(vtid int) bool {
	for _, t := range p.threads {
		if t.vtid == vtid {
			return true
		}
	}
	return false
}

// skipCall makes t, stopped at a syscall that has not run, skip it and
// come back to its syscall instruction: it makes the call again when it
// next runs.
func (e *Engine) skipCall(t *thread) bool {
	t.regs.OrigRax = ^uint64(0)
	t.regs.Rax = uint64(t.nr)
	t.regs.Rip -= abi.SyscallInsnLen
	if err := e.t.SetRegs(t.tid, &t.regs); err != nil {
		_ = e.gone(t, err)
		return false
	}
	t.atSyscall = false
	return true
}

// raiseForGroup sends sig (if not 0) to every guest process in t's
// process group, as the kernel sends a terminal's job-control signals.
func (e *Engine) raiseForGroup(t *thread, sig int) {
	if sig == 0 {
		return
	}
	if sel, ok := e.groupSel(t.tid); ok {
		e.signalSel(sel, sig)
		e.sigEpoch++
	}
}

// signalSel sends sig to each guest process sel selects.
func (e *Engine) signalSel(sel childSel, sig int) {
	for _, p := range e.procsWhere(func(p *process) bool { return e.matches(p, sel) }) {
		_ = e.signal(p.pid, 0, sig, nil)
	}
}

// killOwnGroup handles kill(0, sig) from a guest process that is in
// hermit's own process group (the guest's first process starts in it, so
// that it shares hermit's terminal): the kernel would signal hermit too,
// and a SIGABRT or SIGTRAP would kill it. The signal goes to each guest
// process of the group instead, and the call returns 0. It reports
// whether it handled the call.
func (e *Engine) killOwnGroup(t *thread) bool {
	if t.nr != abi.SYS_KILL || int32(t.regs.Rdi) != 0 {
		return false
	}
	_, own, err1 := e.t.ProcStat(os.Getpid())
	_, pgrp, err2 := e.t.ProcStat(t.tid)
	if err1 != nil || err2 != nil || own != pgrp {
		return false
	}
	sig := killSignal(t)
	if sig < 0 || sig > 64 {
		t.emulate(-abi.EINVAL)
		return true
	}
	targets := e.signalTargets(t)
	if sig != 0 {
		for _, p := range targets {
			_ = e.signal(p.pid, 0, sig, nil)
		}
	}
	t.emulate(0)
	switch sig {
	case abi.SIGCONT:
		e.continueStopped(t)
	case abi.SIGKILL:
		for _, o := range e.ordered() {
			if e.killed(o) {
				e.setDying(o)
			}
		}
	}
	return true
}
