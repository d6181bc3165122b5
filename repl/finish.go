package repl

import (
	"errors"
	"fmt"
)

// finish runs until the selected frame's function returns to its caller,
// as gdb's finish does: the current thread back at the return address
// with its stack pointer above the frame (a recursive call's return to
// the same address, or another thread's, is not it). A breakpoint,
// watchpoint or signal the user wants, or an event breakpoint, stops it
// first. It needs a replay that records where it stopped between events
// (a Rewinder), so that going back from there is exact.

func (r *REPL) cmdFinish(args []string) error {
	if err := wantArgs("finish", args, 0, 0); err != nil {
		return err
	}
	if r.s.Where().Kind == StopExited {
		return errEnded
	}
	if _, ok := r.rewinder(); !ok {
		return errors.New("finish: this replay cannot stop between events")
	}
	th, _, _, frames, err := r.currentFrames()
	if err != nil {
		return err
	}
	n := r.selectedFrame(th.Tid, frames)
	if n+1 >= len(frames) {
		return errors.New(`finish: not meaningful in the outermost frame`)
	}
	f, caller := frames[n], frames[n+1]
	r.printf("Run till exit from #%d %#x %s\n", n, f.PC, f.Location.String())
	// The user's own breakpoint there stays, and its hits are theirs.
	mine := r.bpName(bpAddr, caller.PC) != "?"
	if !mine {
		if err := r.s.SetBreakpoint(caller.PC); err != nil {
			return fmt.Errorf("finish: %w", err)
		}
		defer func() { _ = r.s.ClearBreakpoint(caller.PC) }()
	}
	for {
		until, ok := r.boundaryAfter(ahead(r.s.Where()), 1, r.matchEvent)
		if !ok {
			until = r.s.Len()
		}
		st, err := r.s.Continue(until)
		if err != nil {
			return r.report(st, err)
		}
		var g Regs
		returned := false
		if st.Kind == StopBreakpoint && st.Addr == caller.PC && st.Tid == th.Tid {
			g, err = r.s.Regs(th.Tid)
			returned = err == nil && g.Rsp >= f.CFA
		}
		switch {
		case returned:
			r.track(st)
			return r.reportAs(st, func(st Stop) string {
				return fmt.Sprintf("#%d tid %d returned to %#x%s (rax %d)", st.Event, st.Tid, st.Addr, r.location(st.Tid, st.Addr), int64(g.Rax))
			})
		case st.Kind == StopBreakpoint && st.Addr == caller.PC && !mine:
			continue // a deeper call's return, or another thread's
		case st.Kind == StopEvent && st.Event != until, !r.wanted(st):
			continue
		}
		r.track(st)
		return r.report(st, nil)
	}
}
