package detcoretest

import (
	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
)

type stepKind int

const (
	stepSyscall stepKind = iota
	stepClone
	stepSignal
	stepStore
	stepClockRead
)

// Step is one thing a scripted thread does.
type Step struct {
	kind  stepKind
	nr    int
	args  [6]uint64
	flags uint64
	ctid  uint64
	child []Step
	sig   int
	addr  uint64
	val   uint32
	n     int
}

// Syscall is an intercepted syscall: the thread stops at its seccomp stop
// with OrigRax = nr and the arguments in Rdi, Rsi, Rdx, R10, R8, R9. When
// the engine lets it run, the fake runs exit, exit_group and reads and
// writes of pipes as the kernel would; any other syscall returns 0.
func Syscall(nr int, args ...uint64) Step {
	s := Step{kind: stepSyscall, nr: nr}
	copy(s.args[:], args)
	return s
}

// Exit is exit(code): the thread ends.
func Exit(code int) Step { return Syscall(abi.SYS_EXIT, uint64(code)) }

// ExitGroup is exit_group(code): every thread ends.
func ExitGroup(code int) Step { return Syscall(abi.SYS_EXIT_GROUP, uint64(code)) }

// Clone is clone(flags, stack, ptid, ctid) creating a thread that runs
// child. clone is not intercepted: the parent reports a clone event and
// the child a first event stop. With CLONE_CHILD_SETTID the child's tid is
// written at ctid (as a 32-bit word); with CLONE_CHILD_CLEARTID the
// child's exit writes 0 there.
func Clone(flags, ctid uint64, child ...Step) Step {
	return Step{kind: stepClone, flags: flags, ctid: ctid, child: child}
}

// ThreadFlags are the clone flags pthread_create uses, minus the ones
// about tids and TLS.
const ThreadFlags = abi.CLONE_VM | abi.CLONE_FS | abi.CLONE_FILES | abi.CLONE_SIGHAND | abi.CLONE_THREAD

// Thread clones a thread that runs child.
func Thread(child ...Step) Step { return Clone(ThreadFlags, 0, child...) }

// Signal makes signal sig arrive for the thread: it reports a
// signal-delivery stop, and the signal, if the engine delivers it, kills
// the thread group.
func Signal(sig int) Step { return Step{kind: stepSignal, sig: sig} }

// Store is user-space code writing the 32-bit word v at addr.
func Store(addr uint64, v uint32) Step { return Step{kind: stepStore, addr: addr, val: v} }

// ReadClock is user-space code reading CLOCK_MONOTONIC n times through the
// vDSO: with a clock page (Tracer.UseClockPage), each read advances the
// page's clock by its step, as hermit's code in the vDSO does, until a read
// would reach the page's limit: that read is a clock_gettime syscall.
// Without one, every read is the syscall.
func ReadClock(n int) Step { return Step{kind: stepClockRead, n: n} }

// Resume records one Tracer.Resume call.
type Resume struct {
	Tid  int
	Mode detcore.ResumeMode
	Sig  int
}

// Call records one completed syscall (clone included; exit and
// exit_group never complete).
type Call struct {
	Tid  int
	Nr   int
	Args [6]uint64
	Ret  int64
	// Emulated is set when the engine skipped the syscall and chose Ret.
	Emulated bool
}
