package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// Syscall-stops of a guest's tracer (PTRACE_SYSCALL), built from hermit's
// own stops. A tracee resumed with PTRACE_SYSCALL counts its calls
// (count.go), so that every call it makes stops at its entry, intercepted
// or not. There it takes a syscall-entry-stop and stays, its call not yet
// made. Its tracer may change the call (orig_rax, the arguments) or skip
// it (orig_rax -1). When the tracer resumes it, the thread makes its call
// again from its syscall instruction, and that second entry is handled as
// any call is: by the policy, the journal, the schedule. If the tracer
// resumed it with PTRACE_SYSCALL, the call then runs to a syscall-exit
// stop, where the tracer sees the result. The stops come from the
// guest's own calls, the same in run, record and replay.

const (
	ptSyscall       = 24
	sysGoodBit      = 0x80
	syscallInfoNone = 0
	syscallInfoIn   = 1 // PTRACE_SYSCALL_INFO_ENTRY
	syscallInfoOut  = 2 // PTRACE_SYSCALL_INFO_EXIT
	// syscallInExec: the exec event stop, inside execve (no syscall-stop
	// for PTRACE_GET_SYSCALL_INFO).
	syscallInExec = 0x80
)

// sysStops is a tracee's syscall-stop state (in tracee).
type sysStops struct {
	// req is the request that last resumed the thread: PTRACE_SYSCALL,
	// SYSEMU, SINGLESTEP, SYSEMU_SINGLESTEP, or 0 for any other.
	req uint64
	// emu: the entry-stop came under PTRACE_SYSEMU, which skips the call.
	emu bool
	// rip is where the thread's entry-stop left it.
	rip uint64
	// at is the syscall-stop the thread is in: syscallInfoIn or
	// syscallInfoOut, else syscallInfoNone.
	at uint8
	// counted: the entry-stop was at a counted call (count.go), which
	// the tracer skipped already and makes again when resumed.
	counted bool
	// remake says how the call whose entry-stop the tracer saw is made
	// again; exitStop: that call ends in a syscall-exit-stop; toExit:
	// the thread runs to that exit.
	remake   remakeKind
	exitStop bool
	toExit   bool
}

type remakeKind uint8

const (
	remakeNone remakeKind = iota
	// remakeRewound: rewound to its syscall instruction; the call's next
	// syscall stop is no new entry.
	remakeRewound
	// remakeCounted: made again by the tracer, to its exit; an
	// intercepted call's seccomp stop comes first.
	remakeCounted
)

// The requests that resume a tracee into syscall-stops or steps.
const (
	ptSinglestep = 9
	ptSysemu     = 31
	ptSysemuStep = 32
)

// entries: the thread stops at the entry of its next call.
func (s *sysStops) entries() bool {
	return s.req == ptSyscall || s.req == ptSysemu || s.req == ptSysemuStep
}

// steps: the thread stops after its next instruction.
func (s *sysStops) steps() bool { return s.req == ptSinglestep || s.req == ptSysemuStep }

// traceSyscallEntry reports the entry of the call t is stopped at (a
// seccomp stop, or a counted call when counted) to t's tracer, and says
// whether it did, or whether the call is one made again after its
// entry-stop (which takes no counted turn: the run makes it without a
// stop if the filter lets it through).
func (e *Engine) traceSyscallEntry(t *thread, counted bool) (reported, remade bool, err error) {
	pt := t.pt
	if pt == nil || t.state == tsDying {
		return false, false, nil
	}
	if pt.sc.remake != remakeNone {
		// The call made again: the policy's, as any other.
		pt.sc.remake = remakeNone
		remade = true
	}
	exit := pt.opts&ptOTraceExit != 0 && !pt.exited
	if !exit && (remade || !pt.sc.entries()) {
		return false, remade, nil
	}
	if err := e.t.GetRegs(t.tid, &t.regs); err != nil {
		e.park(t)
		return true, false, e.gone(t, err)
	}
	nr := int(int32(t.regs.OrigRax))
	switch {
	case !remade && pt.sc.entries():
		e.park(t)
		t.nr, t.atSyscall = nr, true
		pt.sc.at, pt.sc.counted = syscallInfoIn, counted
		pt.sc.emu = pt.sc.req != ptSyscall
		pt.sc.rip = t.regs.Rip
		e.traceStop(t, e.sysStatus(t), 0, true)
		return true, false, nil
	case nr != abi.SYS_EXIT && nr != abi.SYS_EXIT_GROUP || counted:
		return false, remade, nil
	}
	// PTRACE_O_TRACEEXIT: the exit event stop, before the thread exits;
	// continued, it makes its call again, for the policy this time.
	e.park(t)
	pt.exited = true
	pt.msg = (t.regs.Rdi & 0xff) << 8
	t.nr, t.atSyscall = nr, true
	pt.sc.remake = remakeRewound
	t.regs.Rip -= 2
	t.emulate(int64(nr))
	e.traceStop(t, stopStatus(abi.SIGTRAP, ptEventExit), 0, true)
	return true, false, nil
}

