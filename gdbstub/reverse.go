package gdbstub

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Reverse execution (bc, bs) and checkpoints (monitor commands), for
// targets that have them.

// Reverser is a Target that runs backwards. Breakpoints and watchpoints
// fire going backwards as going forwards; a watchpoint stops before the
// access that triggers it.
type Reverser interface {
	// ReverseContinue runs back to the latest breakpoint, watchpoint or
	// signal stop before where the target is. With none, it stops at the
	// start of the recording with Stop.Begin set.
	ReverseContinue() (Stop, error)
	// ReverseStep goes back one instruction of thread tid (Stop.Begin at
	// the start of the recording).
	ReverseStep(tid int) (Stop, error)
}

// KeepReverser is a Reverser that passes by, in one search, the stops
// that keep rejects, a breakpoint's hits where its conditions are false
// (agentexpr.go): keep is called at each stop the search makes, with the
// target there (its Registers and ReadMemory answer for that moment).
// Going back one false hit at a time would search once per hit.
type KeepReverser interface {
	ReverseContinueWhere(keep func(Stop) bool) (Stop, error)
}

// EndStopper is a Reverser that can stop where the recorded process is
// about to end, before it ends. gdb forgets a process once told it ended
// (W or X), and then refuses reverse-continue; so for gdb the stub has
// forward commands stop there first (Stop.End: replaylog:end, "No more
// reverse-execution history."), from where gdb can go back, and the
// next forward command ends the process. rr stops there too (with a
// synthetic SIGKILL). Delve and lldb are told of the end at once: Delve
// takes the stop for a breakpoint, and reports the exit status from W.
type EndStopper interface {
	// StopAtEnd turns the stop at the end on or off.
	StopAtEnd(on bool)
}

// Checkpointer is a Target that keeps checkpoints.
type Checkpointer interface {
	// Checkpoint makes one where the target is and returns its id; where
	// describes the place (Delve names it; "" for the target to say).
	Checkpoint(where string) (int, error)
	// RestartCheckpoint goes to checkpoint id.
	RestartCheckpoint(id int) (Stop, error)
	DeleteCheckpoint(id int) error
	// Checkpoints lists them in the order made.
	Checkpoints() []Checkpoint
}

// Checkpoint describes one checkpoint.
type Checkpoint struct {
	ID int
	// When is the event it is at; Where, the place (no tabs).
	When  uint64
	Where string
}

// ErrNoHistory is what a Reverser returns, with Stop.Begin set, when there
// is nothing before (the stub replies with replaylog:begin).
var ErrNoHistory = errors.New("no more reverse-execution history")

// reverseContinue answers bc.
func (s *session) reverseContinue(r *request) []byte {
	rv, ok := s.t.(Reverser)
	if !ok {
		return nil
	}
	back := rv.ReverseContinue
	if kr, ok := rv.(KeepReverser); ok && len(s.conds) > 0 {
		back = func() (Stop, error) { return kr.ReverseContinueWhere(s.stops) }
	}
	return s.reverse(r, func() (Stop, error) { return s.passFalse(back) })
}

// reverseStep answers bs, stepping the Hc thread back.
func (s *session) reverseStep(r *request) []byte {
	rv, ok := s.t.(Reverser)
	if !ok {
		return nil
	}
	tid := s.resolve(s.cThread)
	if s.dead == nil && tid == 0 {
		return errReply
	}
	return s.reverse(r, func() (Stop, error) { return rv.ReverseStep(tid) })
}

// reverse runs a reverse command. Going back revives a process that
// ended.
func (s *session) reverse(r *request, fn func() (Stop, error)) []byte {
	s.allocating = false
	if s.holdStart {
		// Delve resumes once after vRun, backwards after a reverse
		// command: that resume reports where the restart went.
		s.holdStart = false
		return s.stopped(s.t.LastStop())
	}
	st, err := s.run(r.seq, fn)
	if err != nil && !errors.Is(err, ErrNoHistory) {
		s.logf("gdbstub: reverse: %v", err)
		s.console(fmt.Sprintf("hermit: %v\n", err))
		return errReply
	}
	s.dead, s.killed = nil, false
	if errors.Is(err, ErrNoHistory) {
		st.Begin = true
	}
	return s.stopped(st)
}

