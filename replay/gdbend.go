package replay

import (
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/gdbstub"
	"github.com/hermitdbg/hermit/repl"
)

// The stop at the end, for gdb (gdbstub.EndStopper). gdb forgets a
// process it was told ended and then refuses to go back, so a forward
// command that would end the debugged process stops first at the entry
// of the call that ends it (its exit_group, or the exit of its last
// thread): the recording's last boundary of the process. The next
// forward command from there ends it. A process killed by a signal has
// no such call: gdb stops at the signal first, as always.

var _ gdbstub.EndStopper = (*GDBTarget)(nil)

// endStop is where the end stop is.
type endStop struct {
	on bool
	// looked: ev was looked up; ev is the event of the call that ends
	// the process, -1 if there is none.
	looked bool
	ev     int64
}

// StopAtEnd implements gdbstub.EndStopper.
func (t *GDBTarget) StopAtEnd(on bool) { t.end.on = on }

// endEvent returns the event at whose boundary the end stop is, if it is
// on and still ahead of the replay.
func (t *GDBTarget) endEvent() (uint64, bool) {
	if !t.end.on {
		return 0, false
	}
	if !t.end.looked {
		// A table that cannot be read leaves no end stop (catch syscall
		// says why); it is not read again at every command.
		t.end.looked, t.end.ev = true, -1
		evs, _ := t.events()
		for n := len(evs) - 1; n >= 0; n-- {
			e := evs[n]
			if int(e.pid) != t.vpid {
				continue
			}
			if e.kind == repl.EventExit && e.group && killedBy(e.aux) != 0 {
				// A signal ended it: no call did, whatever its other
				// threads' last calls were (their exits).
				break
			}
			if !e.boundary {
				continue
			}
			if e.kind == repl.EventSyscall && (e.nr == abi.SYS_EXIT_GROUP || e.nr == abi.SYS_EXIT) {
				t.end.ev = int64(n)
			}
			break
		}
	}
	if t.end.ev < 0 {
		return 0, false
	}
	n := uint64(t.end.ev)
	entry, atEntry := t.atEntry()
	at := t.s.Event() == n && (t.last.End || atEntry && entry == n)
	if t.s.Event() > n || at {
		return 0, false
	}
	return n, true
}

// killedBy returns the signal that ended a process of wait status
// status, or 0 if it exited.
func killedBy(status int64) int {
	if sig := int(status & 0x7f); sig != 0 && sig != 0x7f {
		return sig
	}
	return 0
}

// continueTo continues the replay, stopping also at event boundary n if
// stop is set.
func (t *GDBTarget) continueTo(n uint64, stop bool) (Stop, error) {
	if stop {
		return t.tl.ContinueTo(n)
	}
	return t.tl.Continue()
}

// events returns the recording's event table, read once.
func (t *GDBTarget) events() ([]replEvent, error) {
	if t.catch.evs == nil {
		evs, err := readEvents(t.rec)
		if err != nil {
			return nil, err
		}
		t.catch.evs = evs
	}
	return t.catch.evs, nil
}

// atEnd is the end stop, the replay at event n's boundary.
func (t *GDBTarget) atEnd(n uint64) gdbstub.Stop {
	return t.stopped(gdbstub.Stop{Kind: gdbstub.StopStart, Tid: int(t.catch.evs[n].tid), End: true, Note: t.childrenNote()})
}

// pastEnd is the end stop for a forward command that ended the process
// from before it (a step over the call that ends it): the replay goes
// back to the call's entry.
func (t *GDBTarget) pastEnd(n uint64) (gdbstub.Stop, error) {
	st, err := t.tl.RunToEvent(n)
	if err != nil {
		return t.last, err
	}
	if st.Reason != ReasonEvent {
		g, _ := t.convert(st)
		return t.stopped(g), nil
	}
	return t.atEnd(n), nil
}
