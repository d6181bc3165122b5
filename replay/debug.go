package replay

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
)

// The debug layer is the detcore.Tracer a Session's engine drives. It sits
// on the tracer that reaches the guest and hides from the engine every
// stop the debugger causes (breakpoint traps, watchpoint traps,
// single-steps), so the engine sees exactly the stops, in exactly the
// order, of a run without a debugger, and makes the same decisions.
//
//   - A breakpoint is an int3 written over the first byte of an
//     instruction in every guest process (a process forked later inherits
//     it; a process that execs the same program gets it again). A thread
//     that executes it reports SIGTRAP with its instruction pointer one
//     past the breakpoint. The layer swallows the stop, moves the pointer
//     back, and when the thread is resumed steps it over the original
//     instruction (restore the byte, step, put the int3 back) before
//     resuming it as the engine last asked. The engine and the Session
//     read memory with the original bytes in place of the int3s.
//   - A watchpoint is a hardware debug register (DR0–DR3, enabled in DR7)
//     set in every thread; a thread gets them at its first resume. A hit
//     traps after the access, with the slot's bit set in DR6.
//   - Single-stepping thread T turns the engine's ResumeCont resumes of T
//     into ResumeStep (ResumeCount into ResumeCountStep) and swallows the traps (DR6.BS set). A stop at an
//     intercepted syscall, or any other real event, goes to the engine as
//     usual, and counting goes on when the engine resumes T. ResumeSyscall
//     resumes are never changed.
//
// A SIGTRAP that none of these explains (the guest's own int3 or raise) is
// passed to the engine unchanged. When a stop is one the Session wants to
// see, the layer pauses: it calls stop, which runs the Session's commands
// on this same goroutine until one of them resumes the run.
//
// Trap causes. DR6 is read at each SIGTRAP while the debugger has
// anything set: BS (bit 14) says a hardware single-step trapped, Bn (bit
// n) says watchpoint n did. Each debug exception resets the kernel's copy
// of DR6, but an int3 (#BP) leaves it alone, so the layer clears it after
// reading. The kernel reports some steps without BS: the end of a syscall
// (a thread resumed with PTRACE_SINGLESTEP inside a syscall, or stepping a
// syscall instruction, gets the SYSCALL_EXIT_TRAP report, Linux's
// user_single_step_report), and the entry of a signal handler delivered
// with the step (ptrace_notify from signal_delivered). The layer knows
// those from the thread's last stop (inside a syscall: seccomp, clone,
// exec, a new thread's first stop; or the step delivered a signal) and
// from the instruction before the pointer (0f 05, syscall). An int3 trap
// is one whose pointer is one past an address of the breakpoint table
// whose byte is an int3, whatever DR6 says.
//
// All methods run on the run goroutine, except those of the engine's
// watchdog: Preempt, which only reads atomics, and CPUTime and
// InKernelWait, which only read inner.
type layer struct {
	inner           detcore.Tracer
	detcore.Actions // of inner
	// dr reaches the debug registers; nil when inner cannot (no
	// watchpoints, no single-steps).
	dr DebugRegs
	// list lists the live guest threads (Engine.Threads); clock is the
	// guest's logical time (Engine.Clock).
	list  func() []detcore.ThreadInfo
	clock func() int64
	// inStub reports whether an address in a thread's process is in
	// hermit's code for its patched sites (Engine.InHermitStub): a step
	// that lands there is no step of the program's.
	inStub func(tid int, pc uint64) bool
	// stop pauses the run: it returns when the Session resumes it.
	stop func(Stop)
	// intr is set by Session.Interrupt; waiting, when set, holds the
	// layer while it waits for the tracer's next stop (Interrupt kicks
	// it, debug_kick.go); running is the thread it last set running.
	intr    *atomic.Bool
	waiting *atomic.Pointer[layer]
	running atomic.Int64
	k       kicks

	ths map[int]*lthread
	// queue holds stops collected while the layer waited for one thread
	// (a step over a breakpoint); Wait reports them first, in order.
	queue []detcore.Stop
	// bps maps each breakpoint's address to the original byte there.
	bps map[uint64]byte
	// pending are breakpoints a new run could not insert yet (their page
	// is not mapped); they are retried at each event.
	pending map[uint64]bool
	// moving are breakpoints a site's jmp is about to cover (MovingCode).
	moving map[uint64]bool
	// unmapped are breakpoints left out of some processes, their page
	// not mapped there yet (a library the loader of a program just
	// exec'd, or of the focused process, maps later): each is armed there
	// once its code is (armMapped, at each event).
	unmapped map[uint64][]waiter
	wps      [4]watch
	// wpGen counts changes to wps; a thread whose drGen differs gets the
	// debug registers again before it runs.
	wpGen int
	goal  goal
	// event is the number of events consumed; boundary is set while the
	// run is at the event boundary event (in OnEvent).
	event    uint64
	boundary bool
	// last is the thread of the last stop handed to the engine.
	last int
	// killed: the run is being killed; pass everything through and help
	// the engine see every thread's end.
	killed bool
	// err is a failure while the layer resumed a thread on its own; the
	// engine's next Wait returns it.
	err error

	// results, when set (Session.CaptureResults), receives the result of
	// each call the run paused before, by event number.
	results map[uint64]int64
	// focus is the guest pid of the process whose program breakpoints
	// are meant for (Session.Focus); 0 for none.
	focus int
	// signals: Continue and Step stop at signal deliveries (set by the
	// Session from any goroutine, read on the run's).
	signals *atomic.Bool

	// Read by Preempt on the watchdog's goroutine.
	paused   atomic.Bool
	stepping atomic.Bool
	activity atomic.Int64
	seen     atomic.Int64
}

