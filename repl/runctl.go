package repl

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/repl/strace"
)

// Running forwards and backwards. Positions: at event boundary n the
// replay has consumed n events; a stop between boundaries n-1 and n
// (a breakpoint, an instruction step) has consumed n too, and comes after
// boundary n-1. Going back is exact because every replay of a recording is
// the same: a reverse command replays from the start to the stop it wants.

// count parses an optional repeat count.
func count(name string, args []string) (int, error) {
	if err := wantArgs(name, args, 0, 1); err != nil {
		return 0, err
	}
	if len(args) == 0 {
		return 1, nil
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s: %q is not a count (a whole number from 1)", name, args[0])
	}
	return n, nil
}

// ahead is the first boundary a forward command can reach: the next one
// after a boundary stop, else the one that comes next.
func ahead(st Stop) uint64 {
	if st.Kind == StopEvent {
		return st.Event + 1
	}
	return st.Event
}

// boundaryAfter finds the nth boundary at or after from whose event
// satisfies ok; false when the recording has no such boundary.
func (r *REPL) boundaryAfter(from uint64, nth int, ok func(Event) bool) (uint64, bool) {
	for n := from; n < r.s.Len(); n++ {
		ev, err := r.s.Event(n)
		if err != nil {
			return 0, false
		}
		if ev.Boundary && (ok == nil || ok(ev)) {
			if nth--; nth == 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// boundaryBefore finds the nth boundary before `before` whose event
// satisfies ok.
func (r *REPL) boundaryBefore(before uint64, nth int, ok func(Event) bool) (uint64, bool) {
	for n := before; n > 0; n-- {
		ev, err := r.s.Event(n - 1)
		if err != nil {
			return 0, false
		}
		if ev.Boundary && (ok == nil || ok(ev)) {
			if nth--; nth == 0 {
				return n - 1, true
			}
		}
	}
	return 0, false
}

// report prints a stop and remembers its thread as current. The call the
// replay stood before at the last stop, if it has been made since (the
// stop is past its event: not a move backwards, nor a step before it),
// gets a line with its result first.
func (r *REPL) report(st Stop, err error) error {
	if err != nil {
		return err
	}
	return r.reportAs(st, r.stopLine)
}

// reportAs is report with the stop's line from line.
func (r *REPL) reportAs(st Stop, line func(Stop) string) error {
	if b := r.before; b != nil && st.Event > b.N {
		if v, ok := r.s.Result(b.N); ok {
			r.printf("#%d %s returned %s\n", b.N, abi.SyscallName(b.Nr), strace.FormatResult(strace.Call{Nr: b.Nr, Done: true, Result: v}))
		}
	}
	r.before = nil
	if ev, err := r.s.Event(st.Event); err == nil && st.Kind == StopEvent && ev.Kind == EventSyscall && !ev.HasResult {
		r.before = &ev
	}
	r.cur = st.Tid
	r.printf("%s\n", line(st))
	if st.Kind == StopBreakpoint {
		r.dropTemp(func(b *breakpoint) bool { return b.addr == st.Addr })
	}
	return nil
}

// gotoEvent replays to boundary n, or to the end if n is past the last.
func (r *REPL) gotoEvent(n uint64) error {
	st, err := r.s.Goto(n)
	if err == nil {
		r.track(st)
	}
	return r.report(st, err)
}

// runTo is a forward command's run to boundary to: a breakpoint,
// watchpoint or signal stop on the way ends it first, as gdb's step and
// next stop at a breakpoint (a replay to the boundary passes them).
func (r *REPL) runTo(to uint64) error {
	if !r.hasCodeBreaks() {
		return r.gotoEvent(to)
	}
	st, err := r.forward(&r.pos, to)
	if err == nil && !isCode(st) {
		r.track(st)
	}
	return r.report(st, err)
}

func (r *REPL) cmdStep(args []string) error {
	n, err := count("step", args)
	if err != nil {
		return err
	}
	to, ok := r.boundaryAfter(ahead(r.s.Where()), n, nil)
	if !ok {
		to = r.s.Len() // the end
	}
	return r.runTo(to)
}

func (r *REPL) cmdNext(args []string) error {
	n, err := count("next", args)
	if err != nil {
		return err
	}
	th, err := r.thread()
	if err != nil {
		return err
	}
	to, ok := r.boundaryAfter(ahead(r.s.Where()), n, func(ev Event) bool { return ev.Tid == th.Tid })
	if !ok {
		return fmt.Errorf("next: thread %d has no further event in the recording", th.Tid)
	}
	return r.runTo(to)
}

func (r *REPL) cmdReverseStep(args []string) error {
	n, err := count("reverse-step", args)
	if err != nil {
		return err
	}
	if st := r.s.Where(); st.Kind == StopExited && st.ExitCode > 128 {
		// From the end of a program a signal killed: to its stop.
		st, err := r.backFromEnd()
		if err := r.report(st, err); err != nil || n == 1 {
			return err
		}
		n--
	}
	if !r.hasCodeBreaks() {
		// Only event boundaries: straight there.
		st := r.s.Where()
		if st.Kind == StopStart {
			return errors.New("reverse-step: at the start of the recording")
		}
		to, ok := r.boundaryBefore(st.Event, n, nil)
		if !ok {
			return r.restart()
		}
		return r.gotoEvent(to)
	}
	// Back to the previous stop, a boundary or a breakpoint hit: where a
	// step from a breakpoint began.
	for range n {
		var err error
		if rw, ok := r.rewinder(); ok {
			err = r.rewindContinue(rw, "reverse-step", nil)
		} else {
			err = r.reverse("reverse-step", nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// restart goes back to the start.
func (r *REPL) restart() error {
	st, err := r.s.Restart()
	if err == nil {
		r.track(st)
	}
	return r.report(st, err)
}

func (r *REPL) cmdGoto(args []string) error {
	if err := wantArgs("goto", args, 1, 1); err != nil {
		return err
	}
	switch args[0] {
	case "start":
		return r.restart()
	case "end":
		last, ok := r.boundaryBefore(r.s.Len(), 1, nil)
		if !ok {
			return errors.New("goto: the recording has no event to stop at")
		}
		return r.gotoEvent(last)
	}
	n, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil {
		return fmt.Errorf("goto: %q is not an event number", args[0])
	}
	if n >= r.s.Len() {
		return fmt.Errorf("goto: the recording has events 0 to %d", r.s.Len()-1)
	}
	ev, err := r.s.Event(n)
	if err != nil {
		return err
	}
	if !ev.Boundary {
		// Stop at the first boundary at or after it.
		next, ok := r.boundaryAfter(n, 1, nil)
		if !ok {
			return fmt.Errorf("goto: event %d (%s) is past the last event a replay stops at", n, ev.Text)
		}
		r.printf("event %d is not a syscall the replay stops before; going to event %d\n", n, next)
		n = next
	}
	return r.gotoEvent(n)
}

func (r *REPL) cmdWhen(args []string) error {
	if err := wantArgs("when", args, 0, 0); err != nil {
		return err
	}
	st := r.s.Where()
	r.printf("event %d of %d", st.Event, r.s.Len())
	if st.Tid != 0 {
		r.printf(", thread %d", st.Tid)
	}
	if st.Kind != StopExited {
		r.printf(", time %d.%09ds", st.Time/1e9, st.Time%1e9)
	}
	r.printf(" (%s)\n", stopName(st.Kind))
	return nil
}

func (r *REPL) cmdStepi(args []string) error {
	n, err := count("stepi", args)
	if err != nil {
		return err
	}
	th, err := r.thread()
	if err != nil {
		return err
	}
	st, err := r.s.Stepi(th.Tid, n)
	if err == nil {
		if isCode(st) {
			r.pos.key(st)
		} else if st.Event != r.pos.event || r.pos.boundary {
			r.pos = position{event: st.Event, step: true}
		} else {
			r.pos.step = true
		}
	}
	if err := r.report(st, err); err != nil {
		return err
	}
	if st.Tid != 0 {
		r.cur = th.Tid
	}
	return nil
}

func (r *REPL) cmdThread(args []string) error {
	if err := wantArgs("thread", args, 0, 1); err != nil {
		return err
	}
	if len(args) == 0 {
		th, err := r.thread()
		if err != nil {
			return err
		}
		r.printf("current thread %d (process %d)\n", th.Tid, th.Pid)
		return nil
	}
	tid, err := strconv.Atoi(args[0])
	if err != nil {
		return fmt.Errorf("thread: %q is not a thread id", args[0])
	}
	for _, t := range r.s.Threads() {
		if t.Tid == tid {
			r.cur = tid
			r.printf("current thread %d (process %d)\n", t.Tid, t.Pid)
			return nil
		}
	}
	return fmt.Errorf("thread: no live thread %d (\"info threads\" lists them)", tid)
}

func (r *REPL) cmdEvents(args []string) error {
	if err := wantArgs("events", args, 0, 2); err != nil {
		return err
	}
	from, n := r.s.Where().Event, uint64(20)
	for i, a := range args {
		v, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			return fmt.Errorf("events: %q is not a number", a)
		}
		if i == 0 {
			from = v
		} else {
			n = v
		}
	}
	if from >= r.s.Len() {
		return fmt.Errorf("events: the recording has events 0 to %d", r.s.Len()-1)
	}
	// The thread that ran before from: a switch is a boundary of another.
	prev := 0
	if b, ok := r.boundaryBefore(from, 1, nil); ok {
		if ev, err := r.s.Event(b); err == nil {
			prev = ev.Tid
		}
	}
	for i := from; i < r.s.Len() && i < from+n; i++ {
		ev, err := r.s.Event(i)
		if err != nil {
			return err
		}
		if ev.Boundary && prev != 0 && ev.Tid != prev {
			r.printf("     --- thread %d runs (was %d) ---\n", ev.Tid, prev)
		}
		if ev.Boundary {
			prev = ev.Tid
		}
		who := fmt.Sprintf("tid %-4d", ev.Tid)
		if ev.Tid == 0 {
			who = "host    "
		}
		r.printf("#%-4d %s %s\n", i, who, eventSummary(ev, i == r.s.Len()-1))
	}
	return nil
}

// eventSummary describes a recorded event in a few words; last says it
// is the recording's last, which repeats the root process's exit to end
// it.
func eventSummary(ev Event, last bool) string {
	switch ev.Kind {
	case EventSyscall:
		s := abi.SyscallName(ev.Nr)
		if ev.HasResult {
			s += " = " + strace.FormatResult(strace.Call{Nr: ev.Nr, Done: true, Result: ev.Result})
		}
		return s
	case EventSignal:
		return "--- " + strace.Signal(ev.Signal) + " ---"
	case EventClone:
		return fmt.Sprintf("+++ thread %d created +++", ev.Child)
	case EventExit:
		switch {
		case ev.Group && last:
			return fmt.Sprintf("the recording ends (process %d's status %#x)", ev.Pid, ev.Status)
		case ev.Group:
			return fmt.Sprintf("+++ process %d exited, status %#x +++", ev.Pid, ev.Status)
		}
		return "+++ thread exited +++"
	}
	return ev.Text
}
