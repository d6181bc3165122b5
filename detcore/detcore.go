// Package detcore is hermit's deterministic core: a serialized scheduler
// that runs exactly one guest thread at a time and switches only at
// deterministic points (intercepted syscalls, thread and process creation
// and exit, signal delivery), plus the syscall policy that turns blocking
// calls into scheduler waits.
//
// detcore never touches the kernel itself. It drives a Tracer, which the
// ptrace backend (package detcore/ptrace) implements for real and tests
// implement with scripted fakes. All Tracer calls come from the goroutine
// that calls Engine.Run.
package detcore

import (
	"io"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// StopKind says why a guest thread stopped.
type StopKind int

const (
	// StopSeccomp: the thread is at an intercepted syscall, before it runs.
	StopSeccomp StopKind = iota
	// StopSyscallExit: the thread finished a syscall resumed with ResumeSyscall.
	StopSyscallExit
	// StopClone: the thread created a thread or process; Msg is its tid.
	StopClone
	// StopExec: the thread completed execve; Msg is its tid before the exec.
	StopExec
	// StopEvent: a PTRACE_EVENT_STOP: a new thread's first stop, a group
	// stop (Sig is the stopping signal) or an interrupt.
	StopEvent
	// StopSignal: a signal is about to be delivered to the thread (Sig).
	StopSignal
	// StopExited: the thread is gone; Code is its exit status.
	StopExited
	// StopKilled: the thread is gone, killed by signal Sig.
	StopKilled
	// StopUntraced: a thread resumed with ResumeCount is at a syscall the
	// seccomp filter lets through (Msg is its number), before it runs.
	// Resumed, the call runs natively.
	StopUntraced
)

var stopKindNames = [...]string{"seccomp", "syscall-exit", "clone", "exec", "event", "signal", "exited", "killed", "untraced"}

func (k StopKind) String() string {
	if int(k) < len(stopKindNames) {
		return stopKindNames[k]
	}
	return "stop?"
}

// Stop is one report from Tracer.Wait.
type Stop struct {
	Tid  int
	Kind StopKind
	Sig  int
	Code int
	Msg  uint64
	// CloneKind is SYS_CLONE, SYS_FORK or SYS_VFORK for StopClone.
	CloneKind int
	// Handled counts the syscall stops the tracer handled itself, without
	// reporting them, since its last report (the exits of counted calls).
	Handled int
}

// ResumeMode says how far a resumed thread runs.
type ResumeMode int

const (
	// ResumeCont runs until the next intercepted syscall, event or signal.
	ResumeCont ResumeMode = iota
	// ResumeSyscall also stops when the current syscall returns.
	ResumeSyscall
	// ResumeStep executes one instruction.
	ResumeStep
	// ResumeCount is ResumeCont that also stops (StopUntraced) before
	// each syscall the filter lets through, so that a thread making only
	// such calls still reaches scheduling points (count.go).
	ResumeCount
	// ResumeCountStep is ResumeStep that stops at such a call as
	// ResumeCount does.
	ResumeCountStep
)

// FdWait names a guest file descriptor and the poll events a thread waits for.
type FdWait struct {
	Tid    int
	Fd     int
	Events int16
	// Read says a read waits: a FIFO without writers ends it (the read
	// returns 0) even when poll says nothing, as for a reader that opened
	// the FIFO after its writer had come and gone (fifo.go).
	Read bool
	// Signals says the process has made a signalfd: one (or an epoll
	// that holds one) is ready when a signal it takes is pending for
	// thread Tid, which a poll of the tracer's own would not see (it
	// would ask about the tracer's signals).
	Signals bool
}

// Poll events from <asm-generic/poll.h>.
const (
	POLLIN   = 0x1
	POLLOUT  = 0x4
	POLLERR  = 0x8
	POLLHUP  = 0x10
	POLLNVAL = 0x20
)

// FdKind classifies a guest file descriptor for the blocking policy.
type FdKind int

const (
	FdOther    FdKind = iota // a regular file, directory or device that never blocks
	FdPollable               // a pipe, FIFO, socket, tty or event fd: may block
	FdNonblock               // pollable but opened O_NONBLOCK: never blocks
	FdClosed                 // not open
	FdRandom                 // /dev/urandom or /dev/random
	FdZero                   // /dev/zero or /dev/full, whose reads give zeros
	FdProc                   // a file in a proc filesystem (never blocks)
)

// ProbeOnly is the timeout of a Poll whose answer only guides the
// watchdog, which looks between scheduling points, at wall-clock times:
// it must not be journaled, or a replay, whose watchdog looks at other
// times, would meet the answer out of place. Its answer never changes
// the schedule.
const ProbeOnly time.Duration = -1

// Tracer is the kernel side of the engine. Every method must be called from
// the goroutine that runs Engine.Run. Methods that take a tid may return an
// error wrapping ErrGone when the thread has died; the engine then waits
// for its exit report.
type Tracer interface {
	// Wait blocks until some guest thread stops or exits.
	Wait() (Stop, error)
	// Resume restarts a stopped thread, delivering sig if it is not 0.
	Resume(tid int, mode ResumeMode, sig int) error
	GetRegs(tid int, r *abi.Regs) error
	SetRegs(tid int, r *abi.Regs) error
	ReadMem(tid int, addr uint64, b []byte) error
	WriteMem(tid int, addr uint64, b []byte) error
	// FdKind classifies file descriptor fd of tid's process.
	FdKind(tid, fd int) FdKind
	// PipeSpace returns how many bytes a write to fd, a pipe or a Unix
	// stream socket, can take without blocking, or -1 when fd is neither
	// or the space is unknown.
	PipeSpace(tid, fd int) int
	// Poll polls the given guest descriptors from outside the guest,
	// waiting at most timeout (0: do not wait), and reports which are ready.
	// With timeout ProbeOnly it does not wait, and a recording does not
	// keep the answer (see ProbeOnly).
	Poll(ws []FdWait, timeout time.Duration) ([]bool, error)
	// Signals returns the signals pending for thread tid alone, those
	// pending for its whole process, and those it blocks; bit N-1 stands
	// for signal N.
	Signals(tid int) (thread, shared, blocked uint64, err error)
	// Caught returns the signals tid's process has a handler for, and
	// those it ignores with SIG_IGN (bit N-1 for signal N).
	Caught(tid int) (caught, ignored uint64, err error)
	// Preempt asks the running thread tid to stop at once; it reports a
	// StopSignal with SIGSTOP that the engine suppresses.
	Preempt(tid int) error
	// SharedMapping reports whether addr lies in a MAP_SHARED mapping of
	// tid's address space, and if so which object (device and inode) and
	// which offset in it.
	SharedMapping(tid int, addr uint64) (dev, ino, off uint64, ok bool)
	// ProcStat returns the state letter (R, S, Z, ...) and process group
	// (a host id) of host process pid.
	ProcStat(pid int) (state byte, pgrp int, err error)
	// Signal sends signal sig to process pid, or to its thread tid if tid
	// is not 0, with siginfo info (nil: as kill(2) does).
	Signal(pid, tid, sig int, info []byte) error
	// AddTimerfdTicks adds n expirations to timerfd fd of tid's process,
	// making it readable; n 0 takes those it has away, as the kernel's
	// timerfd_settime does.
	AddTimerfdTicks(tid, fd int, n uint64) error
	// GuestTid returns the id of host thread tid in the guest's pid namespace.
	GuestTid(tid int) (int, error)
	// OnExec prepares a thread that just completed execve: it replaces
	// the vDSO's time functions with code that reads a clock page, or
	// that makes the syscall (vclock.go), and writes atRandom over the 16
	// AT_RANDOM bytes of the auxiliary vector. filtered says the thread
	// runs under a seccomp filter of the guest's own (which might refuse
	// calls the tracer makes in it).
	OnExec(tid int, atRandom [16]byte, filtered bool) (Exec, error)
	// KillAll kills every guest process.
	KillAll()
}

// Config holds the scheduling policy knobs.
type Config struct {
	// Seed perturbs the round-robin order deterministically and seeds the
	// guest's AT_RANDOM bytes; 0 keeps plain round robin in thread creation
	// order.
	Seed uint64
	// Heuristic chooses the next thread (chaos.go); "" is RoundRobin.
	Heuristic Heuristic
	// ChaosPoints are the turns at which PCT drops the running thread's
	// priority (ChangePoints draws them from the seed).
	ChaosPoints []int64
	// PCTStarve is how many turns a runnable thread may wait under PCT
	// before it rises above the others (chaos.go): 0 is PCTStarve's
	// default, -1 never (recordings made before the guard).
	PCTStarve int64
	// TurnLog, when set, receives a line for every scheduler turn: the
	// turn, the thread, the syscall it stopped at and its code (chaos.go).
	TurnLog io.Writer
	// Timeslice is how many turns in a row a thread that stays ready may
	// keep before the others get theirs (at most; it also yields when it
	// blocks or calls sched_yield). 0 or 1: switch at every turn.
	Timeslice int
	// Quantum is the logical time (ns) one scheduler turn costs.
	Quantum int64
	// Watchdog is how long one thread may run without reaching a
	// scheduling point while others wait before hermit preempts it
	// (nondeterministically) and says so. 0 disables the watchdog.
	Watchdog time.Duration
	// NoSpinCheck turns off spin detection (spin.go), leaving the plain
	// watchdog.
	NoSpinCheck bool
	// NoSpinTraps: no int3 in the guest's code: none at the loops
	// threads were found spinning in (spintrap.go), each spin being
	// found after its budget, and none for an examination's hops
	// (spinhop.go), a computing thread being stepped. The schedule is
	// the same.
	NoSpinTraps bool
	// NoFastIO makes every read, write, futex wake and rdtsc take its
	// stop (fastio.go, fastfutex.go, tscsite.go): the schedule of a
	// hermit without fast calls, and no site of the program's patched.
	NoFastIO bool
	// OldEntryTimes replays a recording of journal version 17, made when
	// creat, openat2, mknod, symlink and a Unix socket's bind moved no
	// file times (files_dirtimes.go).
	OldEntryTimes bool
	// OldOutsideClock replays a recording of journal version 19 or
	// before, made when a wait for the outside world that a thread's
	// wake ended left the clock where it was (outside.go).
	OldOutsideClock bool
	// OldSignalWake replays a recording of journal version 20 or before,
	// made when a thread that signals for its whole process woke ran
	// without a look at whether another thread had taken them (sigTaken).
	OldSignalWake bool
	// OldSigWokenFutex replays a recording of journal version 21 or
	// before, made when a futex wake passed over a thread that a signal
	// for its whole process had woken from a wait on the word and that
	// had not run yet (futexSigWoken).
	OldSigWokenFutex bool
	// OldCallOutput replays a recording of journal version 22 or
	// before, which did not keep what a stat that ran natively wrote
	// (OutputTracer).
	OldCallOutput bool
	// OldTimedFutexCount replays a recording of journal version 22 or
	// before, made when a thread did not count its calls while another
	// that may share its memory waited on a futex with a timeout
	// (timedFutexNear).
	OldTimedFutexCount bool
	// OldInterruptedTimeLeft replays a recording of journal version 23
	// or before, where a select, pselect6 or ppoll a signal interrupted
	// returned the host's time left (timeLeft).
	OldInterruptedTimeLeft bool
	// OldTimerfdSettime replays a recording of journal version 23 or
	// before, where timerfd_settime left the expirations not read yet.
	OldTimerfdSettime bool
	// OldSockTimeout replays a recording of journal version 23 or
	// before, whose calls on sockets waited without their SO_RCVTIMEO
	// or SO_SNDTIMEO (sockDeadline).
	OldSockTimeout bool
	// OldTimerOverrun replays a recording of journal version 24 or
	// before, whose POSIX timers queued a signal at every expiration and
	// whose timer_getoverrun said 0 (timerOverrun).
	OldTimerOverrun bool
	// OldOwnerDied replays a recording of journal version 24 or before,
	// where a robust mutex's owner's death woke none of its waiters
	// (ownersDied).
	OldOwnerDied bool
	// OldTSCTraps replays a recording of journal version 25 or before,
	// where every rdtsc and rdtscp trapped: no site is patched to read
	// the clock page (tscsite.go).
	OldTSCTraps bool
	// WatchdogHint ends the watchdog's warning: what sets the limit
	// ("--watchdog sets the limit; ..." by default).
	WatchdogHint string
	// TrapTSC says rdtsc and rdtscp fault (PR_SET_TSC) and the engine
	// answers them from the virtual clock.
	TrapTSC bool
	// CPUID, when set, answers the guest's cpuid instructions, which the
	// tracer has made fault.
	CPUID func(leaf, subleaf uint32) [4]uint32
	// RealMtimes are path prefixes (ending in /) under which files the
	// guest has not written keep their real mtime (DefaultRealMtimes).
	RealMtimes []string
	// Epoch is CLOCK_REALTIME at the start of the run (zero: DefaultEpoch).
	Epoch time.Time
	// CPUs is how many CPUs the guest is told it has, 1 to MaxCPUs (0:
	// DefaultCPUs). The tracer's machine files must say the same.
	CPUs int
	// Debug, when set, receives a line for every stop and scheduling
	// decision (hermit --debug=sched).
	Debug func(format string, args ...any)
	// Warn receives one-line warnings for the user (may be nil).
	Warn func(msg string)
	// Journal, when set, records or replays the run's external inputs.
	Journal Journal
}

// Result is what Engine.Run reports.
type Result struct {
	// ExitCode is the guest's exit status; 128+N when killed by signal N.
	ExitCode int
	// Signal is the signal that killed the root process, or 0.
	Signal int
	Stats  Stats
	// Changes are the PCT change points the run reached.
	Changes []Change
}

// Stats counts what the engine did; reported by --summary.
type Stats struct {
	Threads   int
	Processes int
	Syscalls  int64 // intercepted syscalls
	Stops     int64 // ptrace stops
	// SyscallStops counts the stops at intercepted syscalls (seccomp and
	// syscall-exit stops); the rest are clone, exec, signal and new-thread
	// event stops.
	SyscallStops int64
	Turns        int64 // scheduling decisions
	Nondet       int64 // points where the outside world decided
	Preemptions  int64 // watchdog preemptions (nondeterministic)
	// OutsideReady, OutsideWakes and OutsideLocks break down the other
	// nondeterministic points: a descriptor the outside world (a host
	// program, the network, TCP between guest processes) made ready while
	// every thread waited for it; a signal from outside or a child's
	// change that ended such a wait; a lock only something outside the
	// guest could release.
	OutsideReady, OutsideWakes, OutsideLocks int64
	// SpinWaits counts the times a thread that spun on memory was
	// stopped at its loop's head to wait for another thread (spin.go).
	SpinWaits int64
	// SpinYields counts the times a thread that spun in a loop that
	// writes memory and puts it back (a lock taken and let go) was
	// stopped at its loop's head and let the others run (spin.go).
	SpinYields int64
	// SpinTraps counts the int3s put at loops threads were found spinning
	// in, and SpinTrapHits the spins found at one as a thread arrived,
	// without a budget (spintrap.go).
	SpinTraps, SpinTrapHits int64
	// SpinExams counts the watchdog's examinations of threads that ran
	// a budget without a stop; SpinHops those that began by hops
	// (spinhop.go), and SpinHopsStepped those of them that went on to
	// single steps (the thread came back with the registers it had).
	SpinExams, SpinHops, SpinHopsStepped int64
	// Counted counts the syscalls the filter lets through that were
	// scheduling points, made while other threads (or a deadline) waited
	// for a thread that made no other (count.go).
	Counted int64
	// CountStops counts the ptrace stops count mode made: the entries of
	// counted calls, and the entries and exits the tracer handled itself.
	CountStops int64
	// Retries counts calls that would have blocked in the kernel (a
	// lock, a semaphore) and waited in the engine to be tried again.
	Retries int64
	// ReadyRetries counts calls let run because a descriptor was ready
	// that were made again because other threads ran first (io.go).
	ReadyRetries int64
	// Orphans counts the processes still running when the main process
	// exited, which the run killed.
	Orphans  int64
	TSCReads int64 // rdtsc and rdtscp answered from the virtual clock
	// TSCPageReads counts the rdtsc and rdtscp answered in the guest from
	// its clock page, at TSCSites sites patched (tscsite.go).
	TSCPageReads, TSCSites int64
	// ClockPages and TrappedClocks count the programs (execs) whose
	// clock functions read a clock page and those that make the syscall;
	// ClockPageReads counts the reads answered in the guest (vclock.go).
	ClockPages, TrappedClocks, ClockPageReads int64
	// FastWrites and FastReads count the writes and reads made without
	// a stop, FastSites the libc sites patched to make them (fastio.go).
	FastWrites, FastReads, FastSites int64
	// FastWakes counts the FUTEX_WAKE_PRIVATE calls answered without a
	// stop (fastfutex.go).
	FastWakes int64
	// TrappedClockWhy says why the first program without a clock page
	// has none.
	TrappedClockWhy string
	CPUIDs          int64 // cpuid instructions answered
	Digest          uint64
	// BySyscall counts intercepted syscalls by number.
	BySyscall map[int]int64
}

// FilterErrno returns the error the seccomp filter itself fails syscall
// nr with, for calls whose answer is always that error (no stop: glibc
// registers rseq in every new thread).
func FilterErrno(nr int) (int, bool) {
	if nr == abi.SYS_RSEQ {
		return abi.ENOSYS, true
	}
	return 0, false
}

// InterceptedSyscalls lists the syscalls the seccomp filter must send to
// the tracer: those with a policy entry, but for ConditionalSyscalls,
// which it sends only under their condition.
func InterceptedSyscalls() []int {
	conds := ConditionalSyscalls()
	nrs := make([]int, 0, len(policy))
	for nr := range policy {
		if _, ok := conds[nr]; !ok {
			nrs = append(nrs, nr)
		}
	}
	return nrs
}

var _ = abi.SYS_READ