// lthread is what the layer knows of one guest thread.
type lthread struct {
	tid int
	// intent is how the engine last resumed the thread.
	intent detcore.ResumeMode
	// ourStep: the layer turned the last resume into a step; sigStep: and
	// that resume delivered a signal.
	ourStep, sigStep bool
	// engineStep: the engine's own last resume was a single step (a spin
	// examination's, which the watchdog may start whenever it looks).
	// The instruction it executes is the program's: it counts toward a
	// step the Session asked for, its end may be the Session's stop, and
	// the trap goes to the engine.
	engineStep bool
	// inSyscall: the thread's last stop was inside a syscall (seccomp,
	// clone, exec, first stop), whose end a step reports without DR6.BS.
	inSyscall bool
	// over is set while the stop awaited is the end of a step over the
	// breakpoint at over.
	over uint64
	// needOver is the breakpoint the thread stopped at and must step over
	// when it next runs; remakeOver is one whose instruction, a syscall a
	// counting thread stopped at (StopUntraced), runs when it next runs,
	// the original byte in place.
	needOver, remakeOver uint64
	// resultOf is 1 + the event whose call the thread makes next and
	// whose result the layer wants; exitForResult says the thread was
	// resumed to that call's exit for it.
	resultOf      uint64
	exitForResult bool
	// drGen is the wpGen the thread's debug registers reflect; drSet says
	// they hold a watchpoint.
	drGen int
	drSet bool
	// leave is a watchpoint's stop that came in hermit's stub code, to
	// report once the thread's steps have left it (pauseOut).
	leave *Stop
	// tf keeps the trap flag of the steps the layer makes out of the
	// program (detcore.TrapFlag).
	tf detcore.TrapFlag
	// emuEnd is where the thread's instruction ends when a step of ours
	// faulted on an instruction the engine emulates (rdtsc, rdtscp,
	// cpuid): the engine's resume past it completes that step.
	emuEnd uint64
}