func init() {
	monitorCmds = append(monitorCmds,
		monitorCmd{"checkpoint", "", "make a checkpoint here (\"restart N\" comes back to it)", (*session).monCheckpoint},
		monitorCmd{"restart", "N", "go to checkpoint N (gdb then needs \"maint flush register-cache\" and \"maint flush dcache\", as after goto)", (*session).monRestart},
		monitorCmd{"info", "checkpoints", "list the checkpoints", (*session).monInfo},
		monitorCmd{"delete", "checkpoint N", "delete checkpoint N", (*session).monDelete},
	)
}

func (s *session) checkpointer() (Checkpointer, error) {
	c, ok := s.t.(Checkpointer)
	if !ok {
		return nil, errors.New("this target has no checkpoints")
	}
	return c, nil
}

func (s *session) monCheckpoint(args []string) (string, error) {
	c, err := s.checkpointer()
	if err != nil {
		return err.Error() + "\n", err
	}
	id, err := c.Checkpoint(strings.Join(args, " "))
	if err != nil {
		return fmt.Sprintf("checkpoint: %v\n", err), err
	}
	// rr's words, which Delve reads the id from.
	return fmt.Sprintf("Checkpoint %d at event %d.\n", id, s.t.When()), nil
}

// checkpointID parses a checkpoint number, as gdb or Delve ("c1") write it.
func checkpointID(arg string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(arg, "c"))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a checkpoint number", arg)
	}
	return n, nil
}

func (s *session) monRestart(args []string) (string, error) {
	c, err := s.checkpointer()
	if err != nil {
		return err.Error() + "\n", err
	}
	if len(args) != 1 {
		return "usage: restart N\n", errBadArgs
	}
	id, err := checkpointID(args[0])
	if err != nil {
		return err.Error() + "\n", errBadArgs
	}
	st, err := c.RestartCheckpoint(id)
	if err != nil {
		return fmt.Sprintf("restart %d: %v\n", id, err), err
	}
	s.dead, s.killed = nil, false
	// No stop reply tells the client of the checkpoint's thread: the
	// one it has selected stays the current one (resolve).
	if st.Note != "" {
		s.console(st.Note + "\n")
	}
	return fmt.Sprintf("At checkpoint %d, event %d.\n", id, s.t.When()), nil
}

func (s *session) monInfo(args []string) (string, error) {
	if len(args) != 1 || args[0] != "checkpoints" {
		return "usage: info checkpoints\n", errBadArgs
	}
	c, err := s.checkpointer()
	if err != nil {
		return err.Error() + "\n", err
	}
	cs := c.Checkpoints()
	if len(cs) == 0 {
		return "No checkpoints.\n", nil
	}
	// rr's table, which Delve reads: a header, then tab-separated rows.
	var b strings.Builder
	b.WriteString("ID\tWhen\tWhere\n")
	for _, cp := range cs {
		fmt.Fprintf(&b, "%d\t%d\t%s\n", cp.ID, cp.When, strings.ReplaceAll(cp.Where, "\t", " "))
	}
	return b.String(), nil
}

func (s *session) monDelete(args []string) (string, error) {
	if len(args) != 2 || args[0] != "checkpoint" {
		return "usage: delete checkpoint N\n", errBadArgs
	}
	c, err := s.checkpointer()
	if err != nil {
		return err.Error() + "\n", err
	}
	id, err := checkpointID(args[1])
	if err != nil {
		return err.Error() + "\n", errBadArgs
	}
	if err := c.DeleteCheckpoint(id); err != nil {
		return err.Error() + "\n", err
	}
	return fmt.Sprintf("Deleted checkpoint %d.\n", id), nil
}
