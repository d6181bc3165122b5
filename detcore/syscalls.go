package detcore

import (
	"fmt"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// handler decides what an intercepted syscall does. It runs at the
// syscall's seccomp stop with t.regs loaded, and leaves t ready (the
// syscall runs natively or is emulated, per t.act) or blocked.
type handler func(e *Engine, t *thread)

// policy is the table of intercepted syscalls. Every other syscall runs
// natively without a stop: the seccomp filter lets it through.
var policy = map[int]handler{
	// Threads and processes. clone, fork, vfork and execve are not
	// intercepted: their ptrace events are the scheduling points.
	abi.SYS_EXIT:            sysExit,
	abi.SYS_EXIT_GROUP:      sysExit,
	abi.SYS_SET_TID_ADDRESS: sysSetTidAddress,
	abi.SYS_WAIT4:           sysWait,
	abi.SYS_WAITID:          sysWait,

	// Synchronization and scheduling.
	abi.SYS_FUTEX:           sysFutex,
	abi.SYS_SCHED_YIELD:     func(e *Engine, t *thread) { t.emulate(0) },
	abi.SYS_NANOSLEEP:       sysNanosleep,
	abi.SYS_CLOCK_NANOSLEEP: sysClockNanosleep,

	// Time: answered from the virtual clock.
	abi.SYS_CLOCK_GETTIME: sysClockGettime,
	abi.SYS_GETTIMEOFDAY:  sysGettimeofday,
	abi.SYS_TIME:          sysTime,
	abi.SYS_ADJTIMEX:      sysAdjtimex,
	abi.SYS_PRCTL:         sysPrctl,
	abi.SYS_ARCH_PRCTL:    sysArchPrctl,
	abi.SYS_SECCOMP:       sysSeccomp,
	abi.SYS_CLOCK_ADJTIME: sysAdjtimex,
	abi.SYS_CLOCK_SETTIME: sysSettime,
	abi.SYS_SETTIMEOFDAY:  sysSettime,

	// Timers, in virtual time.
	abi.SYS_ALARM:            sysAlarm,
	abi.SYS_SETITIMER:        sysSetitimer,
	abi.SYS_GETITIMER:        sysSetitimer,
	abi.SYS_TIMER_CREATE:     sysTimerCreate,
	abi.SYS_TIMER_SETTIME:    sysTimerSettime,
	abi.SYS_TIMER_GETTIME:    sysTimerGettime,
	abi.SYS_TIMER_GETOVERRUN: sysTimerGetoverrun,
	abi.SYS_TIMER_DELETE:     sysTimerDelete,
	abi.SYS_TIMERFD_CREATE:   sysTimerfdCreate,
	abi.SYS_TIMERFD_SETTIME:  sysTimerSettime,
	abi.SYS_TIMERFD_GETTIME:  sysTimerGettime,

	// Randomness and the machine's identity.
	abi.SYS_GETRANDOM:         sysGetrandom,
	abi.SYS_UNAME:             sysUname,
	abi.SYS_SETHOSTNAME:       sysSetname,
	abi.SYS_SETDOMAINNAME:     sysSetname,
	abi.SYS_SYSINFO:           sysSysinfo,
	abi.SYS_GETCPU:            sysGetcpu,
	abi.SYS_SCHED_GETAFFINITY: sysSchedGetaffinity,
	abi.SYS_SCHED_SETAFFINITY: sysSchedSetaffinity,
	abi.SYS_GETRUSAGE:         sysGetrusage,
	// rseq would let the kernel write the host CPU into guest memory
	// (glibc's sched_getcpu reads it); without it glibc asks getcpu. The
	// filter fails it (FilterErrno): this is for count mode, which sees
	// it at its entry.
	abi.SYS_RSEQ:  func(e *Engine, t *thread) { t.emulate(-abi.ENOSYS) },
	abi.SYS_TIMES: sysTimes,

	// Calls that may block on another guest thread or the outside world.
	abi.SYS_READ:         sysRead,
	abi.SYS_READV:        ioIn,
	abi.SYS_RECVFROM:     ioIn,
	abi.SYS_RECVMSG:      ioIn,
	abi.SYS_RECVMMSG:     ioIn,
	abi.SYS_ACCEPT:       ioIn,
	abi.SYS_ACCEPT4:      ioIn,
	abi.SYS_WRITE:        sysWrite,
	abi.SYS_WRITEV:       sysWrite,
	abi.SYS_SENDTO:       sysWrite,
	abi.SYS_SENDMSG:      sysWrite,
	abi.SYS_SENDMMSG:     sysSendmmsg,
	abi.SYS_POLL:         sysPoll,
	abi.SYS_PPOLL:        sysPoll,
	abi.SYS_SELECT:       sysSelect,
	abi.SYS_PSELECT6:     sysSelect,
	abi.SYS_EPOLL_WAIT:   sysEpollWait,
	abi.SYS_EPOLL_PWAIT:  sysEpollWait,
	abi.SYS_EPOLL_PWAIT2: sysEpollWait,
	abi.SYS_SPLICE:       sysSplice,
	abi.SYS_TEE:          sysSplice,
	abi.SYS_SENDFILE:     sysSplice,
	abi.SYS_VMSPLICE:     sysSplice,

	// Signals.
	abi.SYS_KILL:              sysKill,
	abi.SYS_TKILL:             sysKill,
	abi.SYS_TGKILL:            sysKill,
	abi.SYS_RT_SIGQUEUEINFO:   sysKill,
	abi.SYS_RT_TGSIGQUEUEINFO: sysKill,
	abi.SYS_PIDFD_SEND_SIGNAL: sysKill,
	abi.SYS_PAUSE:             sysPause,
	abi.SYS_RT_SIGSUSPEND:     sysPause,
	abi.SYS_RT_SIGTIMEDWAIT:   sysPause,

	abi.SYS_PERF_EVENT_OPEN: refusePerf,

	abi.SYS_SIGNALFD:  sysSignalfd,
	abi.SYS_SIGNALFD4: sysSignalfd,

	// Unsupported: the guest gets ENOSYS and the user a warning.
	abi.SYS_IO_URING_SETUP: unsupported,
	abi.SYS_FUTEX_WAITV:    unsupported,
	abi.SYS_FUTEX_WAIT:     unsupported,
	abi.SYS_FUTEX_WAKE:     unsupported,
	abi.SYS_FUTEX_REQUEUE:  unsupported,
}

// syscall handles thread t stopped at an intercepted syscall. t.policy
// says whether the engine's policy has the call (else it is intercepted
// only for the journal).
func (e *Engine) syscall(t *thread) error {
	if err := e.t.GetRegs(t.tid, &t.regs); err != nil {
		return e.gone(t, err)
	}
	t.nr = int(int32(t.regs.OrigRax))
	t.atSyscall = true
	t.fault = 0
	t.readyTurn = 0
	if e.cfg.Debug != nil {
		e.cfg.Debug("syscall tid=%d %s(%#x, %#x, %#x)", t.tid, abi.SyscallName(t.nr), t.regs.Rdi, t.regs.Rsi, t.regs.Rdx)
	}
	if runStops(t) {
		// A stop that a run has too: a wake left in the page comes
		// first (fastfutex.go).
		e.foldWakes(t.tid)
	}
	e.result.Stats.Syscalls++
	e.result.Stats.BySyscall[t.nr]++
	if j := e.cfg.Journal; j != nil {
		if fj, ok := j.(FastWriteJournal); ok {
			if err := e.checkFastWrites(t, fj); err != nil {
				return err
			}
		}
		c := t.call()
		e.written(t, c)
		if err := j.Enter(c); err != nil {
			return err
		}
	}
	h := policy[t.nr]
	t.policy = h != nil
	if h != nil {
		h(e, t)
	}
	return nil
}

func passthrough(*Engine, *thread) {}

func unsupported(e *Engine, t *thread) {
	name := abi.SyscallName(t.nr)
	e.warnOnce("unsupported:"+name, fmt.Sprintf("unsupported syscall %s: the guest gets ENOSYS", name))
	t.emulate(-abi.ENOSYS)
}

// refusePerf fails perf_event_open with EACCES, as a kernel whose
// perf_event_paranoid forbids it does: its counters, software ones
// included (context switches, page faults), count the host's events,
// which no run can repeat.
func refusePerf(e *Engine, t *thread) {
	e.warnOnce("perf_event_open", "perf_event_open: performance counters count the host's events (context switches, "+
		"page faults, instructions), which a deterministic run cannot repeat: the guest gets EACCES")
	t.emulate(-abi.EACCES)
}

func sysSetTidAddress(e *Engine, t *thread) { t.clearTid = t.regs.Rdi }

// sysSignalfd notes that t's process has a signalfd (FdWait.Signals); the
// call is no scheduling point.
func sysSignalfd(e *Engine, t *thread) {
	t.proc.signalfds = true
	t.policy = false
}

// sysKill lets a signal-sending syscall run; threads blocked in the engine
// look at their pending signals again once it has. A SIGKILL is followed
// to its end: its targets die at once, whether stopped by hermit or not,
// so the engine waits for every one of them before anything else runs
// (when they died would otherwise depend on the host's timing).
func sysKill(e *Engine, t *thread) {
	e.sigAfter = true
	if e.killOwnGroup(t) {
		return
	}
	switch killSignal(t) {
	case abi.SIGKILL:
	case abi.SIGSTOP:
		t.act = actExitStop
		t.onExit = func(e *Engine, t *thread) {
			if int64(t.regs.Rax) == 0 && t.nr != abi.SYS_PIDFD_SEND_SIGNAL {
				e.stopOthers(t)
			}
		}
		return
	case abi.SIGCONT:
		t.act = actExitStop
		t.onExit = func(e *Engine, t *thread) {
			if int64(t.regs.Rax) == 0 {
				e.continueStopped(t)
			}
		}
		return
	default:
		return
	}
	t.act = actExitStop
	t.onExit = func(e *Engine, t *thread) {
		if int64(t.regs.Rax) != 0 {
			return
		}
		for _, o := range e.ordered() {
			if e.killed(o) {
				e.setDying(o)
			}
		}
		t.hold = true
	}
}

// killSignal returns the signal a signal-sending syscall sends.
func killSignal(t *thread) int {
	r := &t.regs
	switch t.nr {
	case abi.SYS_TGKILL, abi.SYS_RT_TGSIGQUEUEINFO:
		return int(int32(r.Rdx))
	}
	return int(int32(r.Rsi)) // kill, tkill, rt_sigqueueinfo, pidfd_send_signal
}

// killed reports whether thread o has a SIGKILL pending or has died.
func (e *Engine) killed(o *thread) bool {
	if o.state == tsDying {
		return false
	}
	if st, _, err := e.t.ProcStat(o.tid); err != nil || st == 'Z' || st == 'X' {
		return true
	}
	own, shared, _, err := e.t.Signals(o.tid)
	return err != nil || (own|shared)&(1<<(abi.SIGKILL-1)) != 0
}

func sysNanosleep(e *Engine, t *thread) {
	d, ok := e.readDeadline(t, t.regs.Rdi, false, 0)
	if !ok {
		t.emulate(-abi.EFAULT)
		return
	}
	e.blockOn(t, &blocker{kind: bkSleep, deadline: d, onTimeout: emulateResult(0), rem: t.regs.Rsi})
}

func sysClockNanosleep(e *Engine, t *thread) {
	r := &t.regs
	abs := r.Rsi&abi.TIMER_ABSTIME != 0
	d, ok := e.readDeadline(t, r.Rdx, abs, int(r.Rdi))
	if !ok {
		t.emulate(-abi.EFAULT)
		return
	}
	b := &blocker{kind: bkSleep, deadline: d, onTimeout: emulateResult(0)}
	if !abs {
		b.rem = r.R10
	}
	e.blockOn(t, b)
}

// sysPause handles pause, rt_sigsuspend and rt_sigtimedwait: the thread
// waits until a signal that ends the call is pending, then the kernel runs
// the call and delivers or dequeues it.
func sysPause(e *Engine, t *thread) {
	r := &t.regs
	b := &blocker{kind: bkSignal, deadline: -1}
	switch t.nr {
	case abi.SYS_RT_SIGSUSPEND:
		mask, ok := e.readU64(t, r.Rdi)
		if !ok {
			t.emulate(-abi.EFAULT)
			return
		}
		b.wakeMask = func(uint64) uint64 { return ^mask }
	case abi.SYS_RT_SIGTIMEDWAIT:
		set, ok := e.readU64(t, r.Rdi)
		if !ok {
			t.emulate(-abi.EFAULT)
			return
		}
		b.wakeMask = func(blocked uint64) uint64 { return set | ^blocked }
		if r.Rdx != 0 {
			d, ok := e.readDeadline(t, r.Rdx, false, 0)
			if !ok {
				t.emulate(-abi.EFAULT)
				return
			}
			b.deadline = d
			b.onTimeout = emulateResult(-abi.EAGAIN)
		}
	}
	e.blockOn(t, b)
}

func (e *Engine) readU64(t *thread, addr uint64) (uint64, bool) {
	var b [8]byte
	if e.t.ReadMem(t.tid, addr, b[:]) != nil {
		return 0, false
	}
	return le64(b[:]), true
}