// goal is what the Session waits for while the run goes on.
type goal struct {
	// breaks: stop at breakpoint and watchpoint hits.
	breaks bool
	// toEvent: stop at event boundary event.
	toEvent bool
	event   uint64
	// stepTid is the thread to single-step (0: none), stepN how many
	// instructions, steps how many it has executed.
	stepTid, stepN, steps int
	// stepAt, when set, also ends the step once the stepped thread's
	// instruction pointer is there; trace, when set, receives the
	// instruction pointer after each instruction.
	stepAt uint64
	trace  *[]uint64
	// countTid, when set, counts that thread's arrivals at the
	// instruction breakpoint in debug register countSlot (counted), or,
	// with countAt set, at the int3 there (other threads' arrivals pass),
	// and stops at the countNth; other stops (breaks, toEvent) still end
	// the leg, with Stop.Steps the count.
	countTid, countSlot, countN, counted int
	countAt                              uint64
}

// DebugRegs is implemented by tracers that reach a stopped thread's
// hardware debug registers DR0–DR3, DR6 and DR7, as detcore/ptrace's
// Tracer does. Watchpoints and single-steps need it.
type DebugRegs interface {
	DebugReg(tid, i int) (uint64, error)
	SetDebugReg(tid, i int, v uint64) error
}

// SiginfoReader is implemented by tracers that read the siginfo_t of a
// thread stopped with a signal, as detcore/ptrace's Tracer does.
type SiginfoReader interface {
	Siginfo(tid int) ([]byte, error)
}

// The int3 instruction, and the bits of DR6 from <asm/debugreg.h>.
const (
	int3        = 0xcc
	dr6TrapBits = 0xf     // DR_TRAP0..DR_TRAP3
	dr6Step     = 1 << 14 // DR_STEP (BS)
)

func newLayer(intr, signals *atomic.Bool) *layer {
	return &layer{intr: intr, signals: signals, ths: map[int]*lthread{}, bps: map[uint64]byte{}, pending: map[uint64]bool{},
		k: kicks{ours: map[int]bool{}, engine: map[int]bool{}}}
}

// Forwarding types: the engine finds the optional tracer interfaces by
// type assertion, so the layer offers exactly those its inner tracer has.
type (
	layerF struct {
		*layer
		detcore.FileTracer
	}
	layerP struct {
		*layer
		detcore.ProcTracer
	}
	layerFP struct {
		*layer
		detcore.FileTracer
		detcore.ProcTracer
	}
)

var (
	_ detcore.Tracer     = (*layer)(nil)
	_ detcore.FileTracer = (*layerF)(nil)
	_ detcore.ProcTracer = (*layerP)(nil)
	_ detcore.FileTracer = (*layerFP)(nil)
	_ detcore.ProcTracer = (*layerFP)(nil)
)

// wrap is the Hooks.Wrap of a Session's runs.
func (l *layer) wrap(inner detcore.Tracer) detcore.Tracer {
	l.inner, l.Actions = inner, detcore.Actions{Inner: inner}
	l.dr, _ = inner.(DebugRegs)
	ft, isF := inner.(detcore.FileTracer)
	pt, isP := inner.(detcore.ProcTracer)
	switch {
	case isF && isP:
		return &layerFP{l, ft, pt}
	case isF:
		return &layerF{l, ft}
	case isP:
		return &layerP{l, pt}
	}
	return l
}

func (l *layer) thread(tid int) *lthread {
	th := l.ths[tid]
	if th == nil {
		th = &lthread{tid: tid}
		l.ths[tid] = th
	}
	return th
}

// setGoal starts a new leg of the run.
func (l *layer) setGoal(g goal) {
	l.goal = g
	l.stepping.Store(g.stepTid != 0)
}

// pause stops the run at st and serves the Session until it resumes.
func (l *layer) pause(st Stop) {
	st.Event = l.event
	switch {
	case l.goal.stepTid != 0:
		st.Steps = l.goal.steps
	case l.goal.countTid != 0:
		st.Steps = l.goal.counted
	}
	l.setGoal(goal{})
	l.intr.Store(false)
	l.paused.Store(true)
	l.stop(st)
	l.paused.Store(false)
	l.activity.Add(1)
}

