package repl

import (
	"fmt"

	"github.com/hermitdbg/hermit/repl/strace"
)

// The one line every stop prints: the event number, the thread, what is
// happening (the syscall about to be made, decoded as strace would, or
// the breakpoint, watchpoint or signal), and the source location.

var stopNames = [...]string{"start", "event", "breakpoint", "watchpoint", "step", "signal", "interrupted", "end"}

func stopName(k StopKind) string {
	if int(k) < len(stopNames) {
		return stopNames[k]
	}
	return fmt.Sprintf("stop %d", int(k))
}

// printStop prints st's line.
func (r *REPL) printStop(st Stop) {
	r.printf("%s\n", r.stopLine(st))
}

func (r *REPL) stopLine(st Stop) string {
	head := fmt.Sprintf("#%d", st.Event)
	if st.Kind == StopExited {
		if st.Failure != "" {
			return fmt.Sprintf("%s the replay ends early: %s", head, st.Failure)
		}
		return fmt.Sprintf("%s the recording ends: the program exited with status %d", head, st.ExitCode)
	}
	head += fmt.Sprintf(" tid %d", st.Tid)
	var g Regs
	loc := ""
	if regs, err := r.s.Regs(st.Tid); err == nil {
		g = regs
		loc = r.location(st.Tid, g.Rip)
	}
	switch st.Kind {
	case StopEvent:
		return head + " " + r.eventText(st, &g) + loc
	case StopBreakpoint:
		return fmt.Sprintf("%s breakpoint %s at %#x%s", head, r.bpName(bpAddr, st.Addr), st.Addr, loc)
	case StopWatch:
		return fmt.Sprintf("%s watchpoint %s: %#x written, pc %#x%s", head, r.bpName(bpWatch, st.Addr), st.Addr, g.Rip, loc)
	case StopSignal:
		return fmt.Sprintf("%s --- %s --- at %#x%s", head, strace.Signal(st.Signal), g.Rip, loc)
	case StopInterrupt:
		return fmt.Sprintf("%s interrupted at %#x%s", head, g.Rip, loc)
	case StopStart:
		return fmt.Sprintf("%s the start, at %#x%s", head, g.Rip, loc)
	}
	return fmt.Sprintf("%s %s at %#x%s", head, stopName(st.Kind), g.Rip, loc)
}

// eventText decodes the syscall a boundary stop is before, from the
// thread's registers and memory.
func (r *REPL) eventText(st Stop, g *Regs) string {
	ev, err := r.s.Event(st.Event)
	if err != nil {
		return fmt.Sprintf("(event %d: %v)", st.Event, err)
	}
	if ev.Kind != EventSyscall {
		return ev.Text
	}
	// The stop is before the call: its result shows when the recording
	// holds it (a call on the outside world); its outputs are not there
	// yet.
	c := strace.Call{Nr: ev.Nr, Args: [6]uint64{g.Rdi, g.Rsi, g.Rdx, g.R10, g.R8, g.R9}, Done: ev.HasResult, Result: ev.Result}
	return strace.Format(c, func(addr uint64, b []byte) (int, error) { return r.s.ReadMem(st.Tid, addr, b) }, strace.Options{})
}

// location is "  at file:line func" for a pc of thread tid's process, or
// "" without debug information.
func (r *REPL) location(tid int, pc uint64) string {
	for _, t := range r.s.Threads() {
		if t.Tid == tid {
			if d := r.describePCIn(t.Pid, pc); d != "" {
				return " " + d
			}
		}
	}
	return ""
}

// bpName numbers the breakpoint of kind at addr ("1", or "?" when it was
// deleted meanwhile).
func (r *REPL) bpName(kind bpKind, addr uint64) string {
	for _, b := range r.bps {
		if b.kind == kind && b.addr == addr {
			return fmt.Sprint(b.id)
		}
	}
	return "?"
}