// remadeUntraced resumes t at a call it makes again after its entry-stop,
// one the filter lets through: it runs at once, as a run makes it.
func (e *Engine) remadeUntraced(t *thread) error {
	e.park(t)
	if pt := t.pt; pt.sc.exitStop {
		pt.sc.exitStop, pt.sc.toExit = false, true
	}
	return e.resumeParked(t)
}

// sysStatus is the wait status of a syscall-stop.
func (e *Engine) sysStatus(t *thread) int32 {
	sig := abi.SIGTRAP
	if t.pt.opts&ptOSysGood != 0 {
		sig |= sysGoodBit
	}
	return stopStatus(sig, 0)
}

// traceSyscallResume ends t's syscall-stop. From an entry-stop, t makes
// its call again as its tracer left it, or, if the tracer skipped it
// (orig_rax -1), returns the tracer's rax without making it; then, if
// the tracer resumed it with PTRACE_SYSCALL, it takes the exit-stop.
func (e *Engine) traceSyscallResume(t *thread) {
	pt := t.pt
	at, syscall := pt.sc.at, pt.sc.req == ptSyscall
	pt.sc.at = syscallInfoNone
	if at == syscallInExec && syscall && t.execReturned {
		// execve has returned already: hermit's code ran in the thread
		// at the exec (OnExec), past the call's exit. Its exit-stop is
		// here, with the registers of that exit (rax 0, orig_rax the
		// call); a tracer that moves the thread moves it from there.
		t.state = tsTraced
		pt.sc.at = syscallInfoOut
		pt.sc.toExit, pt.sc.exitStop = false, false
		pt.status, pt.reported = e.sysStatus(t), false
		e.childEpoch++
		return
	}
	// The exit-stop of a call that has not returned yet comes if the
	// tracer asks for it now (execve's, after its exec event).
	pt.sc.toExit = syscall && (pt.sc.toExit || at == syscallInExec)
	pt.sc.exitStop = syscall && pt.sc.exitStop
	if at != syscallInfoIn {
		return
	}
	var r abi.Regs
	if e.t.GetRegs(t.tid, &r) != nil {
		return
	}
	if r.Rip != pt.sc.rip {
		// The tracer moved the thread: the call runs where it stopped,
		// as it is now, and the thread goes on from there.
		pt.sc.exitStop, pt.sc.toExit = false, syscall
		t.regs = r
		t.act = actCont
		return
	}
	if pt.sc.emu && int64(r.OrigRax) != -1 {
		// PTRACE_SYSEMU: the call is not made.
		r.OrigRax = ^uint64(0)
		if e.t.SetRegs(t.tid, &r) != nil {
			return
		}
	}
	t.regs = r
	if int64(r.OrigRax) == -1 {
		// Skipped: the kernel leaves rax as the tracer set it, at this
		// stop or at the exit-stop that comes first.
		t.act = actCont
		if syscall {
			pt.sc.at = syscallInfoOut
			t.state = tsTraced
			pt.status, pt.reported = e.sysStatus(t), false
			e.childEpoch++
		}
		return
	}
	pt.sc.exitStop = syscall
	if pt.sc.counted {
		pt.sc.remake = remakeCounted
		return
	}
	// Back to the syscall instruction, the call's number in rax; the
	// call of this stop is skipped.
	pt.sc.remake = remakeRewound
	t.regs.Rip -= 2
	t.emulate(int64(r.OrigRax))
}

// traceToExit notes, as t resumes from a stop at a syscall, that its
// tracer waits for the call's syscall-exit-stop (the call made again
// after its entry-stop).
func (t *thread) traceToExit() {
	if pt := t.pt; pt != nil && pt.sc.exitStop && pt.sc.remake == remakeNone && t.atSyscall {
		pt.sc.exitStop, pt.sc.toExit = false, true
	}
}