// onEvent is the Hooks.OnEvent of a Session's runs.
func (l *layer) onEvent(n uint64) {
	l.event, l.boundary = n, true
	if !l.killed {
		l.retryPending()
		paused := true
		switch {
		case l.goal.toEvent && n >= l.goal.event:
			l.pause(Stop{Reason: ReasonEvent, Tid: l.last})
		case l.intr.Load():
			l.pause(Stop{Reason: ReasonInterrupt, Tid: l.last})
		default:
			paused = false
		}
		if paused && l.results != nil && !l.killed {
			// The debugger saw this call before it was made: learn its
			// result at its exit (one more stop, this call only).
			l.thread(l.last).resultOf = n + 1
		}
	}
	l.event, l.boundary = n+1, false
}

// kill puts the layer in pass-through mode for a run being killed.
func (l *layer) kill() {
	l.killed = true
	l.setGoal(goal{})
}

// Wait implements detcore.Tracer.Wait: it returns the next stop the
// engine would see without a debugger.
func (l *layer) Wait() (detcore.Stop, error) {
	for {
		if err := l.err; err != nil {
			l.err = nil
			return detcore.Stop{}, err
		}
		st, err := l.next()
		if err != nil || l.killed {
			return st, err
		}
		if l.swallow(st) {
			continue
		}
		if l.takeKick(st) {
			if err := l.kicked(st); err != nil && !errors.Is(err, detcore.ErrGone) {
				return detcore.Stop{}, err
			}
			continue
		}
		if st.Kind != detcore.StopExited && st.Kind != detcore.StopKilled {
			l.last = st.Tid
			if l.intr.Load() {
				l.pause(Stop{Reason: ReasonInterrupt, Tid: st.Tid})
			}
		}
		return st, nil
	}
}

// next returns the first queued stop, or waits for one.
func (l *layer) next() (detcore.Stop, error) {
	if len(l.queue) > 0 {
		st := l.queue[0]
		l.queue = l.queue[1:]
		return st, nil
	}
	if l.waiting != nil {
		l.waiting.Store(l)
		defer l.waiting.CompareAndSwap(l, nil)
	}
	st, err := l.inner.Wait()
	if err == nil {
		l.running.CompareAndSwap(int64(st.Tid), 0)
		if !l.killed {
			l.note(st)
		}
	}
	return st, err
}

// note updates the thread table for a stop as the kernel reports it.
func (l *layer) note(st detcore.Stop) {
	switch st.Kind {
	case detcore.StopExited, detcore.StopKilled:
		delete(l.ths, st.Tid)
	case detcore.StopExec:
		// The thread has a new program: no debug registers, and none of
		// the old breakpoints. A non-leader took the leader's tid.
		delete(l.ths, int(st.Msg))
		l.ths[st.Tid] = &lthread{tid: st.Tid, inSyscall: true}
		l.rearmExec(st.Tid)
	case detcore.StopSeccomp, detcore.StopUntraced, detcore.StopClone, detcore.StopEvent:
		l.thread(st.Tid).inSyscall = true
	case detcore.StopSignal:
		if st.Sig != abi.SIGTRAP {
			l.thread(st.Tid).inSyscall = false
		}
	default:
		l.thread(st.Tid).inSyscall = false
	}
}

