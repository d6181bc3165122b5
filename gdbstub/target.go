package gdbstub

import (
	"errors"
	"io/fs"
)

// Target is what the stub debugs: one process of a replay, in all-stop
// mode. The stub calls its methods from one goroutine, one at a time,
// except Interrupt, which may come from another goroutine while Continue
// or Step runs. Thread ids are the ids the guest itself saw (gettid), and
// Pid the guest's own pid; both stay the same from run to run.
//
// A recorded execution cannot change, so nothing here writes registers or
// memory: the stub answers such packets with an error itself.
type Target interface {
	// Pid is the debugged process's id.
	Pid() int
	// Threads lists the process's live threads in creation order (none
	// once it has exited).
	Threads() ([]Thread, error)
	// Registers returns thread tid's registers.
	Registers(tid int) (*Registers, error)
	// ReadMemory reads the process's memory at addr into b and returns how
	// many bytes it read: fewer than len(b), with an error, when the range
	// runs into unmapped memory. Breakpoints' int3s are not shown.
	ReadMemory(addr uint64, b []byte) (int, error)

	// SetBreakpoint inserts a breakpoint or watchpoint of kind at addr;
	// size is the watched length (1, 2, 4 or 8), or the breakpoint kind
	// gdb sent (1 on x86). Setting one that exists succeeds.
	// ErrUnsupported: this kind or size cannot be had.
	SetBreakpoint(kind BreakKind, addr uint64, size int) error
	// ClearBreakpoint removes what SetBreakpoint inserted.
	ClearBreakpoint(kind BreakKind, addr uint64, size int) error

	// Continue runs until a breakpoint or watchpoint hit, a signal, an
	// Interrupt or the end of the process, and says which.
	Continue() (Stop, error)
	// Step executes one instruction of thread tid; other threads run as
	// the recording has them.
	Step(tid int) (Stop, error)
	// Interrupt makes a running Continue or Step return StopInterrupt
	// soon. It does not wait.
	Interrupt()
	// LastStop is where the target is now (for '?').
	LastStop() Stop
	// Restart starts the replay again from its beginning (vRun) and
	// returns the stop there.
	Restart() (Stop, error)

	// When is the number of recorded events the replay has consumed.
	When() uint64
	// Goto replays to event boundary n (restarting when n is behind) and
	// returns the stop there. Breakpoints do not stop it.
	Goto(n uint64) (Stop, error)

	// Auxv is the process's auxiliary vector, as /proc/PID/auxv has it.
	Auxv() ([]byte, error)
	// ExecFile is the path of the process's executable, as the guest named
	// it; Open opens it.
	ExecFile() (string, error)
	// Open opens a file of the recording by its absolute path in the
	// guest's view, for reading only (vFile). The file must implement
	// io.ReaderAt. fs.ErrNotExist: the recording has no such file.
	Open(path string) (fs.File, error)
	// Siginfo is the raw siginfo_t (128 bytes) of the signal thread tid
	// stopped with. ErrUnsupported: it did not stop with one.
	Siginfo(tid int) ([]byte, error)
}

// Thread is one thread of the debugged process.
type Thread struct {
	ID   int
	Name string // its comm (PR_SET_NAME), if known
}

// BreakKind is the type of a Z packet.
type BreakKind int

const (
	BreakSoftware BreakKind = iota // Z0: an int3
	BreakHardware                  // Z1: an instruction breakpoint in a debug register
	WatchWrite                     // Z2
	WatchRead                      // Z3
	WatchAccess                    // Z4
)

// StopKind says why the target stopped.
type StopKind int

const (
	// StopStart: the start of the replay (a fresh run, or Goto); SIGTRAP.
	StopStart StopKind = iota
	// StopBreakpoint: thread Tid reached the breakpoint at Addr (its
	// instruction pointer is Addr; the instruction has not run). Hardware
	// tells Z0 (swbreak) from Z1 (hwbreak).
	StopBreakpoint
	// StopWatch: thread Tid accessed the watchpoint at Addr of kind Watch.
	StopWatch
	// StopStep: thread Tid completed the step asked for.
	StopStep
	// StopSignal: signal Signal (Linux numbering) is about to be delivered
	// to thread Tid, as it was in the recording; a fault stops at the
	// faulting instruction.
	StopSignal
	// StopInterrupt: Interrupt was called.
	StopInterrupt
	// StopExited: the process exited with status ExitCode.
	StopExited
	// StopKilled: the process was killed by signal Signal.
	StopKilled
	// StopSyscallEntry: thread Tid is about to make syscall Syscall (a
	// SyscallCatcher's stop); StopSyscallReturn: it has just made it.
	StopSyscallEntry
	StopSyscallReturn
)

// Stop describes where the target stopped.
type Stop struct {
	Kind StopKind
	Tid  int
	// Addr is the breakpoint's or the watched address.
	Addr uint64
	// Hardware: the breakpoint is a Z1 one.
	Hardware bool
	// Watch is the kind of the watchpoint hit (WatchWrite, WatchRead,
	// WatchAccess).
	Watch BreakKind
	// Signal is the Linux signal number, for StopSignal and StopKilled.
	Signal int
	// ExitCode is the exit status, for StopExited.
	ExitCode int
	// Begin: a reverse command reached the start of the recording.
	Begin bool
	// End: a forward command reached the end of the recording, where the
	// process is about to end (an EndStopper's stop).
	End bool
	// Syscall is the syscall's number, for StopSyscallEntry and
	// StopSyscallReturn.
	Syscall int
	// Note is a line for the user, which the debugger shows before the
	// stop: why a replay ended before its recording did.
	Note string
}

// SyscallCatcher is a Target that can also stop at syscalls (gdb's catch
// syscall, the QCatchSyscalls packet): Continue and, if it is a
// Reverser, ReverseContinue stop at their entry and return.
type SyscallCatcher interface {
	// CatchSyscalls sets which syscalls stop the target: none (on
	// false), every one (nrs empty) or those numbered nrs.
	CatchSyscalls(on bool, nrs []int) error
}

// Registers is an x86-64 thread's register file.
type Registers struct {
	Rax, Rbx, Rcx, Rdx, Rsi, Rdi, Rbp, Rsp uint64
	R8, R9, R10, R11, R12, R13, R14, R15   uint64
	Rip, Eflags                            uint64
	Cs, Ss, Ds, Es, Fs, Gs                 uint64
	FsBase, GsBase                         uint64
	// OrigRax is the syscall number while in a syscall, else -1.
	OrigRax uint64
	// FXSave is the FXSAVE area (struct user_fpregs_struct): x87, MXCSR
	// and xmm0–15. HaveFP says it was read.
	FXSave [512]byte
	HaveFP bool
	// YMMHigh are the upper halves of ymm0–15 (the XSAVE area's AVX
	// state). HaveAVX says the CPU has them and they were read.
	YMMHigh [16][16]byte
	HaveAVX bool
}

// ErrUnsupported says the target cannot do what was asked.
var ErrUnsupported = errors.New("not supported by this target")
