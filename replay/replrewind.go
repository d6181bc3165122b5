package replay

import (
	"errors"

	"github.com/hermitdbg/hermit/repl"
)

// REPLSession's reverse execution and checkpoints (repl.Rewinder), over
// its Timeline.

var (
	_ repl.Rewinder     = (*REPLSession)(nil)
	_ repl.KeepRewinder = (*REPLSession)(nil)
)

// ReverseStepi implements repl.Rewinder.
func (rs *REPLSession) ReverseStepi(vtid int) (repl.Stop, error) {
	th, err := rs.thread(vtid)
	if err != nil {
		return rs.Where(), err
	}
	st, err := rs.tl.ReverseStep(th.Tid)
	return rs.reversed(st, err)
}

// ReverseContinue implements repl.Rewinder.
func (rs *REPLSession) ReverseContinue() (repl.Stop, error) {
	return rs.reversed(rs.tl.ReverseContinue())
}

// ReverseContinueWhere implements repl.KeepRewinder.
func (rs *REPLSession) ReverseContinueWhere(keep func(repl.Stop) bool) (repl.Stop, error) {
	return rs.reversed(rs.tl.ReverseContinueWhere(func(st Stop) bool { return keep(rs.convert(st)) }))
}

// reversed converts the stop of a reverse command.
func (rs *REPLSession) reversed(st Stop, err error) (repl.Stop, error) {
	rs.reversedTo = nil
	if errors.Is(err, ErrHistoryStart) && !errors.Is(err, ErrThreadStart) {
		return rs.Where(), repl.ErrAtStart
	}
	if err != nil {
		return rs.Where(), err
	}
	out := rs.convert(st)
	if t, err := rs.s.Time(); err == nil {
		out.Time = t
	}
	rs.reversedTo = &out
	return out, nil
}

// SetProgress has fn receive a line now and then while a reverse command
// steps through a long stretch.
func (rs *REPLSession) SetProgress(fn func(string)) { rs.tl.opts.Progress = fn }

// Checkpoint implements repl.Rewinder.
func (rs *REPLSession) Checkpoint() (int, error) { return rs.tl.Checkpoint() }

// RestartCheckpoint implements repl.Rewinder.
func (rs *REPLSession) RestartCheckpoint(id int) (repl.Stop, error) {
	return rs.stop(rs.tl.RestartCheckpoint(id))
}

// DeleteCheckpoint implements repl.Rewinder.
func (rs *REPLSession) DeleteCheckpoint(id int) error { return rs.tl.DeleteCheckpoint(id) }

// Checkpoints implements repl.Rewinder.
func (rs *REPLSession) Checkpoints() []string { return describeCheckpoints(rs.tl) }