// swallow handles st if the debugger caused it, resuming the thread, and
// reports whether it did. It pauses when the Session waits for st.
func (l *layer) swallow(st detcore.Stop) bool {
	th := l.ths[st.Tid]
	if th == nil {
		return false
	}
	over, ourStep, sigStep, inSys, engineStep := th.over, th.ourStep, th.sigStep, th.inSyscall, th.engineStep
	th.over, th.ourStep, th.sigStep, th.engineStep = 0, false, false, false
	if over != 0 && (st.Kind != detcore.StopSignal || st.Sig != abi.SIGTRAP) {
		// Another stop came before the step over the breakpoint (the
		// watchdog's SIGSTOP, a signal of the guest's): if the thread
		// has not moved, the step is made when it next runs, or it
		// would meet the int3 again and report the hit twice.
		var r abi.Regs
		if l.inner.GetRegs(th.tid, &r) == nil && r.Rip == over {
			th.needOver = over
		}
	}
	switch {
	case st.Kind == detcore.StopSyscallExit && th.exitForResult:
		// The exit the layer asked for (resume): the call's result.
		th.exitForResult = false
		var r abi.Regs
		if l.inner.GetRegs(th.tid, &r) == nil {
			l.results[th.resultOf-1] = int64(r.Rax)
		}
		th.resultOf = 0
		if err := l.resume(th, 0); err != nil {
			return l.failed(err)
		}
		return true
	case st.Kind == detcore.StopSyscallExit:
		// A syscall instruction of the stepped thread completed.
		if l.count(th) {
			l.pauseStep(th, Stop{Reason: ReasonStep, Tid: th.tid})
		}
		return false
	case st.Kind == detcore.StopSignal && st.Sig == abi.SIGSEGV && (ourStep || over != 0):
		th.emuEnd = l.emulatedEnd(th.tid)
		return false
	case st.Kind != detcore.StopSignal || st.Sig != abi.SIGTRAP:
		return false
	}
	th.inSyscall = false
	watching := l.watchMask()
	if over == 0 && !ourStep && !engineStep && len(l.bps) == 0 && watching == 0 {
		return false
	}
	f := trapFacts{
		dr6: l.takeDR6(th.tid), watching: watching, ourStep: ourStep || engineStep,
		stepOver: over != 0, overInt3: l.bps[over] == int3, inSyscall: inSys || sigStep,
	}
	var regs abi.Regs
	look := func() (afterSyscall, atBreak bool) {
		if l.inner.GetRegs(th.tid, &regs) != nil {
			return false, false
		}
		var b [2]byte
		if l.inner.ReadMem(th.tid, regs.Rip-2, b[:]) != nil && l.inner.ReadMem(th.tid, regs.Rip-1, b[1:]) != nil {
			return false, false
		}
		_, isBp := l.bps[regs.Rip-1]
		return b == [2]byte{0x0f, 0x05}, isBp && b[1] == int3
	}
	c := classifyTrap(f, look)
	if !c.ours() {
		return false
	}
	if c.step && (ourStep || over != 0) {
		if err := th.tf.Stepped(l.inner, th.tid); err != nil {
			return l.failed(err)
		}
	}
	l.activity.Add(1)
	if c.brk {
		regs.Rip--
		if err := l.inner.SetRegs(th.tid, &regs); err != nil {
			return l.failed(err)
		}
		th.needOver = regs.Rip
	}
	done := c.step && l.count(th)
	counts := c.watch >= 0 && c.watch == l.goal.countSlot || c.brk && l.goal.countAt != 0 && regs.Rip == l.goal.countAt
	switch {
	case th.leave != nil && c.step && ourStep:
		l.stepOutStub(th)
	case counts && l.goal.countTid != 0 && l.intr.Load():
		// A count of arrivals (a trap each, millions in a long loop)
		// ends at an Interrupt too.
		l.pauseStep(th, Stop{Reason: ReasonInterrupt, Tid: th.tid})
	case c.watch >= 0 && l.goal.countTid != 0 && c.watch == l.goal.countSlot:
		// An arrival the Session counts (Session.countHits).
		if th.tid == l.goal.countTid {
			if l.goal.counted++; l.goal.counted >= l.goal.countN {
				l.pauseOut(th, Stop{Reason: ReasonWatchpoint, Tid: th.tid, Addr: l.wps[c.watch].addr, Watch: c.watch})
			}
		}
	case c.brk && l.goal.countAt != 0 && regs.Rip == l.goal.countAt:
		// An arrival the Session counts at an int3
		// (Session.countBreakHits).
		if th.tid == l.goal.countTid {
			if l.goal.counted++; l.goal.counted >= l.goal.countN {
				l.pause(Stop{Reason: ReasonWatchpoint, Tid: th.tid, Addr: regs.Rip, Watch: -1})
			}
		}
	case c.watch >= 0 && l.goal.breaks:
		w := l.wps[c.watch]
		l.pauseOut(th, Stop{Reason: ReasonWatchpoint, Tid: th.tid, Addr: w.addr, Watch: c.watch})
	case c.brk && l.goal.breaks:
		l.pause(Stop{Reason: ReasonBreakpoint, Tid: th.tid, Addr: regs.Rip})
	case done:
		l.pauseStep(th, Stop{Reason: ReasonStep, Tid: th.tid})
	case l.intr.Load():
		l.pauseStep(th, Stop{Reason: ReasonInterrupt, Tid: th.tid})
	}
	if l.killed {
		return true
	}
	if engineStep && c.step {
		// The engine's step is done (over the breakpoint, if it
		// executed its int3 first): the engine takes the trap.
		return false
	}
	if err := l.resume(th, 0); err != nil {
		return l.failed(err)
	}
	return true
}

