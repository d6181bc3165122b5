package detcore

import (
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// tstate is where a guest thread is, from the scheduler's point of view.
type tstate int

const (
	tsNew      tstate = iota // created, waiting for its first turn
	tsReady                  // stopped, can run when picked
	tsBlocked                // stopped at a syscall that must wait
	tsRunning                // resumed; the engine waits for its next stop
	tsDying                  // killed or exiting; the engine waits for its exit report
	tsZombie                 // a leader that exited before its threads; reported last
	tsStopping               // resumed to join its process's group stop (jobctl.go)
	tsStopped                // in a group stop: runs again after a SIGCONT
	tsTraced                 // in a ptrace-stop of a tracer in the guest (guestptrace.go)
)

// parkAction says how to resume a stopped thread when it is picked.
type parkAction int

const (
	actCont     parkAction = iota // resume, letting a pending syscall run
	actEmulate                    // skip the syscall, returning ret
	actExitStop                   // run the syscall and stop at its exit
)

// thread is one guest thread.
type thread struct {
	// tid is the host's thread id, vtid the guest's (its own pid namespace).
	tid  int
	vtid int
	proc *process
	// sud is the clock page whose futex code may turn the thread's
	// syscall user dispatch on, or nil (fastfutex.go); sudOn says that
	// it did, sudIdle for how many resumes it has not left a wake since.
	sud     *ClockPage
	sudOn   bool
	sudIdle int
	// seq is the creation sequence number: the round-robin order.
	seq   int
	state tstate
	// prio is the thread's PCT priority (chaos.go); 0 until drawn.
	prio uint64
	// ranAt is the turn it last ran (PCT's starvation guard, chaos.go).
	ranAt int64
	// started is set once the thread's first stop has been seen.
	started bool
	// execReturned: at its last exec, the thread returned from execve
	// before the engine saw it (Exec.Returned).
	execReturned bool

	// While stopped at an intercepted syscall:
	regs abi.Regs
	nr   int
	act  parkAction
	ret  int64
	// tscMode is the PR_SET_TSC mode the guest asked for (prctl.go);
	// noCPUID: it turned cpuid off (ARCH_SET_CPUID 0), which its exec
	// undoes, as in the kernel.
	tscMode int
	noCPUID bool
	// noNewPrivs: the guest itself set no_new_privs; seccompMode is the
	// seccomp mode it put itself in (prctl.go). Both belong to the
	// thread, as in the kernel: a clone or fork inherits them, and only
	// a filter installed with SECCOMP_FILTER_FLAG_TSYNC reaches the
	// thread's siblings.
	noNewPrivs  bool
	seccompMode int
	// onExit runs at the syscall-exit stop of an actExitStop resume;
	// afterJournal there too, after the journal has the call's result
	// (a look that a replay, which forces a recorded result, makes then).
	onExit, afterJournal func(e *Engine, t *thread)
	// part is the blocking write t makes in parts (io.go), while the call
	// is made again for its rest.
	part *partWrite
	// mmsg is the blocking sendmmsg t makes in parts (sendmmsg.go).
	mmsg *mmsgPart
	// inPart: t's call is one part of a write made in parts (partwrite.go),
	// whose exit partEnd handles.
	inPart bool
	// cpu is the virtual time charged to t while it ran (cputime.go).
	cpu int64
	// policy: the engine's policy handles the syscall t is stopped at.
	policy bool
	// atSyscall is set while the thread is stopped at an intercepted
	// syscall that has not run yet.
	atSyscall bool
	// journalExit: the journal wants to see this call's exit.
	journalExit bool
	// nativeAt and nativeNr are the pc after the syscall instruction and
	// the number of the call t last made natively without the journal
	// seeing its exit (0: none), which the watchdog's stop may interrupt
	// (journalInterrupted).
	nativeAt uint64
	nativeNr int
	// savedArgs are the registers to restore at the exit of a call the
	// journal ran with other arguments.
	savedArgs *abi.Regs
	// hold keeps the thread parked after its syscall-exit stop.
	hold bool
	// exitMem is guest memory the journal writes when the call returns;
	// exitSig, a signal the engine sends it then (Outcome.Signal).
	exitMem []MemWrite
	exitSig int
	// kernelSig is a signal raiseAsKernel or a timer sent t, not yet
	// delivered; kernelCode, the si_code it is to have (fixKernelSiginfo).
	kernelSig  int
	kernelCode int32
	// Signals from outside (outsidesig.go): sent, the signals hermit sent
	// t itself; seen, those pending when the engine last looked (a
	// recording keeps them there); given and givenInfo, a signal a
	// replay sent t as its recording's came, and the siginfo it is to
	// have; resumeRip, t's instruction pointer at its last resume (a
	// recording); deferred, those that came as t ran, which a recording
	// gives at t's next call (signalAtCall), and deferRan, the CPU time t
	// had run before their deliveries' stops, which a replay has not.
	sent, seen uint64
	given      int
	givenInfo  []byte
	resumeRip  uint64
	deferred   []outsideSig
	deferRan   time.Duration
	// affinity is the CPU mask sched_setaffinity gave t (0: every CPU
	// the guest has); its threads and children inherit it.
	affinity uint64
	// sig is a signal to deliver on the next resume.
	sig int

	block *blocker
	// clearTid is the CLONE_CHILD_CLEARTID / set_tid_address address.
	clearTid uint64
	// vforkChild is the child a vfork parent waits for.
	vforkChild *process
	// exiting is set once the thread has called exit or exit_group.
	exiting bool
	// rng is the state of the thread's random generator.
	rng uint64
	// sigChecked is the signal epoch at which pending signals were last read.
	sigChecked uint64
	// sigWoken is the wait that signals for the whole process, sigShared,
	// ended (signalWake), until the thread runs: another thread of the
	// process may take them first.
	sigWoken  *blocker
	sigShared uint64
	// sigOwn are the thread's own pending signals signalEnds last read.
	sigOwn uint64
	// retry is the call the thread retries from a retry wait (kwait.go).
	retry *retryState
	// fault and faults are the last fault (address and signal) and how
	// many times in a row it came (signals.go).
	fault  uint64
	faults int
	// spinWait is how long the thread runs without a stop before the
	// watchdog examines it for a spin (0: spinBudget); spinNote says
	// what its last examination found (a func: symbols are read only
	// for a warning); spinAt is the canonical point it
	// waits at in a spin wait; spinRecheck: examine it again when it
	// next runs, and spinLoop, the instructions of the cycle it was
	// found in, tells that examination when it has left it (spin.go).
	spinWait    time.Duration
	spinNote    func() string
	spinAt      uint64
	spinRecheck bool
	spinLoop    map[uint64]bool
	// tf keeps the trap flag of the engine's steps out of the program
	// (spin.go's stepGuest).
	tf TrapFlag
	// readyTurn is the turn (Stats.Turns) in which t's call was let run
	// in the kernel because a descriptor it waits for was ready
	// (readyDecided), or 0.
	readyTurn int64
	// retried: t's call is being made again (readyDecided); the engine
	// gives it the turn at its stop.
	retried bool
	// counting: the thread was last resumed at a scheduling point in
	// count mode (count.go).
	counting bool
	// clockLimit is where its clock page's reads trap until its next
	// scheduling point (vclock.go).
	clockLimit int64
	// insnPoints counts the instructions answered (rdtsc, cpuid) since
	// the thread's turn began (signals.go).
	insnPoints int
	// tscLeft is where the last rdtsc answered by a trap left the
	// thread: it may come back there (from a signal handler) after its
	// site would be patched (tscsite.go).
	tscLeft uint64
	// pt is set while a guest process traces the thread (guestptrace.go).
	pt *tracee
	// ioKind is the kind of descriptor ioKindFd, as the policy of the
	// thread's current call asked (io.go); fast is a descriptor that
	// gets a fast-write entry when that call runs (fastio.go).
	ioKind   FdKind
	ioKindFd int
	fast     *fastFd
}

// process is one guest thread group.
type process struct {
	// pid is the host's process id, vpid the guest's.
	pid  int
	vpid int
	// cpuGone is the CPU time of its threads that exited (cputime.go).
	cpuGone int64
	// born is the virtual time it was made at (its /proc stat's
	// starttime).
	born int64
	// sent are the signals hermit sent the whole process
	// (outsidesig.go).
	sent uint64
	// signalfds: it (or the process it was forked from) made a
	// signalfd, whose readiness a poll must take from the guest's
	// pending signals (FdWait.Signals).
	signalfds bool
	mm        *addrSpace
	threads   []*thread
	parent    *process
	// ownSUD: the process set up syscall user dispatch of its own
	// (fastfutex.go).
	ownSUD bool
	// nextTimer is the id of the next POSIX timer.
	nextTimer int
	// vforkParent is the thread suspended in vfork until this process
	// execs or exits.
	vforkParent *thread
	// traceExits are the exited tracees of this process, a tracer, that
	// its wait has not reported yet (guestptrace_wait.go).
	traceExits []*thread
	// faultDeaths maps the guest pids of children hermit killed, faulting
	// inits of pid namespaces, to the signal each dies of natively
	// (faultdeath.go).
	faultDeaths map[int]int
	// clock is the page its clock functions read (vclock.go), or nil.
	clock *ClockPage
	// images are the ELF images its exec mapped (tscsite.go).
	images []image
}

// addrSpace identifies an address space for private futex keys. Processes
// created with CLONE_VM share one. shared: it has mapped shared memory
// (sharedmem.go), or was forked from one that had; sharedWrite: writable
// shared memory. traps are its spin traps (spintrap.go), or nil.
type addrSpace struct {
	id                  int
	shared, sharedWrite bool
	traps               *spinTraps
	// hop is the int3 of an examination by hops, while it is in
	// (spinhop.go).
	hop *spinHop
}

func (p *process) remove(t *thread) {
	for i, x := range p.threads {
		if x == t {
			p.threads = append(p.threads[:i], p.threads[i+1:]...)
			return
		}
	}
}
