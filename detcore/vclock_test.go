package detcore_test

import (
	"slices"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/detcoretest"
)

// clockRun runs a guest whose reads go through a clock page and returns
// what they read, with the run's result.
func clockRun(t *testing.T, cfg detcore.Config, setup func(*detcoretest.Tracer), root ...step) ([]detcoretest.ClockRead, detcore.Result, *detcoretest.Tracer) {
	t.Helper()
	tr := newGuest(root...)
	tr.UseClockPage()
	if setup != nil {
		setup(tr)
	}
	res := run(t, cfg, tr)
	return tr.ClockReads(), res, tr
}

// checkRising fails t unless the reads, page and trapped alike, rise.
func checkRising(t *testing.T, reads []detcoretest.ClockRead) {
	t.Helper()
	for i := 1; i < len(reads); i++ {
		if reads[i].Ns <= reads[i-1].Ns {
			t.Fatalf("read %d (%+v) is not after read %d (%+v)", i, reads[i], i-1, reads[i-1])
		}
	}
}

func trapped(reads []detcoretest.ClockRead) int {
	n := 0
	for _, r := range reads {
		if r.Trapped {
			n++
		}
	}
	return n
}

// TestClockPageAlone: a thread that runs alone reads the clock through
// its page without a single stop, one quantum a read, and the engine's
// clock (a trapped read after them) follows on.
func TestClockPageAlone(t *testing.T) {
	reads, res, _ := clockRun(t, detcore.Config{}, nil,
		detcoretest.ReadClock(5000), readClock(1), detcoretest.ExitGroup(0))
	if len(reads) != 5000 || trapped(reads) != 0 {
		t.Fatalf("%d reads, %d trapped; want 5000 through the page", len(reads), trapped(reads))
	}
	checkRising(t, reads)
	if d := reads[4999].Ns - reads[0].Ns; d != 4999*quantum {
		t.Errorf("5000 reads span %d ns, want 4999 quanta", d)
	}
	if res.Stats.ClockPageReads != 5000 || res.Stats.ClockPages != 1 {
		t.Errorf("stats: %d page reads, %d pages; want 5000, 1", res.Stats.ClockPageReads, res.Stats.ClockPages)
	}
}

// TestClockPageTrapsForOthers: while another thread is ready to run, a
// thread polling the clock makes a scheduling point every so many reads,
// where the other one gets its turns; every read, page or trapped, and
// every value the engine answers, comes after the one before.
func TestClockPageTrapsForOthers(t *testing.T) {
	root := []step{
		joinable(2, repeat(6, detcoretest.Syscall(abi.SYS_GETPPID))...),
		detcoretest.ReadClock(20000), join(2), detcoretest.ExitGroup(0),
	}
	cfg := detcore.Config{Timeslice: 32}
	reads, _, tr := clockRun(t, cfg, nil, root...)
	if len(reads) != 20000 {
		t.Fatalf("%d reads, want 20000", len(reads))
	}
	checkRising(t, reads)
	n := trapped(reads)
	if n == 0 || n > 20000/512 {
		t.Errorf("%d of 20000 reads trapped; want a scheduling point every ~1000 reads", n)
	}
	// The other thread ran between the poller's reads, not after them all.
	last, lastRead := -1, -1
	for i, c := range tr.Calls() {
		switch {
		case c.Tid == 2 && c.Nr == abi.SYS_GETPPID:
			last = i
		case c.Tid == 1 && c.Nr == abi.SYS_CLOCK_GETTIME:
			lastRead = i
		}
	}
	if last < 0 || last > lastRead {
		t.Errorf("thread 2's last call is call %d, after the poller's last trapped read (%d)", last, lastRead)
	}
	again, _, _ := clockRun(t, cfg, nil, root...)
	if !slices.Equal(reads, again) {
		t.Error("the same guest read other values, or trapped elsewhere, the second time")
	}
}

// TestClockPageDeadline: a thread that sleeps while another polls the
// clock wakes at the read that reaches its deadline, not at some later
// stop: the poller's read traps there.
func TestClockPageDeadline(t *testing.T) {
	const nap = 3 * time.Millisecond
	root := []step{
		joinable(2, readClock(1), sleep(tsIn), readClock(2)),
		detcoretest.Syscall(abi.SYS_SCHED_YIELD), // the sleeper goes first
		detcoretest.ReadClock(10000), join(2), detcoretest.ExitGroup(0),
	}
	// A long timeslice: the sleeper reads and sleeps in one go, and the
	// poller's trap at the deadline ends its turn all the same (it does
	// not keep the rest of its slice).
	reads, _, tr := clockRun(t, detcore.Config{Timeslice: 32}, func(tr *detcoretest.Tracer) { tr.SetTimespec(tsIn, nap) }, root...)
	checkRising(t, reads)
	at := func(slot uint64) int64 { return int64(tr.Word64(tsOut+16*slot)*1e9 + tr.Word64(tsOut+16*slot+8)) }
	// The sleeper woke no more than a few quanta after its deadline.
	if d := at(2) - at(1); d < int64(nap) || d > int64(nap)+4*quantum {
		t.Errorf("the sleeper read the clock %d ns apart around its sleep; want %v and a few quanta", d, nap)
	}
	if trapped(reads) == 0 {
		t.Error("no read trapped at the deadline")
	}
}

// TestClockPageFallback: without a page every read is the syscall, and
// the values rise all the same.
func TestClockPageFallback(t *testing.T) {
	tr := newGuest(detcoretest.ReadClock(50), detcoretest.ExitGroup(0))
	res := run(t, detcore.Config{}, tr)
	reads := tr.ClockReads()
	if len(reads) != 50 || trapped(reads) != 50 {
		t.Fatalf("%d reads, %d trapped; want 50, all trapped", len(reads), trapped(reads))
	}
	checkRising(t, reads)
	if res.Stats.TrappedClocks != 1 || res.Stats.ClockPages != 0 || res.Stats.TrappedClockWhy != "the fake has no clock page" {
		t.Errorf("stats: %d trapped programs (%q), %d pages; want 1 with the tracer's reason, 0", res.Stats.TrappedClocks, res.Stats.TrappedClockWhy, res.Stats.ClockPages)
	}
}