// failed records a failure to handle a swallowed stop: a thread that is
// gone will report its exit; anything else ends the run.
func (l *layer) failed(err error) bool {
	if !errors.Is(err, detcore.ErrGone) {
		l.err = err
	}
	return true
}

// count counts an instruction executed by th, and reports whether the
// step the Session asked for is complete.
func (l *layer) count(th *lthread) bool {
	if l.goal.stepTid != th.tid {
		return false
	}
	if l.goal.stepAt != 0 || l.goal.trace != nil || l.inStub != nil {
		var r abi.Regs
		if l.inner.GetRegs(th.tid, &r) != nil {
			r.Rip = 0
		}
		if l.inStub != nil && r.Rip != 0 && l.inStub(th.tid, r.Rip) {
			// A patched site's jump to its stub, or a step in it: the
			// step goes on to the site's next instruction, so that the
			// site steps as one (and a position never lies in the stub).
			return false
		}
		l.goal.steps++
		if l.goal.trace != nil {
			*l.goal.trace = append(*l.goal.trace, r.Rip)
		}
		if l.goal.stepAt != 0 && r.Rip == l.goal.stepAt {
			return true
		}
	} else {
		l.goal.steps++
	}
	return l.goal.steps >= l.goal.stepN
}

// pauseStep pauses with th at an instruction boundary that is not a
// breakpoint hit. If a breakpoint is there, th steps over it when it
// runs again rather than reporting it: the Session has seen th there.
func (l *layer) pauseStep(th *lthread, st Stop) {
	var r abi.Regs
	if l.inner.GetRegs(th.tid, &r) == nil && l.armedAt(th.tid, r.Rip) {
		th.needOver = r.Rip
	}
	l.pause(st)
}

// Resume implements detcore.Tracer.Resume.
func (l *layer) Resume(tid int, mode detcore.ResumeMode, sig int) error {
	if l.killed {
		// The thread dies before it does anything more: a syscall it is
		// stopped at (a write of the recorded output) is skipped, not made
		// a second time by the next run.
		for _, t := range l.list() {
			if t.Tid == tid {
				_ = l.inner.Signal(t.Pid, tid, abi.SIGKILL, nil)
			}
		}
		return l.inner.Resume(tid, mode, sig)
	}
	th := l.thread(tid)
	th.intent = mode
	if end := th.emuEnd; end != 0 {
		th.emuEnd = 0
		var r abi.Regs
		if sig == 0 && l.inner.GetRegs(tid, &r) == nil && r.Rip == end && l.count(th) {
			// The engine answered the instruction the step faulted on:
			// it is executed, as a step over it is natively.
			l.pauseStep(th, Stop{Reason: ReasonStep, Tid: tid})
			if l.killed {
				return l.inner.Resume(tid, mode, sig)
			}
		}
	}
	if sig != 0 && l.goal.breaks && l.signals.Load() {
		// The engine delivers a signal, as the recording did: the
		// debugger sees it first, as it would live.
		l.pause(Stop{Reason: ReasonSignal, Tid: tid, Sig: sig})
		if l.killed {
			return l.inner.Resume(tid, mode, sig)
		}
	}
	return l.resume(th, sig)
}