// mode returns how a tracee runs on for its tracer's syscall-stops, if
// they decide it.
func (pt *tracee) mode() (ResumeMode, bool) {
	switch {
	case pt.sc.toExit || pt.sc.remake == remakeCounted:
		// Through the call's exit, whatever stops come first (a clone
		// event, an exec).
		return ResumeSyscall, true
	case pt.sc.steps():
		return ResumeCountStep, true
	case pt.sc.entries() || pt.sc.remake == remakeRewound:
		return ResumeCount, true
	}
	return 0, false
}

// traceSyscallExit handles the syscall-exit stop of a tracee, and reports
// whether it is its tracer's syscall-exit-stop now.
func (e *Engine) traceSyscallExit(t *thread) bool {
	pt := t.pt
	if pt == nil || t.state != tsReady {
		return false
	}
	if pt.sc.remake == remakeCounted {
		// The counted call, made again, ran natively.
		pt.sc.remake = remakeNone
		pt.sc.toExit, pt.sc.exitStop = pt.sc.exitStop, false
	}
	if !pt.sc.toExit {
		return false
	}
	pt.sc.toExit = false
	pt.sc.at = syscallInfoOut
	if int64(t.regs.OrigRax) == -1 && t.nr >= 0 && !restarting(int64(t.regs.Rax)) {
		// An emulated call: its tracer sees the call's number, as for
		// one the kernel made.
		t.regs.OrigRax = uint64(t.nr)
		_ = e.t.SetRegs(t.tid, &t.regs)
	}
	e.traceStop(t, e.sysStatus(t), 0, true)
	return true
}

// syscallInfo fills in struct ptrace_syscall_info past its header for
// o's syscall-stop (PTRACE_GET_SYSCALL_INFO) from its registers, and
// returns the size the kernel would.
func syscallInfo(o *thread, info []byte, regs *abi.Regs) int {
	switch o.pt.sc.at {
	case syscallInfoIn:
		info[0] = syscallInfoIn
		putLE64(info[24:], regs.OrigRax)
		for i := 0; i < 6; i++ {
			putLE64(info[32+8*i:], regs.Arg(i))
		}
		return 80
	case syscallInfoOut:
		info[0] = syscallInfoOut
		putLE64(info[24:], regs.Rax)
		if rv := int64(regs.Rax); rv < 0 && rv >= -4095 {
			info[32] = 1
		}
		return 33
	}
	return syscallInfoLen
}

// Options and events for the tracing of new threads and processes.
const (
	ptOTraceFork      = 0x2
	ptOTraceVfork     = 0x4
	ptOTraceClone     = 0x8
	ptOTraceVforkDone = 0x20
	ptEventFork       = 1
	ptEventVfork      = 2
	ptEventClone      = 3
	ptEventVforkDone  = 5
)

// traceClone makes child, just created by t, a tracee of t's tracer if
// t's options ask for it, and stops t in the event stop (the call then
// returns, with its exit-stop if the tracer waits for that). It reports
// whether t stays stopped.
func (e *Engine) traceClone(t, child *thread, flags uint64) bool {
	pt := t.pt
	if pt == nil || flags&cloneUntraced != 0 {
		return false
	}
	ev, opt := ptEventFork, uint64(ptOTraceFork)
	switch {
	case flags&abi.CLONE_VFORK != 0:
		ev, opt = ptEventVfork, ptOTraceVfork
	case flags&0xff != abi.SIGCHLD:
		ev, opt = ptEventClone, ptOTraceClone
	}
	if pt.opts&opt == 0 {
		return false
	}
	child.pt = &tracee{tracer: pt.tracer, seized: pt.seized, opts: pt.opts}
	e.dropSpinTraps(child.proc)
	// The new tracee starts in a stop: PTRACE_EVENT_STOP if seized, else
	// the SIGSTOP the kernel sends it.
	if pt.seized {
		e.traceStop(child, stopStatus(abi.SIGTRAP, ptEventStop), 0, true)
	} else {
		e.traceStop(child, stopStatus(abi.SIGSTOP, 0), 0, true)
	}
	pt.msg = uint64(child.vtid)
	e.park(t)
	e.traceStop(t, stopStatus(abi.SIGTRAP, ev), 0, true)
	return true
}

// traceVforkDone reports to the tracer of t, a vfork parent its child
// has let go, PTRACE_EVENT_VFORK_DONE if it asked for it.
func (e *Engine) traceVforkDone(t *thread, child *process) {
	if t.pt == nil || t.pt.opts&ptOTraceVforkDone == 0 || t.state != tsReady {
		return
	}
	t.pt.msg = uint64(child.vpid)
	e.traceStop(t, stopStatus(abi.SIGTRAP, ptEventVforkDone), 0, true)
}
