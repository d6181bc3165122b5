package replay

import (
	"errors"
	"fmt"

	"github.com/hermitdbg/hermit/detcore"
)

// The plain values a Session reports. They depend on nothing but detcore,
// so that they can move to a ptrace-free package for gdbstub and repl.

// StopReason says why a Session stopped.
type StopReason int

const (
	// ReasonStart: a fresh run, before the guest's first instruction
	// (after the first program's execve). Event is 0.
	ReasonStart StopReason = iota
	// ReasonEvent: at an event boundary, before the engine acts on event
	// Stop.Event; Tid is the thread the event belongs to.
	ReasonEvent
	// ReasonBreakpoint: thread Tid reached the breakpoint at Addr (its
	// instruction pointer is Addr; the instruction has not run).
	ReasonBreakpoint
	// ReasonWatchpoint: thread Tid accessed watchpoint Watch, which
	// watches Addr; the accessing instruction has run.
	ReasonWatchpoint
	// ReasonStep: thread Tid has executed the instructions asked for.
	ReasonStep
	// ReasonInterrupt: Session.Interrupt was called.
	ReasonInterrupt
	// ReasonExited: every guest thread is gone; Result says how it ended.
	ReasonExited
	// ReasonSignal: signal Sig is about to be delivered to thread Tid, as
	// it was in the recording (a fault: the faulting instruction has not
	// completed). Only Continue and Step stop there.
	ReasonSignal
)

var reasonNames = [...]string{"start", "event", "breakpoint", "watchpoint", "step", "interrupt", "exited", "signal"}

func (r StopReason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// Stop describes where a Session stopped. Tids are host thread ids, as
// detcore.ThreadInfo.Tid (ThreadInfo.Vtid is the guest's own id).
type Stop struct {
	Reason StopReason
	// Tid is the thread the stop concerns; 0 when Exited.
	Tid int
	// Addr is the breakpoint's address, or the watched address.
	Addr uint64
	// Watch is the id of the watchpoint that triggered.
	Watch int
	// Event is the number of events consumed so far (Session.Event).
	Event uint64
	// Steps counts the instructions thread Tid executed for Session.Step,
	// also when the step ended early at a breakpoint or watchpoint.
	Steps int
	// Sig is the signal, for ReasonSignal.
	Sig int
	// Result is the run's outcome, when Exited.
	Result detcore.Result
}

func (s Stop) String() string {
	switch s.Reason {
	case ReasonBreakpoint:
		return fmt.Sprintf("breakpoint at %#x, thread %d, event %d", s.Addr, s.Tid, s.Event)
	case ReasonWatchpoint:
		return fmt.Sprintf("watchpoint %d (%#x), thread %d, event %d", s.Watch, s.Addr, s.Tid, s.Event)
	case ReasonStep:
		return fmt.Sprintf("stepped %d instructions, thread %d, event %d", s.Steps, s.Tid, s.Event)
	case ReasonSignal:
		return fmt.Sprintf("signal %d, thread %d, event %d", s.Sig, s.Tid, s.Event)
	case ReasonExited:
		return fmt.Sprintf("exited with status %d after %d events", s.Result.ExitCode, s.Event)
	}
	return fmt.Sprintf("%v, thread %d, event %d", s.Reason, s.Tid, s.Event)
}

// WatchKind says which accesses a watchpoint catches. x86 debug
// registers cannot catch reads alone.
type WatchKind int

const (
	WatchWrite     WatchKind = iota + 1 // writes
	WatchReadWrite                      // reads and writes
	// WatchExec is an instruction breakpoint in a debug register (size
	// 1): it stops with ReasonWatchpoint before the instruction at the
	// address runs, which nothing in memory shows.
	WatchExec
)

// Errors the Session reports.
var (
	// ErrExited: the run has ended; only Restart (or RunToEvent with an
	// earlier event) brings the guest back.
	ErrExited = errors.New("the run has ended")
	// ErrClosed: the Session was closed.
	ErrClosed = errors.New("the session is closed")
	// ErrReadOnly: a replay cannot change the guest's registers without
	// diverging from its recording.
	ErrReadOnly = errors.New("a replay's registers are read-only")
	// ErrNoDebugRegs: the tracer cannot reach the hardware debug
	// registers, which watchpoints and single-steps need.
	ErrNoDebugRegs = errors.New("the tracer has no access to the debug registers")
	// ErrNoFPRegs: the tracer cannot read the FP and SSE registers.
	ErrNoFPRegs = errors.New("the tracer cannot read the FP registers")
	// ErrNoWatchSlot: all four hardware watchpoints are in use.
	ErrNoWatchSlot = errors.New("all 4 hardware watchpoints are in use")
)
