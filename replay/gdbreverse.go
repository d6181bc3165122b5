package replay

import (
	"errors"
	"fmt"

	"github.com/hermitdbg/hermit/gdbstub"
)

// GDBTarget's reverse execution and checkpoints (gdbstub.Reverser and
// gdbstub.Checkpointer), over its Timeline.

var (
	_ gdbstub.Reverser     = (*GDBTarget)(nil)
	_ gdbstub.KeepReverser = (*GDBTarget)(nil)
	_ gdbstub.Checkpointer = (*GDBTarget)(nil)
)

// Close kills the replay's runs, the checkpoints' too.
func (t *GDBTarget) Close() error { return t.tl.Close() }

// ReverseContinue implements gdbstub.Reverser. Stops in other processes
// are passed by, as going forwards.
func (t *GDBTarget) ReverseContinue() (gdbstub.Stop, error) {
	return t.ReverseContinueWhere(nil)
}

// ReverseContinueWhere implements gdbstub.KeepReverser: the Timeline's
// search asks keep at each of the process's stops it makes.
func (t *GDBTarget) ReverseContinueWhere(keep func(gdbstub.Stop) bool) (gdbstub.Stop, error) {
	var where func(Stop) bool
	if keep != nil {
		where = func(st Stop) bool {
			g, ours := t.convert(st)
			return !ours || keep(g)
		}
	}
	if t.catch.on {
		return t.reverseCatching(where)
	}
	return t.reverseToBreak(where)
}

// reverseToBreak goes back to the latest stop of the process's
// breakpoints, watchpoints and signals that keep keeps (nil: any).
func (t *GDBTarget) reverseToBreak(keep func(Stop) bool) (gdbstub.Stop, error) {
	for {
		st, err := t.tl.ReverseContinueWhere(keep)
		if g, done, err := t.reverseEnd(err); done {
			return g, err
		}
		if t.beforeStart() {
			return t.atBegin()
		}
		g, ours := t.convert(st)
		if ours || t.intr.Swap(false) {
			return t.stopped(g), nil
		}
	}
}

// ReverseStep implements gdbstub.Reverser.
func (t *GDBTarget) ReverseStep(vtid int) (gdbstub.Stop, error) {
	th, err := t.thread(vtid)
	if err != nil {
		return t.last, err
	}
	st, err := t.tl.ReverseStep(th.Tid)
	if errors.Is(err, ErrThreadStart) {
		// Where it stands: the start of its history, in that thread.
		g := t.last
		g.Kind, g.Tid, g.Begin = gdbstub.StopStart, vtid, true
		return t.stopped(g), gdbstub.ErrNoHistory
	}
	if g, done, err := t.reverseEnd(err); done {
		return g, err
	}
	if t.beforeStart() {
		return t.atBegin()
	}
	g, _ := t.convert(st)
	if g.Kind == gdbstub.StopStart || g.Kind == gdbstub.StopBreakpoint {
		g = gdbstub.Stop{Kind: gdbstub.StopStep, Tid: vtid}
	}
	return t.stopped(g), nil
}

// reverseEnd handles a reverse command's error: the start of the
// recording, an interrupt, a failure (done set), or none.
func (t *GDBTarget) reverseEnd(err error) (g gdbstub.Stop, done bool, _ error) {
	switch {
	case err == nil:
		return g, false, nil
	case errors.Is(err, ErrHistoryStart):
		g, err = t.atBegin()
	case errors.Is(err, ErrInterrupted):
		g, err = t.interrupted()
	default:
		g = t.last
	}
	return g, true, err
}

// interrupted is the stop of a reverse command the debugger interrupted:
// where it began.
func (t *GDBTarget) interrupted() (gdbstub.Stop, error) {
	t.intr.Store(false)
	g, _ := t.convert(t.s.LastStop())
	g.Kind = gdbstub.StopInterrupt
	return t.stopped(g), nil
}

// SetProgress has fn receive a line now and then while a reverse command
// steps through a long stretch.
func (t *GDBTarget) SetProgress(fn func(string)) { t.tl.opts.Progress = fn }

// beforeStart reports whether the replay went back past where the
// debugged process has its program (--onprocess): the start of its
// history, before which it runs another program or does not exist.
func (t *GDBTarget) beforeStart() bool { return t.start > 0 && t.s.Event() < t.start }

// atBegin is the stop at the start of the recording, going backwards, or
// of the debugged process's program.
func (t *GDBTarget) atBegin() (gdbstub.Stop, error) {
	if t.beforeStart() {
		if _, err := t.Goto(t.start); err != nil {
			return t.last, err
		}
	}
	g, _ := t.convert(t.s.LastStop())
	g.Kind, g.Begin = gdbstub.StopStart, true
	return t.stopped(g), gdbstub.ErrNoHistory
}

// Checkpoint implements gdbstub.Checkpointer.
func (t *GDBTarget) Checkpoint(where string) (int, error) {
	id, err := t.tl.Checkpoint()
	if err == nil && where != "" {
		if t.where == nil {
			t.where = map[int]string{}
		}
		t.where[id] = where
	}
	return id, err
}

// RestartCheckpoint implements gdbstub.Checkpointer.
func (t *GDBTarget) RestartCheckpoint(id int) (gdbstub.Stop, error) {
	st, err := t.tl.RestartCheckpoint(id)
	if err != nil && st.Reason != ReasonExited {
		return t.last, err
	}
	t.ended(st, err)
	g, _ := t.convert(st)
	return t.stopped(g), nil
}

// DeleteCheckpoint implements gdbstub.Checkpointer.
func (t *GDBTarget) DeleteCheckpoint(id int) error { return t.tl.DeleteCheckpoint(id) }

// Checkpoints implements gdbstub.Checkpointer.
func (t *GDBTarget) Checkpoints() []gdbstub.Checkpoint {
	mine, _ := t.tl.Checkpoints()
	out := make([]gdbstub.Checkpoint, 0, len(mine))
	for _, c := range mine {
		w := t.where[c.ID]
		if w == "" {
			w = c.Where
		}
		out = append(out, gdbstub.Checkpoint{ID: c.ID, When: c.Event, Where: w})
	}
	return out
}

// describeCheckpoints lists tl's checkpoints, one line each, and the runs
// kept automatically.
func describeCheckpoints(tl *Timeline) []string {
	mine, auto := tl.Checkpoints()
	return checkpointLines(mine, auto)
}

// checkpointLines describes the user's checkpoints, one line each, and
// the runs kept automatically; nothing when there are neither.
func checkpointLines(mine, auto []CheckpointInfo) []string {
	var out []string
	for _, c := range mine {
		state := "replays from an earlier run"
		if c.Ready {
			state = fmt.Sprintf("ready, %s of guest memory", mib(c.RSS))
		}
		out = append(out, fmt.Sprintf("%d: event %d, %s (%s)", c.ID, c.Event, c.Where, state))
	}
	var rss int64
	for _, c := range auto {
		rss += c.RSS
	}
	switch {
	case len(auto) > 0 && len(mine) > 0:
		out = append(out, fmt.Sprintf("and %d runs kept automatically, %s of guest memory", len(auto), mib(rss)))
	case len(auto) > 0:
		out = append(out, fmt.Sprintf("no checkpoints; %d runs kept automatically, %s of guest memory", len(auto), mib(rss)))
	}
	return out
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