// resume restarts th as the engine last asked: first over the breakpoint
// it stopped at, and with a step if the Session is stepping it.
func (l *layer) resume(th *lthread, sig int) error {
	th.engineStep = th.intent == detcore.ResumeStep || th.intent == detcore.ResumeCountStep
	if th.drGen != l.wpGen {
		// Errors leave drGen behind, to try again: a new thread may not
		// be in its first stop yet.
		_ = l.applyDR(th)
	}
	if addr := th.remakeOver; addr != 0 {
		th.remakeOver = 0
		return l.stepOver(th, addr, sig, false)
	}
	if addr := th.needOver; addr != 0 {
		th.needOver = 0
		var r abi.Regs
		if th.intent != detcore.ResumeSyscall && l.inner.GetRegs(th.tid, &r) == nil && r.Rip == addr && l.armedAt(th.tid, addr) {
			return l.stepOver(th, addr, sig, true)
		}
	}
	mode := th.intent
	runs := mode == detcore.ResumeCont || mode == detcore.ResumeCount
	switch {
	case runs && (l.goal.stepTid == th.tid || th.leave != nil):
		mode = stepMode(mode)
		th.ourStep, th.sigStep = true, sig != 0
		th.resultOf = 0
		th.tf.Stepping(l.inner, th.tid, nil, nil)
	case runs && th.resultOf != 0:
		// Through the call to its exit, for its result (see onEvent).
		mode = detcore.ResumeSyscall
		th.exitForResult = true
	default:
		th.resultOf = 0
	}
	if mode != detcore.ResumeStep && mode != detcore.ResumeCountStep {
		if err := th.tf.Free(l.inner, th.tid); err != nil {
			return err
		}
	}
	if mode == detcore.ResumeCont || mode == detcore.ResumeCount {
		l.running.Store(int64(th.tid))
	}
	return l.inner.Resume(th.tid, mode, sig)
}

// stepMode is the single-step that goes with resume mode m: one that
// stops at the calls a counting thread stops at (detcore/count.go), so
// that stepping through them takes the turns the recording took.
func stepMode(m detcore.ResumeMode) detcore.ResumeMode {
	if m == detcore.ResumeCount || m == detcore.ResumeCountStep {
		return detcore.ResumeCountStep
	}
	return detcore.ResumeStep
}

// stepOver runs th over the breakpoint at addr: the original byte goes
// back (unless restore is false: it is there), th executes one
// instruction, the int3 returns. th's stop goes to the queue (after any
// other thread's that came first), marked so that swallow knows what it
// ends. A counting thread whose instruction is a syscall it must stop at
// first stops before it runs: the int3 waits until the call has run.
func (l *layer) stepOver(th *lthread, addr uint64, sig int, restore bool) error {
	if restore {
		if err := l.inner.WriteMem(th.tid, addr, []byte{l.bps[addr]}); err != nil {
			return err
		}
	}
	th.tf.Stepping(l.inner, th.tid, nil, nil)
	if err := l.inner.Resume(th.tid, stepMode(th.intent), sig); err != nil {
		_ = l.inner.WriteMem(th.tid, addr, []byte{int3})
		return err
	}
	for {
		st, err := l.inner.Wait()
		if err != nil {
			return err
		}
		l.note(st)
		l.queue = append(l.queue, st)
		if st.Tid == th.tid && st.Kind == detcore.StopUntraced {
			th.remakeOver = addr
			return nil
		}
		if st.Tid == th.tid || (st.Kind == detcore.StopExec && int(st.Msg) == th.tid) {
			break
		}
	}
	l.rearm(addr, th.tid)
	th.over = addr
	return nil
}

