package detcore

import (
	"fmt"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// handleSignal handles a signal-delivery-stop of t: the watchdog's own
// preemption, an rdtsc trap, or a signal to deliver.
func (e *Engine) handleSignal(t *thread, st Stop) error {
	if own, spin := e.ownStop(st, true); own {
		// Our own watchdog preemption: an examination for a spin, or a
		// plain preemption: suppress it and reschedule. It may have
		// merged with the stop for a kernel wait, which comes first.
		if int(e.kwaitTid.Load()) == t.tid {
			return e.kernelWaitStop(t)
		}
		if err := e.journalInterrupted(t, spin); err != nil {
			return err
		}
		if spin && e.running == t {
			return e.examineSpin(t, false)
		}
		// A stop sent for an examination that came only once the
		// thread ran again stopped it as it started.
		ran := time.Duration(e.plainRan.Load())
		if spin {
			ran = 0
		}
		// And before the stops of signals from outside it deferred.
		ran, t.deferRan = ran+t.deferRan, 0
		if pj, ok := e.cfg.Journal.(PreemptJournal); ok {
			// A recording keeps it; a replay checks that its recording
			// has it here (it made it, preemptDue, or diverged), and
			// takes the time the recording's thread ran.
			var err error
			if ran, err = pj.Preempted(t.vtid, ran); err != nil {
				return err
			}
		}
		given, err := e.giveDeferred(t)
		if err != nil {
			return err
		}
		if sp, ok := e.cfg.Journal.(OutsideSignalPlayer); given || ok && e.giveSignal(t, sp) {
			// Where the recording's thread got a signal from outside,
			// not a preemption: it runs on, and gets the signal.
			return e.resumeThread(t, t.contMode(), 0)
		}
		e.result.Stats.Preemptions++
		e.result.Stats.Nondet++
		if e.preemptDue.Load() == 0 {
			e.warnPreempted(t)
		}
		if done, err := e.outOfCode(t); done {
			return err
		}
		if e.cfg.Debug != nil {
			var at abi.Regs
			_ = e.t.GetRegs(t.tid, &at)
			e.cfg.Debug("preempted tid=%d at %#x", t.tid, at.Rip)
		}
		e.park(t)
		e.endTurn(t) // its turn ends here
		// It computed that long without a call: natively, that much time
		// passed, so virtual time moves on by it (charged to it), and a
		// sleep or a timer another thread waits for comes due as it
		// would have: Go's sysmon, which preempts a goroutine that loops
		// without calls once it has run for 10 ms, or CPython's thread
		// that asks a computing one to let the GIL go after 5 ms.
		t.charge(int64(ran))
		e.clock += int64(ran)
		if e.countWaiting() == 1 {
			// Only the spinner could run: what it waits for is a sleep or
			// a timer, so virtual time moves on to it, as when every
			// thread waits. The spinner computed all that time: it is
			// its CPU time (openssl speed divided by a CPU time of 0).
			if d, ok := e.nextDeadline(); ok && d > e.clock {
				t.charge(d - e.clock)
				e.clock = d
			}
		}
		return nil
	}
	if st.Sig == abi.SIGSTOP && int(e.kwaitTid.Load()) == t.tid {
		return e.kernelWaitStop(t)
	}
	if st.Sig == abi.SIGTRAP {
		if ours, err := e.spinTrapHit(t); ours {
			return err
		}
	}
	if st.Sig == abi.SIGSYS {
		if ok, err := e.dispatched(t); ok {
			return err
		}
	}
	e.fixKernelSiginfo(t, st.Sig)
	if deferred, err := e.outsideSignal(t, st.Sig); err != nil {
		return err
	} else if deferred {
		// Given at t's next call (signalAtCall): it runs on.
		if err := e.resumeLooked(t, t.contMode(), 0); err != nil {
			return e.gone(t, err)
		}
		return nil
	}
	if t.state == tsDying || (e.running != t && t.pt == nil) {
		return e.deliver(t, st.Sig)
	}
	if st.Sig == abi.SIGSYS && e.foreignSyscall(t) {
		return e.deliver(t, 0)
	}
	if st.Sig == abi.SIGSEGV && (e.cfg.TrapTSC || e.cfg.CPUID != nil) {
		if done, err := e.emulateInsn(t); done || err != nil {
			return err
		}
	}
	if e.running == t && !syncSignal(st.Sig) {
		// From outside: its handler runs once t is out of hermit's
		// code, whose page words it may use too.
		if done, err := e.outOfCode(t); done {
			return err
		}
	}
	e.digest.add(-1, int64(t.vtid), int64(st.Sig))
	if st.Sig == abi.SIGCHLD {
		e.hideChildTimes(t)
	}
	if e.traceSignal(t, st.Sig) {
		return nil
	}
	if e.faultAgain(t, st.Sig) {
		return nil
	}
	return e.deliver(t, st.Sig)
}

// SiginfoTracer is implemented by tracers that read and change the
// siginfo of a thread's signal-delivery stop.
type SiginfoTracer interface {
	Siginfo(tid int) ([]byte, error)
	SetSiginfo(tid int, info []byte) error
}

// siginfo_t of a SIGCHLD (x86-64): si_utime and si_stime, clock ticks.
const siChildTimes, siChildTimesEnd = 32, 48

// hideChildTimes zeroes the CPU times in the siginfo of t's SIGCHLD, as
// wait4 and waitid hide them: they are the host's measure of the child.
func (e *Engine) hideChildTimes(t *thread) {
	r, ok := e.t.(SiginfoTracer)
	if !ok {
		return
	}
	info, err := r.Siginfo(t.tid)
	if err != nil || len(info) < siChildTimesEnd || allZero(info[siChildTimes:siChildTimesEnd]) {
		return
	}
	clear(info[siChildTimes:siChildTimesEnd])
	_ = r.SetSiginfo(t.tid, info)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// foreignSyscall reports whether t's SIGSYS is hermit's filter refusing a
// 32-bit (int $0x80) or x32 system call, and if so says so, once, and
// makes the call fail with ENOSYS.
func (e *Engine) foreignSyscall(t *thread) bool {
	st, ok := e.t.(SiginfoTracer)
	if !ok {
		return false
	}
	info, err := st.Siginfo(t.tid)
	if err != nil || len(info) < 32 || int32(le32(info[8:])) != siSysSeccomp {
		return false
	}
	nr, arch := int32(le32(info[24:])), le32(info[28:])
	kind := ""
	switch {
	case arch == auditArchI386:
		kind = fmt.Sprintf("a 32-bit system call (int $0x80, i386 call %d)", nr)
	case arch == auditArchX8664 && nr&x32Bit != 0:
		kind = fmt.Sprintf("an x32 system call (%d)", nr&^x32Bit)
	default:
		return false
	}
	// The trap leaves rax as the call's number: make it the failure.
	var r abi.Regs
	if e.t.GetRegs(t.tid, &r) != nil {
		return false
	}
	r.Rax = ^uint64(abi.ENOSYS - 1) // -ENOSYS
	if e.t.SetRegs(t.tid, &r) != nil {
		return false
	}
	ip := le64(info[16:])
	sym, _ := e.t.(SpinTracer)
	e.digest.add(-7, int64(t.vtid), int64(nr))
	e.warnOnce("foreign-syscall", fmt.Sprintf("thread %d made %s at %s: hermit runs x86-64 system calls only, so it fails with ENOSYS", t.vtid, kind, where(sym, t.tid, ip)))
	return true
}

// From <linux/audit.h> and <asm-generic/siginfo.h>.
const (
	siSysSeccomp   = 1 // SYS_SECCOMP: si_code of a seccomp SIGSYS
	auditArchI386  = 0x40000003
	auditArchX8664 = 0xc000003e
	x32Bit         = 0x40000000 // __X32_SYSCALL_BIT
)

// faultAgain notices a fault that comes back at the same instruction,
// three times with no syscall between, with no handler to take it: the
// kernel ignored the signal. That happens to the init of a pid namespace
// the guest made, whose default-action fatal signals the kernel drops
// while it is traced (untraced, it would die), so it would fault forever.
// hermit kills it instead, and says so. A fault the process handles is
// never this: Go, say, turns each nil dereference into a panic that its
// caller may recover, and the loop that follows can fault again at the
// same instruction, with only the handler's rt_sigreturn (which hermit
// does not see) between.
func (e *Engine) faultAgain(t *thread, sig int) bool {
	switch sig {
	case abi.SIGSEGV, abi.SIGBUS, abi.SIGILL, abi.SIGFPE:
	default:
		t.fault = 0
		return false
	}
	var r abi.Regs
	if e.t.GetRegs(t.tid, &r) != nil {
		return false
	}
	key := r.Rip<<8 | uint64(sig)
	if t.fault != key {
		t.fault, t.faults = key, 1
		return false
	}
	if t.faults++; t.faults < 3 {
		return false
	}
	bit := uint64(1) << (sig - 1)
	_, _, blocked, err1 := e.t.Signals(t.tid)
	caught, _, err2 := e.t.Caught(t.tid)
	if err1 != nil || err2 != nil || caught&^blocked&bit != 0 {
		return false
	}
	e.warnOnce(fmt.Sprintf("fault-loop:%d", t.vtid), fmt.Sprintf("thread %d faults with signal %d at %#x again and again: "+
		"it is the init of a pid namespace, whose fatal signals the kernel ignores while hermit traces it, so hermit kills it "+
		"with SIGKILL (its parent's wait reports signal %d, as natively)", t.vtid, sig, r.Rip, sig))
	e.noteFaultDeath(t, sig)
	_ = e.signal(t.proc.pid, 0, abi.SIGKILL, nil)
	return false
}

func (e *Engine) deliver(t *thread, sig int) error {
	if err := e.resumeThread(t, t.contMode(), sig); err != nil {
		return e.gone(t, err)
	}
	return nil
}

// readTSC sets rdx:rax to the virtual time-stamp counter.
func (e *Engine) readTSC(r *abi.Regs) {
	e.clock += tscStep
	e.running.charge(tscStep)
	e.result.Stats.TSCReads++
	ns, _ := e.now(clockMonotonic)
	tsc := uint64(ns) * (TSCHz / 1_000_000_000)
	r.Rax = tsc & 0xffffffff
	r.Rdx = tsc >> 32
}

// TSCHz is the frequency of the guest's virtual time-stamp counter.
const TSCHz = 3_000_000_000

// tscStep is the logical time one rdtsc costs, so that consecutive reads
// differ.
const tscStep = 10

// emulateInsn answers an rdtsc or rdtscp that faulted because of
// PR_SET_TSC from the virtual clock, and a cpuid that faulted because of
// ARCH_SET_CPUID from Config.CPUID. It reports false if the fault was not
// one of those.
func (e *Engine) emulateInsn(t *thread) (bool, error) {
	var r abi.Regs
	if err := e.t.GetRegs(t.tid, &r); err != nil {
		return false, e.gone(t, err)
	}
	var insn [3]byte
	if e.t.ReadMem(t.tid, r.Rip, insn[:]) != nil {
		return false, nil
	}
	switch {
	case e.cfg.CPUID != nil && insn[0] == 0x0f && insn[1] == 0xa2 && t.noCPUID:
		// The guest turned cpuid off itself (ARCH_SET_CPUID): it faults
		// as it asked.
		return false, nil
	case e.cfg.CPUID != nil && insn[0] == 0x0f && insn[1] == 0xa2: // cpuid
		v := e.cfg.CPUID(uint32(r.Rax), uint32(r.Rcx))
		r.Rax, r.Rbx, r.Rcx, r.Rdx = uint64(v[0]), uint64(v[1]), uint64(v[2]), uint64(v[3])
		r.Rip += 2
		e.result.Stats.CPUIDs++
	case !e.cfg.TrapTSC:
		return false, nil
	case t.tscMode == prTSCSigsegv:
		// The guest's own PR_SET_TSC(PR_TSC_SIGSEGV): its rdtsc faults
		// as it asked. Its handler may step over it and return after
		// it, so the site is never patched (noTSCSite).
		e.noTSCSite(t, r.Rip)
		return false, nil
	case (insn[0] == 0x0f && insn[1] == 0x31 || insn == [3]byte{0x0f, 0x01, 0xf9}) && e.patchTSC(t, r.Rip):
		// Its site now jumps to a stub that reads the page: the thread
		// goes there, at the site, as it will from now on.
		return true, e.deliver(t, 0)
	case insn[0] == 0x0f && insn[1] == 0x31: // rdtsc
		e.readTSC(&r)
		r.Rip += 2
		t.tscLeft = r.Rip
	case insn == [3]byte{0x0f, 0x01, 0xf9}: // rdtscp
		e.readTSC(&r)
		r.Rcx = 0 // IA32_TSC_AUX: CPU 0
		r.Rip += 3
		t.tscLeft = r.Rip
	default:
		return false, nil
	}
	if err := e.t.SetRegs(t.tid, &r); err != nil {
		return true, e.gone(t, err)
	}
	if t.pt != nil && t.pt.sc.steps() {
		// A guest's tracer single-stepped it (gdb under hermit run):
		// the instruction is done, and the step's trap comes, as it
		// would natively; the thread ran no further.
		e.traceStop(t, stopStatus(abi.SIGTRAP, 0), 0, false)
		t.pt.trapCode = trapTrace
		return true, nil
	}
	// Every insnSlice answered instructions in a turn, the thread's
	// turn counts as a scheduling point, as an intercepted syscall does,
	// when another thread could run: a loop that reads the time-stamp
	// counter while it waits for another thread costs no examination
	// and no watchdog (spin.go), and where it stops depends on the
	// program alone.
	t.insnPoints++
	if t.insnPoints >= insnSlice && e.countWaiting()+e.countSpinning() > 0 {
		t.insnPoints = 0
		e.digest.add(-6, int64(t.vtid), int64(r.Rip))
		e.park(t)
		return true, nil
	}
	return true, e.deliver(t, 0)
}

// trapTrace is a single-step's SIGTRAP si_code (TRAP_TRACE).
const trapTrace = 2

// insnSlice is how many trapped rdtsc, rdtscp or cpuid instructions
// make one scheduling point.
const insnSlice = 32

// syncSignal reports whether sig is one the thread's own instruction
// raises where it stands (a fault, a trap).
func syncSignal(sig int) bool {
	switch sig {
	case abi.SIGSEGV, abi.SIGBUS, abi.SIGILL, abi.SIGFPE, abi.SIGTRAP, abi.SIGSYS:
		return true
	}
	return false
}

// outOfCode steps t out of hermit's code in the guest (leaveFastCode),
// and reports whether another stop ended that, which it then handled.
func (e *Engine) outOfCode(t *thread) (bool, error) {
	stop, ok, err := e.leaveFastCode(t)
	switch {
	case err != nil:
		return true, e.gone(t, err)
	case !ok:
		return true, e.handleStop(stop)
	}
	return false, nil
}
