package detcore

import (
	"hash/fnv"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Call is an intercepted system call as a Journal sees it.
type Call struct {
	Tid  int // host thread id
	Vtid int // the thread's id in the guest
	Nr   int
	Args [6]uint64
	// Result is the raw return value, at Exit.
	Result int64
	// Preempted, at Exit: the call was interrupted, before it did
	// anything, by the watchdog's stop (Result is a restart code and no
	// signal of the guest's is pending): the kernel makes it again once
	// the stop is taken. Spin says the stop was for a spin examination.
	Preempted, Spin bool
	// Written, at Enter, is a digest of the bytes a write, pwrite64,
	// writev, pwritev or pwritev2 writes (HasWritten), so that a replay
	// that prints other bytes than its recording is caught.
	Written    uint32
	HasWritten bool
}

// MemWrite is guest memory an emulated call writes.
type MemWrite struct {
	Addr uint64
	Data []byte
}

// Outcome is a Journal's decision about a call the engine is about to let
// run natively.
type Outcome struct {
	// Emulate skips the call: Mem is written and the call returns Result.
	Emulate bool
	Result  int64
	// Mem is written instead of running the call (Emulate), or once it
	// has returned (Exit).
	Mem []MemWrite
	// Exit runs the call natively and calls Journal.Exit at its exit.
	Exit bool
	// Args and Nr, with Exit, replace the call's arguments and number for
	// the native run; the guest's registers are restored at its exit.
	Args *[6]uint64
	Nr   int
	// Interrupt, with Exit, runs in place of the call a wait that only a
	// signal ends (a futex wait on a word of the thread's stack): the
	// kernel interrupts it as it interrupted the recorded call, and
	// restarts the original call if the signal's handler asks. Exit
	// should force the recorded restart code.
	Interrupt bool
	// Raise, with Interrupt, is the signal the kernel sent the caller's
	// process group as the recorded call ran (SIGTTOU or SIGTTIN from a
	// terminal), which interrupted it: the engine sends it first.
	Raise int
	// Stack, with Exit and Args, is written below the red zone of the
	// thread's stack for the native run (a path the call opens), and an
	// argument StackArg becomes its address. The bytes it covered are put
	// back at the call's exit.
	Stack []byte
	// Preempt, with Exit, has the watchdog stop the thread as the call
	// returns (a recorded Call.Preempted, with Spin as it said): run in
	// place of the call, one that does nothing, whose result the journal
	// forces to the restart code, makes the kernel make the call again
	// after the stop, as in the recording.
	Preempt, PreemptSpin bool
	// GroupSignals, with Emulate, are signals the kernel sent guest
	// process groups as the recorded call ran (a ^C written to a pty
	// master): the engine sends them once the call is skipped.
	GroupSignals []GroupSignal
	// Signal, with Exit, is a signal the kernel sent the caller as the
	// recorded call returned, which replay's does not (SIGPIPE with part
	// of a write to a pipe whose reader had gone): the engine sends it at
	// the exit.
	Signal int
}

// GroupSignal is signal Sig sent to each process of the process group
// whose leader has guest pid Group.
type GroupSignal struct{ Group, Sig int }

// StackArg, in Outcome.Args, stands for the address of Outcome.Stack.
const StackArg = 0x5ac0_0000_0000_57ac

// redZone is the x86-64 ABI's red zone: the 128 bytes below the stack
// pointer that a function may use without moving it.
const redZone = 128

// A Journal records or replays what the outside world decided in a run.
// The engine calls it at fixed, deterministic points, from the Run
// goroutine; an error it returns ends the run with that error.
type Journal interface {
	// Enter is called at every intercepted syscall, before the policy.
	Enter(c *Call) error
	// Native is called when the engine is about to let an intercepted call
	// run natively (perhaps after the thread waited).
	Native(c *Call) Outcome
	// Exit is called at the exit of a call that Native asked to see; it
	// may replace the call's result (force).
	Exit(c *Call) (force bool, result int64, err error)
	// Exec is called after each successful execve, the first program's
	// included, with the thread stopped.
	Exec(tid, vtid int) error
}

// A PreemptJournal is a Journal that keeps the watchdog's preemptions,
// the points of a run no other run repeats (hermit record), or repeats
// them (replay). The engine calls it from the Run goroutine.
type PreemptJournal interface {
	Journal
	// Preempted is called as the watchdog's plain preemption of guest
	// thread vtid is handled: the thread had run ran of CPU time since
	// its last stop. It returns the CPU time the run is to take it ran
	// (a replay: the recording's), or an error to end the run with.
	Preempted(vtid int, ran time.Duration) (time.Duration, error)
	// PreemptDue is asked as guest thread vtid is about to run: whether
	// the recording's watchdog preempted it before its next stop, and
	// after how much of its CPU time.
	PreemptDue(vtid int) (time.Duration, bool)
}

// A ProcessJournal is a Journal that also hears of every thread and
// process the guest creates and of the end of every process, with guest
// ids, so that it can log the process tree (hermit record does, for
// hermit trace ps). The engine calls it where it updates its own tables,
// from the Run goroutine: it adds no stop and changes nothing the engine
// does. A Journal without these methods (replay) is never asked.
type ProcessJournal interface {
	Journal
	// Clone is called when guest thread vtid has created child (a guest
	// tid; for a new process also its pid) with clone flags: CLONE_THREAD
	// for a thread, CLONE_VM|CLONE_VFORK added for vfork.
	Clone(vtid, child int, flags uint64)
	// ProcessExit is called when the last thread of guest process vpid is
	// gone, with its wait status: the exit code << 8, or the signal that
	// killed it.
	ProcessExit(vpid int, status int32)
}

// ThreadInfo describes a live guest thread.
type ThreadInfo struct {
	Tid, Vtid int // host and guest thread ids
	Pid, Vpid int // host and guest process ids
	// State is "running", "ready", "blocked in SYSCALL", "spinning until
	// memory it reads changes" (its pc is the loop's head), "new" or
	// "exiting".
	State string
}

// Clock is the guest's logical time in nanoseconds since the run began
// (every clock the guest reads derives from it). Call it only from the
// Run goroutine.
func (e *Engine) Clock() int64 { return e.clock }

// Threads lists the live guest threads in creation order. Call it only
// from the Run goroutine (a Tracer method or a Journal hook).
func (e *Engine) Threads() []ThreadInfo {
	out := make([]ThreadInfo, 0, len(e.order))
	for _, t := range e.order {
		st := "ready"
		switch t.state {
		case tsNew:
			st = "new"
		case tsRunning:
			st = "running"
		case tsBlocked:
			st = "blocked in " + abi.SyscallName(t.nr)
			if t.block.kind == bkSpin {
				st = "spinning until memory it reads changes"
			}
		case tsDying, tsZombie:
			st = "exiting"
		}
		out = append(out, ThreadInfo{Tid: t.tid, Vtid: t.vtid, Pid: t.proc.pid, Vpid: t.proc.vpid, State: st})
	}
	return out
}

// call fills the journal's view of t's pending syscall.
func (t *thread) call() *Call {
	r := &t.regs
	return &Call{Tid: t.tid, Vtid: t.vtid, Nr: t.nr, Args: [6]uint64{r.Rdi, r.Rsi, r.Rdx, r.R10, r.R8, r.R9}}
}

// journalNative asks the journal about t's call, which is about to run
// natively, and applies its decision.
func (e *Engine) journalNative(t *thread) {
	o := e.cfg.Journal.Native(t.call())
	switch {
	case o.Emulate:
		for _, m := range o.Mem {
			if e.t.WriteMem(t.tid, m.Addr, m.Data) != nil {
				o.Result = -abi.EFAULT
				break
			}
		}
		// Skipped with the journal's result, here rather than by
		// t.emulate: the engine's act and ret stay its own (the schedule
		// digest hashes them at every turn, and a run without a journal,
		// or with another, never has this call emulated).
		saved := t.regs
		t.regs.OrigRax = ^uint64(0)
		t.regs.Rax = uint64(o.Result)
		if e.t.SetRegs(t.tid, &t.regs) != nil {
			t.regs = saved
			return
		}
		for _, g := range o.GroupSignals {
			if sel, ok := e.guestGroupSel(g.Group); ok {
				e.signalSel(sel, g.Sig)
			}
		}
		if o.Result == -abi.EPIPE && sendsSIGPIPE(t.nr, &t.regs) {
			// The kernel sends the writer SIGPIPE with EPIPE: the
			// recorded call ran, and its handler's turns were there.
			e.raiseAsKernel(t, abi.SIGPIPE)
		}
		// Nor does it enter a fast descriptor (fastio.go): the journal
		// answers its calls.
		t.fast = nil
		if t.inPart {
			// A part of a write made in parts (a pty's, in replay):
			// partEnd sees the journal's result at the exit and makes
			// the call again for the rest, as the recording did.
			break
		}
		if t.act == actExitStop {
			t.act = actCont
		}
		// A skipped call has no exit stop: what the engine meant to do
		// there would come at the next call's exit instead (a failed
		// mkdir's afterJournal, at the exit of the unlink after it,
		// asked the host about the directory, which the recording had
		// not). Only a change to the files that failed is skipped with
		// one, and that does nothing after a failure.
		t.onExit, t.afterJournal = nil, nil
	case o.Exit:
		t.act = actExitStop
		t.journalExit = true
		t.exitMem = o.Mem
		t.exitSig = o.Signal
		if o.Preempt {
			e.preempt(t.tid, o.PreemptSpin)
		}
		if o.Interrupt {
			e.raiseForGroup(t, o.Raise)
			o.Nr, o.Args = e.signalWait(t)
			if o.Args == nil {
				break
			}
		}
		if o.Args != nil {
			saved := t.regs
			args := *o.Args
			if len(o.Stack) > 0 {
				e.onStack(t, o.Stack, &args)
			}
			t.regs.SetArgs(args)
			if o.Nr != 0 {
				t.regs.OrigRax = uint64(o.Nr)
			}
			if e.t.SetRegs(t.tid, &t.regs) != nil {
				t.regs = saved
				return
			}
			t.savedArgs = &saved
		}
	}
}

// onStack writes data below the red zone of t's stack, for its call's
// native run, and puts its address in the arguments that are StackArg;
// the bytes it covered are written back at the exit. (If it cannot, the
// call sees StackArg, an address the kernel fails with EFAULT.)
func (e *Engine) onStack(t *thread, data []byte, args *[6]uint64) {
	addr := (t.regs.Rsp - redZone - uint64(len(data))) &^ 15
	old := make([]byte, len(data))
	if e.t.ReadMem(t.tid, addr, old) != nil || e.t.WriteMem(t.tid, addr, data) != nil {
		return
	}
	for i, a := range args {
		if a == StackArg {
			args[i] = addr
		}
	}
	t.exitMem = append([]MemWrite{{Addr: addr, Data: old}}, t.exitMem...)
}

// journalExit reports the exit of t's call to the journal.
func (e *Engine) journalExit(t *thread) error {
	t.journalExit = false
	c := t.call()
	c.Result = int64(t.regs.Rax)
	if preemptedResult(c.Result) {
		c.Spin, c.Preempted = e.watchdogStop(t.tid)
		if c.Preempted {
			own, shared, _, err := e.signals(t.tid)
			c.Preempted = err == nil && own|shared == 0
		}
	}
	if saved := t.savedArgs; saved != nil {
		t.savedArgs = nil
		saved.Rax = t.regs.Rax
		t.regs = *saved
		c.Args = t.call().Args
		if err := e.t.SetRegs(t.tid, &t.regs); err != nil {
			return e.gone(t, err)
		}
	}
	force, ret, err := e.cfg.Journal.Exit(c)
	if err != nil {
		return err
	}
	for _, m := range t.exitMem {
		if e.t.WriteMem(t.tid, m.Addr, m.Data) != nil {
			break
		}
	}
	t.exitMem = nil
	if force && ret != c.Result {
		t.regs.Rax = uint64(ret)
		if err := e.t.SetRegs(t.tid, &t.regs); err != nil {
			return e.gone(t, err)
		}
	}
	if sig := t.exitSig; sig != 0 {
		t.exitSig = 0
		e.raiseAsKernel(t, sig)
	}
	return nil
}

// raiseAsKernel sends t the signal sig that the kernel sent it as a
// recorded call returned (SIGPIPE from a write to a pipe whose reader had
// gone), which replay's call does not send. The kernel's comes from the
// caller itself (si_code SI_USER, si_pid its own pid); hermit's, from
// outside, is SI_TKILL from pid 0: fixKernelSiginfo makes it the kernel's
// as it is delivered, for a handler that reads it.
func (e *Engine) raiseAsKernel(t *thread, sig int) {
	e.sendAs(t, sig, siUser)
}

// sendAs sends t signal sig, to be delivered with si_code code (siUser:
// from t's process; siKernel: from the kernel, no sender).
func (e *Engine) sendAs(t *thread, sig int, code int32) {
	if e.signal(t.proc.pid, t.tid, sig, nil) == nil {
		t.kernelSig, t.kernelCode = sig, code
	}
}

// fixKernelSiginfo gives signal sig, at t's signal-delivery-stop, the
// siginfo the kernel gives it, if raiseAsKernel sent it.
func (e *Engine) fixKernelSiginfo(t *thread, sig int) {
	if t.kernelSig == 0 || t.kernelSig != sig {
		return
	}
	t.kernelSig = 0
	st, ok := e.t.(SiginfoTracer)
	if !ok {
		return
	}
	info, err := st.Siginfo(t.tid)
	if err != nil || len(info) < siPidEnd || int32(le32(info[8:])) != siTkill {
		return
	}
	putLE32(info[8:], uint32(t.kernelCode))
	pid := uint32(t.proc.vpid)
	if t.kernelCode == siKernel {
		pid = 0
	}
	putLE32(info[16:], pid)
	putLE32(info[20:], 0) // si_uid
	_ = st.SetSiginfo(t.tid, info)
}

// siginfo_t's si_code values SI_USER and SI_TKILL, and the end of si_pid.
const (
	siUser   = 0
	siTkill  = -6
	siPidEnd = 20
)

// journalInterrupted tells the journal, at the watchdog's stop of t, of
// a call t made natively, whose exit the journal did not ask to see, if
// the stop interrupted it before it did anything: the kernel makes the
// call again once the stop is taken, a second entry that replay must
// meet too, so it is kept as journalExit keeps a call it sees (a stop
// sent as t ran, which came only once t had entered a splice from a
// pipe into a socket: the splice made again diverged from replay's).
func (e *Engine) journalInterrupted(t *thread, spin bool) error {
	at := t.nativeAt
	t.nativeAt = 0
	if e.cfg.Journal == nil || at == 0 {
		return nil
	}
	var r abi.Regs
	if e.t.GetRegs(t.tid, &r) != nil || r.Rip != at || int64(r.OrigRax) != int64(t.nativeNr) || !preemptedResult(int64(r.Rax)) {
		return nil
	}
	if own, shared, _, err := e.signals(t.tid); err != nil || own|shared != 0 {
		return nil
	}
	c := t.call()
	c.Nr, c.Result, c.Preempted, c.Spin = t.nativeNr, int64(r.Rax), true, spin
	_, _, err := e.cfg.Journal.Exit(c)
	return err
}

// preemptedResult reports whether res is a restart code that a stop
// leaves in a call it interrupted (the kernel makes the call again).
func preemptedResult(res int64) bool {
	return res <= -abi.ERESTARTSYS && res >= -abi.ERESTARTNOHAND
}

// signalWait returns a call that waits for a signal in place of t's call,
// as the kernel would have: with the signal mask the call installs (ppoll,
// pselect6, epoll_pwait), rt_sigsuspend with that mask; otherwise a futex
// wait on a word of the thread's stack, which only a signal ends.
func (e *Engine) signalWait(t *thread) (int, *[6]uint64) {
	r := &t.regs
	if ptr := maskPointer(e, t); ptr != 0 {
		return abi.SYS_RT_SIGSUSPEND, &[6]uint64{ptr, 8}
	}
	addr := r.Rsp &^ 3
	val, ok := e.readU32(t, addr)
	if !ok {
		return 0, nil
	}
	return abi.SYS_FUTEX, &[6]uint64{addr, abi.FUTEX_WAIT | abi.FUTEX_PRIVATE_FLAG, uint64(val)}
}

// msgNosignal is MSG_NOSIGNAL: a send that fails with EPIPE raises no
// SIGPIPE.
const msgNosignal = 0x4000

// sendsSIGPIPE reports whether call nr, with registers r, raises SIGPIPE
// in its caller when it fails with EPIPE (a pipe without readers, a
// stream socket shut down for writing): a write to one, a send without
// MSG_NOSIGNAL, or a splice into one.
func sendsSIGPIPE(nr int, r *abi.Regs) bool {
	switch nr {
	case abi.SYS_WRITE, abi.SYS_WRITEV, abi.SYS_SPLICE, abi.SYS_VMSPLICE, abi.SYS_TEE, abi.SYS_SENDFILE:
		return true
	case abi.SYS_SENDTO, abi.SYS_SENDMMSG:
		return r.R10&msgNosignal == 0
	case abi.SYS_SENDMSG:
		return r.Rdx&msgNosignal == 0
	}
	return false
}

// writtenMax bounds the bytes of a call that written reads.
const writtenMax = 64 << 10

// written sets c.Written to a digest of the bytes c, a call that writes
// from guest memory, writes: the first writtenMax of them and their
// count. Memory it cannot read counts as no bytes.
func (e *Engine) written(t *thread, c *Call) {
	var bufs [][2]uint64 // address, length
	switch c.Nr {
	case abi.SYS_WRITE, abi.SYS_PWRITE64:
		bufs = [][2]uint64{{c.Args[1], c.Args[2]}}
	case abi.SYS_WRITEV, abi.SYS_PWRITEV, abi.SYS_PWRITEV2:
		n := min(c.Args[2], uioMaxiov)
		iov := make([]byte, 16*n)
		if e.t.ReadMem(t.tid, c.Args[1], iov) == nil {
			for i := range n {
				bufs = append(bufs, [2]uint64{le64(iov[16*i:]), le64(iov[16*i+8:])})
			}
		}
	default:
		return
	}
	var total uint64
	for _, b := range bufs {
		total += b[1]
	}
	h := fnv.New32a()
	buf := make([]byte, min(total, writtenMax)) // what is left of it
	for _, b := range bufs {
		if n := min(b[1], uint64(len(buf))); n > 0 {
			if e.t.ReadMem(t.tid, b[0], buf[:n]) == nil {
				h.Write(buf[:n])
			}
			buf = buf[n:]
		}
	}
	var n [8]byte
	putLE64(n[:], total)
	h.Write(n[:])
	c.Written, c.HasWritten = h.Sum32(), true
}

// OutputTracer is a Tracer that keeps what a call that ran natively wrote
// for the engine to rewrite (a recording's), or gives it back (a
// replay's): a stat that runs because the tracer cannot follow its path
// (procfs) tells the host's inode, which the engine numbers.
type OutputTracer interface {
	// CallOutput reads into b what thread tid's call wrote at addr.
	CallOutput(tid int, addr uint64, b []byte) error
}

// callOutput reads into b what t's call, which ran natively, wrote at
// addr, through the tracer's OutputTracer where it has one.
func (e *Engine) callOutput(t *thread, addr uint64, b []byte) error {
	if ot, ok := e.t.(OutputTracer); ok && !e.cfg.OldCallOutput {
		return ot.CallOutput(t.tid, addr, b)
	}
	return e.t.ReadMem(t.tid, addr, b)
}