// Preempt implements detcore.Tracer.Preempt. The watchdog sees no stop
// while the run is paused, stepping, or busy with swallowed stops, and
// must not take those for a thread that spins: it is refused then.
func (l *layer) Preempt(tid int) error {
	a := l.activity.Load()
	if l.paused.Load() || l.stepping.Load() || l.seen.Swap(a) != a {
		return errDebugging
	}
	return l.enginePreempt(tid)
}

var errDebugging = errors.New("the debugger is using the thread")

// Poll implements detcore.Tracer.Poll. In a run being killed every
// descriptor is ready, so that no thread waits on one: each runs and
// meets its death, which the engine then sees.
func (l *layer) Poll(ws []detcore.FdWait, timeout time.Duration) ([]bool, error) {
	if l.killed {
		ready := make([]bool, len(ws))
		for i := range ready {
			ready[i] = true
		}
		return ready, nil
	}
	return l.inner.Poll(ws, timeout)
}

// Signals implements detcore.Tracer.Signals. In a run being killed every
// thread has SIGKILL pending, which ends any wait in the engine.
func (l *layer) Signals(tid int) (thread, shared, blocked uint64, err error) {
	if l.killed {
		return 1 << (abi.SIGKILL - 1), 0, 0, nil
	}
	thread, shared, blocked, err = l.inner.Signals(tid)
	return thread &^ l.kickOnItsWay(tid), shared, blocked, err
}

// WaitSignals implements detcore.WaitSignalsTracer, as Signals does.
func (l *layer) WaitSignals(tid int, drop uint64) (thread, shared, blocked uint64, err error) {
	if l.killed {
		return 1 << (abi.SIGKILL - 1), 0, 0, nil
	}
	drop |= l.kickOnItsWay(tid)
	if wt, ok := l.inner.(detcore.WaitSignalsTracer); ok {
		return wt.WaitSignals(tid, drop)
	}
	thread, shared, blocked, err = l.inner.Signals(tid)
	return thread &^ drop, shared, blocked, err
}

// Caught implements detcore.Tracer.Caught.
func (l *layer) Caught(tid int) (uint64, uint64, error) { return l.inner.Caught(tid) }

// OnExec implements detcore.Tracer.OnExec; in a run being killed its
// failure does not stop the engine from seeing the threads end.
func (l *layer) OnExec(tid int, atRandom [16]byte, filtered bool) (detcore.Exec, error) {
	x, err := l.inner.OnExec(tid, atRandom, filtered)
	if l.killed {
		return x, nil
	}
	return x, err
}

// The rest of detcore.Tracer passes through.

func (l *layer) GetRegs(tid int, r *abi.Regs) error  { return l.inner.GetRegs(tid, r) }
func (l *layer) SetRegs(tid int, r *abi.Regs) error  { return l.inner.SetRegs(tid, r) }
func (l *layer) FdKind(tid, fd int) detcore.FdKind   { return l.inner.FdKind(tid, fd) }
func (l *layer) PipeSpace(tid, fd int) int           { return l.inner.PipeSpace(tid, fd) }
func (l *layer) ProcStat(pid int) (byte, int, error) { return l.inner.ProcStat(pid) }
func (l *layer) GuestTid(tid int) (int, error)       { return l.inner.GuestTid(tid) }
func (l *layer) KillAll()                            { l.inner.KillAll() }
func (l *layer) AddTimerfdTicks(tid, fd int, n uint64) error {
	return l.inner.AddTimerfdTicks(tid, fd, n)
}
func (l *layer) Signal(pid, tid, sig int, info []byte) error {
	return l.inner.Signal(pid, tid, sig, info)
}
func (l *layer) SharedMapping(tid int, addr uint64) (dev, ino, off uint64, ok bool) {
	return l.inner.SharedMapping(tid, addr)
}
