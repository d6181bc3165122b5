package repl

import (
	"errors"
	"io"
)

// Session is the replay the REPL steps through. Event numbers count the
// recording's events as `hermit trace dump` numbers them; the replay can
// stop at the boundaries among them (Event.Boundary: before a syscall the
// engine intercepts), and between them at breakpoints, watchpoints and
// instruction steps. Thread and process ids are the guest's own.
//
// The methods are called from one goroutine, except Interrupt, which may
// come from another while Goto, Continue or Stepi runs.
type Session interface {
	// Len is the number of events of the recording.
	Len() uint64
	// Event describes recorded event n (n < Len()).
	Event(n uint64) (Event, error)
	// Where is the stop the replay is at.
	Where() Stop
	// Restart starts the replay again, before its first instruction.
	Restart() (Stop, error)
	// Goto replays to event boundary n, forwards or backwards (exactly:
	// registers and memory are what they were there going forwards), or to
	// the end of the recording. Breakpoints do not stop it.
	Goto(n uint64) (Stop, error)
	// Continue runs forwards until a breakpoint or watchpoint hit, a
	// signal's delivery, event boundary until (when it is ahead; Len() or
	// more: none), or the end.
	Continue(until uint64) (Stop, error)
	// Stepi executes n instructions of thread tid, the others running as
	// recorded.
	Stepi(tid, n int) (Stop, error)
	// Interrupt makes a running Goto, Continue or Stepi stop soon with
	// StopInterrupt.
	Interrupt()
	// Result is the result of event n's syscall, once the replay has
	// made the call after stopping before it; false if not known.
	Result(n uint64) (int64, bool)
	// Progress is how many events the replay has consumed so far, also
	// while Goto, Continue or Stepi runs (it may be called from any
	// goroutine).
	Progress() uint64

	// Threads lists the live threads.
	Threads() []Thread
	// Regs returns thread tid's registers.
	Regs(tid int) (Regs, error)
	// ReadMem reads thread tid's memory (fewer bytes, with an error, at
	// unmapped memory; breakpoints are not shown).
	ReadMem(tid int, addr uint64, b []byte) (int, error)
	// Maps is process pid's /proc/PID/maps.
	Maps(pid int) (string, error)
	// Fds lists process pid's open descriptors.
	Fds(pid int) ([]Fd, error)
	// Open opens a file of the recording by its path in the guest's view,
	// for symbols and sources.
	Open(path string) (io.ReaderAt, int64, error)

	// SetBreakpoint and ClearBreakpoint manage an int3 at addr.
	SetBreakpoint(addr uint64) error
	ClearBreakpoint(addr uint64) error
	// SetWatchpoint watches size bytes at addr for writes and returns its
	// id; ErrNoSlot when the four debug registers are taken.
	SetWatchpoint(addr uint64, size int) (int, error)
	ClearWatchpoint(id int) error
}

// EventKind says what a recorded event is.
type EventKind int

const (
	EventSyscall EventKind = iota // an intercepted syscall's entry
	EventHost                     // the host's answer to a question of the engine, or a call's recorded result
	EventSignal                   // a signal's delivery
	EventClone                    // a thread or process is created
	EventExec                     // a process runs a new program
	EventExit                     // a thread or process ends
	EventOther                    // files captured, and kinds this version does not show
)

// Event is one recorded event.
type Event struct {
	N    uint64
	Kind EventKind
	// Tid is the acting thread; Pid its process, when known (0 if not).
	Tid, Pid int
	// Boundary: the replay can stop before this event.
	Boundary bool
	// Nr is the syscall number (EventSyscall, EventHost results).
	Nr int
	// Result is an EventSyscall's result when the recording holds it
	// (HasResult): that of a call on the outside world, which replay
	// gives from the trace.
	Result    int64
	HasResult bool
	// Signal is the signal of EventSignal.
	Signal int
	// Child is the new thread or process of EventClone.
	Child int
	// Status is the wait status of EventExit; Group says a whole process
	// ended.
	Status int
	Group  bool
	// Text is what `hermit trace dump` shows for it (for kinds the REPL
	// does not decode itself).
	Text string
}

// StopKind says why the replay stopped.
type StopKind int

const (
	StopStart      StopKind = iota // the start, before the first instruction
	StopEvent                      // at an event boundary
	StopBreakpoint                 // a breakpoint at Addr
	StopWatch                      // a watchpoint at Addr (Watch is its id)
	StopStep                       // an instruction step ended
	StopSignal                     // signal Signal is about to be delivered
	StopInterrupt                  // Interrupt (Ctrl-C)
	StopExited                     // the end of the recording
)

// Stop is where the replay stopped.
type Stop struct {
	Kind StopKind
	// Event is the number of events consumed: at boundary n, n.
	Event uint64
	// Tid is the thread the stop concerns (0 at the end).
	Tid    int
	Addr   uint64
	Watch  int
	Signal int
	// ExitCode is the recorded status, when StopExited.
	ExitCode int
	// Failure, when StopExited, says why the replay ended before the
	// recording did (it diverged, the trace is damaged); "" at the
	// recording's end.
	Failure string
	// Time is the guest's virtual time, in nanoseconds since the run
	// began (Where fills it in).
	Time int64
}

// Thread is a live thread.
type Thread struct {
	Tid, Pid int
	Name     string
	// State is "running", "ready", "blocked in SYSCALL", "spinning until
	// memory it reads changes", "new" or "exiting".
	State string
}

// Regs are an x86-64 thread's general registers.
type Regs struct {
	Rax, Rbx, Rcx, Rdx, Rsi, Rdi, Rbp, Rsp uint64
	R8, R9, R10, R11, R12, R13, R14, R15   uint64
	Rip, Eflags, OrigRax                   uint64
	Cs, Ss, Ds, Es, Fs, Gs, FsBase, GsBase uint64
}

// Fd is an open file descriptor.
type Fd struct {
	Fd   int
	What string // the link's target: a path, pipe:[N], socket:[N]
}

// ErrNoSlot says all four hardware watchpoints are in use.
var ErrNoSlot = errors.New("all 4 hardware watchpoints are in use")
