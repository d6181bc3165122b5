package repl

import (
	"errors"
	"fmt"
	"strconv"
)

// Going back between events, exactly, and checkpoints, on a Session that
// can (Rewinder: hermit's replay.Timeline). Without one, the REPL goes back
// by replaying from the start and counting stops (reverse.go).

// Rewinder is a Session that runs backwards between events.
type Rewinder interface {
	// ReverseStepi goes back one instruction of thread tid. At the start
	// of the recording it returns the start stop and ErrAtStart.
	ReverseStepi(tid int) (Stop, error)
	// ReverseContinue goes back to the latest breakpoint, watchpoint or
	// signal stop before the replay; a watchpoint stops before the write
	// (the instruction that makes it is next). With none, it goes to the
	// start and returns ErrAtStart.
	ReverseContinue() (Stop, error)
	// Checkpoint makes a checkpoint at the stop and returns its number;
	// RestartCheckpoint goes to one; Checkpoints describes them.
	Checkpoint() (int, error)
	RestartCheckpoint(id int) (Stop, error)
	DeleteCheckpoint(id int) error
	Checkpoints() []string
}

// ErrAtStart: a reverse command reached the start of the recording.
var ErrAtStart = errors.New("at the start of the recording")

// rewinder returns the Session as a Rewinder, if it is one.
func (r *REPL) rewinder() (Rewinder, bool) {
	rw, ok := r.s.(Rewinder)
	return rw, ok
}

func (r *REPL) cmdReverseStepi(args []string) error {
	n, err := count("reverse-stepi", args)
	if err != nil {
		return err
	}
	rw, ok := r.rewinder()
	if !ok {
		return errors.New("reverse-stepi: this replay cannot go back between events")
	}
	th, err := r.threadOrLast()
	if err != nil {
		return err
	}
	var st Stop
	for i := 0; i < n; i++ {
		if r.s.Where().Kind == StopExited {
			if st, err = r.backFromEnd(); err != nil {
				break
			}
			continue
		}
		if st, err = rw.ReverseStepi(th.Tid); err != nil {
			break
		}
	}
	if errors.Is(err, ErrAtStart) {
		r.printf("reverse-stepi: at the start of the recording\n")
		err = nil
	}
	if err := r.report(st, err); err != nil {
		return err
	}
	if st.Tid != 0 {
		r.cur = th.Tid
	}
	return nil
}

func (r *REPL) cmdReverseNext(args []string) error {
	n, err := count("reverse-next", args)
	if err != nil {
		return err
	}
	th, err := r.threadOrLast()
	if err != nil {
		return err
	}
	at := r.s.Where()
	if at.Kind == StopStart {
		return errors.New("reverse-next: at the start of the recording")
	}
	to, ok := r.boundaryBefore(at.Event, n, func(ev Event) bool { return ev.Tid == th.Tid })
	if !ok {
		return fmt.Errorf("reverse-next: thread %d has no earlier event in the recording", th.Tid)
	}
	return r.gotoEvent(to)
}

// rewindContinue is reverse-continue on a Rewinder: the latest code stop
// before the replay, or the latest event boundary match accepts (nil:
// any, as reverse-step wants), whichever is later.
func (r *REPL) rewindContinue(rw Rewinder, name string, match func(Event) bool) error {
	at := r.s.Where()
	if at.Kind == StopStart {
		return fmt.Errorf("%s: at the start of the recording", name)
	}
	m, haveM := r.boundaryBefore(at.Event, 1, match)
	back, checked := rw.ReverseContinue, false
	if kr, ok := rw.(KeepRewinder); ok && r.hasConditions() {
		back = func() (Stop, error) { return kr.ReverseContinueWhere(r.holds) }
		checked = true
	}
	for {
		st, err := back()
		switch {
		case errors.Is(err, ErrAtStart):
			if haveM {
				return r.gotoEvent(m)
			}
			if name == "reverse-continue" {
				r.printf("no breakpoint before this stop; back at the start\n")
			}
			r.track(st)
			return r.report(st, nil)
		case err != nil:
			return err
		case haveM && m >= st.Event:
			// The event boundary comes after the code stop.
			return r.gotoEvent(m)
		case !r.wanted(st):
			continue // a signal the user did not ask for
		case !checked && !r.holds(st):
			continue // a breakpoint whose condition is false
		}
		r.pos = position{event: st.Event}
		return r.report(st, nil)
	}
}

func (r *REPL) cmdCheckpoint(args []string) error {
	if err := wantArgs("checkpoint", args, 0, 0); err != nil {
		return err
	}
	rw, ok := r.rewinder()
	if !ok {
		return errors.New("checkpoint: this replay has no checkpoints")
	}
	id, err := rw.Checkpoint()
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	r.printf("checkpoint %d at event %d\n", id, r.s.Where().Event)
	return nil
}

func (r *REPL) cmdRestart(args []string) error {
	if err := wantArgs("restart", args, 0, 1); err != nil {
		return err
	}
	if len(args) == 0 {
		return r.restart()
	}
	rw, ok := r.rewinder()
	if !ok {
		return errors.New("restart: this replay has no checkpoints")
	}
	id, err := strconv.Atoi(args[0])
	if err != nil || id < 1 {
		return fmt.Errorf("restart: %q is not a checkpoint number (\"info checkpoints\" lists them)", args[0])
	}
	st, err := rw.RestartCheckpoint(id)
	if err == nil {
		r.pos = position{event: st.Event}
	}
	return r.report(st, err)
}

func (r *REPL) infoCheckpoints() error {
	rw, ok := r.rewinder()
	if !ok {
		return errors.New("info checkpoints: this replay has no checkpoints")
	}
	lines := rw.Checkpoints()
	if len(lines) == 0 {
		r.printf("no checkpoints\n")
	}
	for _, l := range lines {
		r.printf("%s\n", l)
	}
	return nil
}

func (r *REPL) deleteCheckpoint(arg string) error {
	rw, ok := r.rewinder()
	if !ok {
		return errors.New("delete checkpoint: this replay has no checkpoints")
	}
	id, err := strconv.Atoi(arg)
	if err != nil || id < 1 {
		return fmt.Errorf("delete checkpoint: %q is not a checkpoint number", arg)
	}
	return rw.DeleteCheckpoint(id)
}

// backFromEnd goes one step back from the end of the recording: to the
// last call, which ended the thread's process, or, when a signal killed
// the program after it (a crash), to that signal's stop, which a continue
// from the call meets: the place to look at, which a step back passed.
func (r *REPL) backFromEnd() (Stop, error) {
	end := r.s.Where()
	to, _ := r.boundaryBefore(r.s.Len(), 1, nil)
	st, err := r.s.Goto(to)
	if err != nil || end.ExitCode <= 128 {
		return st, err
	}
	for {
		st, err := r.s.Continue(r.s.Len())
		switch {
		case err != nil:
			return st, err
		case st.Kind == StopSignal && st.Signal == end.ExitCode-128:
			return st, nil
		case st.Kind == StopExited:
			return r.s.Goto(to)
		}
	}
}

// threadOrLast is the current thread, or at the end of the recording,
// where none is live, the one that made its last call (exit_group): the
// one a step back from the end goes back into.
func (r *REPL) threadOrLast() (Thread, error) {
	th, err := r.thread()
	if err == nil || r.s.Where().Kind != StopExited {
		return th, err
	}
	if to, ok := r.boundaryBefore(r.s.Len(), 1, nil); ok {
		if ev, eerr := r.s.Event(to); eerr == nil && ev.Tid != 0 {
			return Thread{Tid: ev.Tid, Pid: ev.Pid}, nil
		}
	}
	return th, err
}
