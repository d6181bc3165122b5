package replay

import (
	"fmt"
	"strings"

	"errors"

	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/gdbstub"
	"github.com/hermitdbg/hermit/repl"
)

// gdb's catch syscall (gdbstub.SyscallCatcher). Every syscall a guest
// thread made is an event of the recording, at whose boundary the thread
// stands before the call: that is the entry stop. The return stop is one
// step of the thread from there: the call made, the instruction after
// it next. Going backwards, the stop is the entry of the latest call
// before, or a breakpoint's stop if that comes later.

var _ gdbstub.SyscallCatcher = (*GDBTarget)(nil)

// syscallCatch is what catch syscall asked for, and where the last entry
// stop was.
type syscallCatch struct {
	on  bool
	nrs map[int]bool // nil: every syscall
	// evs is the recording's event table, read at the first catch.
	evs []replEvent
	// entry is the event of the last stop at a syscall's entry, whose
	// return comes next going forwards; -1 for none.
	entry int64
	// note, if set, says at the next stop which of the syscalls asked
	// for catch syscall cannot stop at (notCaught); said is the last
	// note made.
	note, said string
}

// CatchSyscalls implements gdbstub.SyscallCatcher.
func (t *GDBTarget) CatchSyscalls(on bool, nrs []int) error {
	if on {
		if _, err := t.events(); err != nil {
			return err
		}
	}
	t.catch.on, t.catch.nrs = on, nil
	var never []string
	if len(nrs) > 0 {
		t.catch.nrs = map[int]bool{}
		for _, n := range nrs {
			t.catch.nrs[n] = true
			if notCaught[n] {
				never = append(never, abi.SyscallName(n))
			}
		}
	}
	// gdb turns catching off at each stop and sends its set again at
	// each resume: said once per set.
	if on {
		note := ""
		if len(never) > 0 {
			note = fmt.Sprintf("hermit: catch syscall %s: no stop there: the recording has these as the creation of a thread or process, or an exec, not as calls", strings.Join(never, ", "))
		}
		if note != t.catch.said {
			t.catch.note, t.catch.said = note, note
		}
	}
	return nil
}

// notCaught are the syscalls catch syscall never stops at: the recording
// has no call event for them, only what they did (a thread or process
// made, a program exec'd).
var notCaught = map[int]bool{
	abi.SYS_CLONE: true, abi.SYS_CLONE3: true, abi.SYS_FORK: true, abi.SYS_VFORK: true,
	abi.SYS_EXECVE: true, abi.SYS_EXECVEAT: true,
}

// caught reports whether event n is the entry of a syscall of the
// debugged process that catch syscall asked for.
func (t *GDBTarget) caught(n uint64) bool {
	if n >= uint64(len(t.catch.evs)) {
		return false
	}
	e := t.catch.evs[n]
	return e.kind == repl.EventSyscall && int(e.pid) == t.vpid && (t.catch.nrs == nil || t.catch.nrs[int(e.nr)])
}

// entryStop is the stop at the entry of event n's syscall.
func (t *GDBTarget) entryStop(n uint64) gdbstub.Stop {
	e := t.catch.evs[n]
	t.catch.entry = int64(n)
	return t.stopped(gdbstub.Stop{Kind: gdbstub.StopSyscallEntry, Tid: int(e.tid), Syscall: int(e.nr)})
}

// atEntry reports the event of the syscall entry the debugger stands at,
// if the last stop was one.
func (t *GDBTarget) atEntry() (uint64, bool) {
	if t.last.Kind != gdbstub.StopSyscallEntry || t.catch.entry < 0 || uint64(t.catch.entry) != t.s.Event() {
		return 0, false
	}
	return uint64(t.catch.entry), true
}

// continueCatching is Continue with syscalls caught: the return of the
// call the debugger stands at the entry of, else on to the next caught
// entry or the first breakpoint, watchpoint or signal before it.
func (t *GDBTarget) continueCatching() (gdbstub.Stop, error) {
	from := t.s.Event()
	end, toEnd := t.endEvent()
	if n, ok := t.atEntry(); ok {
		t.catch.entry = -1
		e := t.catch.evs[n]
		th, err := t.thread(int(e.tid))
		if err != nil {
			return t.last, err
		}
		st, err := t.tl.Step(th.Tid, 1)
		if err != nil && st.Reason != ReasonExited {
			return t.last, err
		}
		t.ended(st, err)
		g, ours := t.convert(st)
		switch {
		case st.Reason == ReasonStep && st.Tid == th.Tid:
			return t.stopped(gdbstub.Stop{Kind: gdbstub.StopSyscallReturn, Tid: int(e.tid), Syscall: int(e.nr)}), nil
		case toEnd && g.Kind == gdbstub.StopExited && err == nil:
			return t.pastEnd(end)
		case ours || st.Reason == ReasonExited || t.intr.Swap(false):
			return t.stopped(g), nil
		}
		from = n + 1
	}
	t.catch.entry = -1
	for {
		next := uint64(len(t.catch.evs))
		for n := from; n < next; n++ {
			if t.caught(n) {
				next = n
				break
			}
		}
		end, toEnd := t.endEvent()
		toEnd = toEnd && end < next
		if toEnd {
			next = end
		}
		st, err := t.continueTo(next, next < uint64(len(t.catch.evs)))
		if err != nil && st.Reason != ReasonExited {
			return t.last, err
		}
		t.ended(st, err)
		switch {
		case st.Reason == ReasonEvent && st.Event == next && toEnd:
			return t.atEnd(next), nil
		case st.Reason == ReasonEvent && st.Event == next:
			return t.entryStop(next), nil
		}
		if g, ours := t.convert(st); ours || t.intr.Swap(false) {
			return t.stopped(g), nil
		}
		from = t.s.Event()
	}
}

// reverseCatching is ReverseContinueWhere with syscalls caught: back to
// the latest caught entry, unless a breakpoint, watchpoint or signal of
// the process that keep keeps comes after it.
func (t *GDBTarget) reverseCatching(keep func(Stop) bool) (gdbstub.Stop, error) {
	before := t.s.Event() // a stop with n events made comes after boundary n-1
	if n, ok := t.atEntry(); ok {
		before = n
	} else if t.last.Kind == gdbstub.StopSyscallReturn && before > 0 && t.caught(before-1) {
		// Just after the call: its entry is the latest.
		return t.gotoEntry(before - 1)
	}
	latest, found := uint64(0), false
	for n := before; n > t.start && n > 0; n-- {
		if t.caught(n - 1) {
			latest, found = n-1, true
			break
		}
	}
	g, err := t.reverseToBreak(keep)
	switch {
	case errors.Is(err, gdbstub.ErrNoHistory) && found:
		return t.gotoEntry(latest)
	case err != nil:
		return g, err
	case found && latest >= t.s.Event():
		// The boundary comes after the stop of the breakpoint.
		return t.gotoEntry(latest)
	}
	return g, nil
}

// gotoEntry brings the replay to the entry of event n's syscall.
func (t *GDBTarget) gotoEntry(n uint64) (gdbstub.Stop, error) {
	st, err := t.tl.RunToEvent(n)
	if err != nil {
		return t.last, err
	}
	t.ended(st, err)
	return t.entryStop(n), nil
}
