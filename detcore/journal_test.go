package detcore_test

import (
	"reflect"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/detcoretest"
)

// scriptJournal answers Native with outcome for every call numbered nr,
// and keeps what it saw.
type scriptJournal struct {
	nr      int
	outcome detcore.Outcome
	enters  []int // vtids, in order
	exits   []detcore.Call
}

func (j *scriptJournal) Enter(c *detcore.Call) error {
	j.enters = append(j.enters, c.Vtid)
	return nil
}

func (j *scriptJournal) Native(c *detcore.Call) detcore.Outcome {
	if c.Nr != j.nr {
		return detcore.Outcome{}
	}
	return j.outcome
}

func (j *scriptJournal) Exit(c *detcore.Call) (bool, int64, error) {
	j.exits = append(j.exits, *c)
	return false, 0, nil
}

func (j *scriptJournal) Exec(tid, vtid int) error { return nil }

func getpids(n int) []step { return repeat(n, detcoretest.Syscall(abi.SYS_GETPID, 7, 8)) }

// TestJournalExitStopKeepsSchedule: a journal that stops at the exit of
// some calls (as recording does) leaves the schedule exactly as one that
// does not (as replay may): exit stops are not scheduling points.
func TestJournalExitStopKeepsSchedule(t *testing.T) {
	guest := func() *detcoretest.Tracer {
		return newGuest(exiting(append([]step{thread(getpids(5)...), thread(getpids(7)...)}, getpids(2)...))...)
	}
	plain := &scriptJournal{nr: abi.SYS_GETPID}
	tr1 := guest()
	res1 := run(t, detcore.Config{Timeslice: 2, Journal: plain}, tr1)

	stopping := &scriptJournal{nr: abi.SYS_GETPID, outcome: detcore.Outcome{Exit: true}}
	tr2 := guest()
	res2 := run(t, detcore.Config{Timeslice: 2, Journal: stopping}, tr2)

	if len(stopping.exits) != 14 {
		t.Fatalf("journal saw %d exits, want the 14 getpid calls", len(stopping.exits))
	}
	for _, c := range stopping.exits {
		if c.Args[0] != 7 || c.Args[1] != 8 {
			t.Fatalf("exit of %+v: arguments changed", c)
		}
	}
	if !reflect.DeepEqual(plain.enters, stopping.enters) {
		t.Errorf("syscall order without exit stops %v, with %v", plain.enters, stopping.enters)
	}
	if res1.Stats.Turns != res2.Stats.Turns || res1.Stats.Digest != res2.Stats.Digest {
		t.Errorf("turns %d, digest %016x without exit stops; %d, %016x with", res1.Stats.Turns, res1.Stats.Digest, res2.Stats.Turns, res2.Stats.Digest)
	}
	if !reflect.DeepEqual(order(tr1.Calls()), order(tr2.Calls())) {
		t.Errorf("calls ran in another order with exit stops:\n%v\n%v", order(tr1.Calls()), order(tr2.Calls()))
	}
}

func order(calls []detcoretest.Call) []int {
	out := make([]int, len(calls))
	for i, c := range calls {
		out[i] = c.Tid
	}
	return out
}

// TestJournalEmulates: a call the journal emulates does not run; the
// guest gets the journal's result and memory.
func TestJournalEmulates(t *testing.T) {
	j := &scriptJournal{nr: abi.SYS_GETPID, outcome: detcore.Outcome{
		Emulate: true, Result: 42, Mem: []detcore.MemWrite{{Addr: buf, Data: []byte{1, 2, 3, 4}}},
	}}
	tr := newGuest(exiting(getpids(2))...)
	run(t, detcore.Config{Journal: j}, tr)
	n := 0
	for _, c := range tr.Calls() {
		if c.Nr == abi.SYS_GETPID {
			n++
			if !c.Emulated || c.Ret != 42 {
				t.Errorf("getpid ran as %+v; want emulated, returning 42", c)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d getpid calls, want 2", n)
	}
	if got := tr.Word(buf); got != 0x04030201 {
		t.Errorf("guest memory at buf %#x, want the journal's bytes", got)
	}
	if len(j.enters) != 3 { // two getpid and the exit
		t.Errorf("journal saw %d calls enter, want 3", len(j.enters))
	}
}
