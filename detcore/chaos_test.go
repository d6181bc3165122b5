package detcore_test

import (
	"slices"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/detcoretest"
)

// callersGuest: the root starts two threads; all three make k getppid
// calls (no yields), then the root joins the others.
func callersGuest(k int) *detcoretest.Tracer {
	call := detcoretest.Syscall(abi.SYS_GETPPID)
	root := []step{joinable(2, repeat(k, call)...), joinable(3, repeat(k, call)...)}
	root = append(root, repeat(k, call)...)
	root = append(root, join(2), join(3), detcoretest.ExitGroup(0))
	return newGuest(root...)
}

// switches counts how often consecutive getppid calls come from
// different threads.
func switches(tids []int) int {
	n := 0
	for i := 1; i < len(tids); i++ {
		if tids[i] != tids[i-1] {
			n++
		}
	}
	return n
}

func chaosRun(t *testing.T, cfg detcore.Config) ([]int, detcore.Result) {
	t.Helper()
	return chaosRunK(t, cfg, 6)
}

func chaosRunK(t *testing.T, cfg detcore.Config, k int) ([]int, detcore.Result) {
	t.Helper()
	tr := callersGuest(k)
	res := run(t, cfg, tr)
	return callers(tr, abi.SYS_GETPPID), res
}

// TestPCTPriorities: without change points, PCT runs the highest-priority
// runnable thread until it ends: each thread's calls come in one block,
// in an order the seed decides, the same for the same seed.
func TestPCTPriorities(t *testing.T) {
	orders := map[string]bool{}
	for seed := uint64(1); seed <= 12; seed++ {
		cfg := detcore.Config{Seed: seed, Heuristic: detcore.PCT, ChaosPoints: []int64{}, Timeslice: 1000}
		tids, res := chaosRun(t, cfg)
		if len(tids) != 18 || switches(tids) != 2 {
			t.Errorf("seed %d: calls by %v; want each thread's 6 calls in one block", seed, tids)
		}
		if len(res.Changes) != 0 {
			t.Errorf("seed %d: %d change points reached, want none", seed, len(res.Changes))
		}
		again, _ := chaosRun(t, cfg)
		if !slices.Equal(tids, again) {
			t.Errorf("seed %d: calls by %v, then by %v", seed, tids, again)
		}
		orders[string(rune(tids[0]))+string(rune(tids[6]))+string(rune(tids[12]))] = true
	}
	if len(orders) < 3 {
		t.Errorf("12 seeds gave %d orders of the three threads; the priorities do not follow the seed", len(orders))
	}
}

// TestPCTChangePoint: a change point drops the running thread below the
// others at that turn: its calls are cut in two, and the run reports it.
func TestPCTChangePoint(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		plain, _ := chaosRun(t, detcore.Config{Seed: seed, Heuristic: detcore.PCT, ChaosPoints: []int64{}, Timeslice: 1000})
		tids, res := chaosRun(t, detcore.Config{Seed: seed, Heuristic: detcore.PCT, ChaosPoints: []int64{12}, Timeslice: 1000})
		if len(res.Changes) != 1 || res.Changes[0].Turn != 12 {
			t.Fatalf("seed %d: changes %+v, want one at turn 12", seed, res.Changes)
		}
		if switches(tids) <= switches(plain) {
			t.Errorf("seed %d: calls by %v with a change point at turn 12, by %v without: no extra switch", seed, tids, plain)
		}
	}
}

// TestPCTSlice: a thread that never blocks or yields loses its turn after
// its slice, so the others run before it ends.
func TestPCTSlice(t *testing.T) {
	tids, _ := chaosRunK(t, detcore.Config{Seed: 3, Heuristic: detcore.PCT, ChaosPoints: []int64{}, Timeslice: 1}, 100)
	if switches(tids) <= 2 {
		t.Errorf("timeslice 1, 100 calls a thread: calls by %v; want slices of 1 to 64 turns to cut the blocks", tids)
	}
}

// TestRandomHeuristic: a random thread at every point interleaves the
// calls, the same way for the same seed, another way for another.
func TestRandomHeuristic(t *testing.T) {
	cfg := detcore.Config{Seed: 5, Heuristic: detcore.Random, Timeslice: 1000}
	a, ra := chaosRun(t, cfg)
	b, rb := chaosRun(t, cfg)
	if !slices.Equal(a, b) || ra.Stats.Digest != rb.Stats.Digest {
		t.Errorf("seed 5 twice: calls by %v and %v", a, b)
	}
	if switches(a) <= 2 {
		t.Errorf("calls by %v: the random heuristic should switch threads within blocks", a)
	}
	cfg.Seed = 6
	if c, rc := chaosRun(t, cfg); slices.Equal(a, c) && ra.Stats.Digest == rc.Stats.Digest {
		t.Errorf("seeds 5 and 6 gave the same schedule %v", a)
	}
}

func TestChangePoints(t *testing.T) {
	for _, d := range []int{1, 2, 3, 8} {
		ps := detcore.ChangePoints(42, d)
		if len(ps) != d-1 || !slices.IsSorted(ps) || !slices.Equal(ps, detcore.ChangePoints(42, d)) {
			t.Errorf("depth %d: points %v, want %d sorted points, the same every time", d, ps, d-1)
		}
		for _, p := range ps {
			if p < 1 || p > 1<<20 {
				t.Errorf("depth %d: point %d outside 1..2^20", d, p)
			}
		}
		back, err := detcore.ParsePoints(detcore.FormatPoints(ps))
		if err != nil || !slices.Equal(back, ps) && len(ps) > 0 {
			t.Errorf("depth %d: %v formats as %q, which parses as %v, %v", d, ps, detcore.FormatPoints(ps), back, err)
		}
	}
	if a, b := detcore.ChangePoints(1, 3), detcore.ChangePoints(2, 3); slices.Equal(a, b) {
		t.Errorf("seeds 1 and 2 drew the same change points %v", a)
	}
	for _, bad := range []string{"0", "x", "3,,4", "-2"} {
		if _, err := detcore.ParsePoints(bad); err == nil {
			t.Errorf("ParsePoints(%q) accepted it", bad)
		}
	}
	if _, err := detcore.ParseHeuristic("fifo"); err == nil {
		t.Error("ParseHeuristic accepted fifo")
	}
}

// TestPCTClockPoller: a thread that only reads the clock is polling (for
// time to pass or for another thread) and drops below the others after
// a few reads, where a thread making other calls keeps its turn: under
// strict priorities a poller would otherwise hold the others off for its
// whole slice.
func TestPCTClockPoller(t *testing.T) {
	clock := detcoretest.Syscall(abi.SYS_CLOCK_GETTIME, 1, 0)
	call := detcoretest.Syscall(abi.SYS_GETPPID)
	pollerFirst := 0
	for seed := uint64(1); seed <= 6; seed++ {
		root := []step{joinable(2, repeat(12, clock)...), joinable(3, repeat(12, call)...)}
		root = append(root, join(2), join(3), detcoretest.ExitGroup(0))
		tr := newGuest(root...)
		run(t, detcore.Config{Seed: seed, Heuristic: detcore.PCT, ChaosPoints: []int64{}, Timeslice: 1000}, tr)
		polls := callers(tr, abi.SYS_CLOCK_GETTIME)
		others := callers(tr, abi.SYS_GETPPID)
		if len(polls) != 12 || len(others) != 12 {
			t.Fatalf("seed %d: %d clock reads and %d getppid calls, want 12 each", seed, len(polls), len(others))
		}
		// Where the poller went first, the other thread ran before the
		// poller's last read.
		var order []int
		for _, c := range tr.Calls() {
			if c.Nr == abi.SYS_CLOCK_GETTIME || c.Nr == abi.SYS_GETPPID {
				order = append(order, c.Tid)
			}
		}
		if order[0] != polls[0] {
			continue
		}
		pollerFirst++
		if switches(order) < 2 {
			t.Errorf("seed %d: calls by %v; want the poller to drop after a few reads", seed, order)
		}
	}
	if pollerFirst == 0 {
		t.Error("in no seed did the poller run first")
	}
}

// TestPCTStarvation: two threads that hand the turn to each other through
// pipes (each blocks until the other writes, so neither keeps the CPU for
// a slice) would hold a lower-priority thread off until they end, which
// in a program whose pair waits for that thread is forever (Go's
// stop-the-world beside a signal ping-pong under --chaos). A runnable
// thread that has not run for pctStarve turns rises above the others: the
// root's call comes within about that many turns, whatever the seed.
func TestPCTStarvation(t *testing.T) {
	const rounds = 3000
	starved := 0
	for seed := uint64(1); seed <= 24; seed++ {
		cfg := detcore.Config{Seed: seed, Heuristic: detcore.PCT, ChaosPoints: []int64{}, Timeslice: 1}
		at := pctPair(t, cfg, rounds)
		if at < 0 {
			t.Fatalf("seed %d: the root made no getppid", seed)
		}
		if at > 2*1024+10 {
			t.Errorf("seed %d: the root's call came after %d of the pair's %d calls; want it within about 1024 turns", seed, at, 4*rounds)
		}
		if at > 10 {
			starved++
			// Without the guard (a recording made before it), the
			// pair holds the root off to its end.
			cfg.PCTStarve = -1
			if at := pctPair(t, cfg, rounds); at < 4*rounds {
				t.Errorf("seed %d, PCTStarve -1: the root's call came after %d calls; want after the pair's %d", seed, at, 4*rounds)
			}
		}
	}
	if starved == 0 {
		t.Errorf("the root ran first under every seed: the test shows nothing")
	}
}

// pctPair is TestPCTStarvation's guest; at returns where the root's call
// came among all calls.
func pctPair(t *testing.T, cfg detcore.Config, rounds int) (at int) {
	t.Helper()
	var ping, pong []step
	for range rounds {
		ping = append(ping, write(wfd), read(7))
		pong = append(pong, read(rfd), write(8))
	}
	root := []step{joinable(2, ping...), joinable(3, pong...), detcoretest.Syscall(abi.SYS_GETPPID), join(2), join(3), detcoretest.ExitGroup(0)}
	tr := newGuest(root...)
	tr.Pipe(7, 8)
	run(t, cfg, tr)
	return slices.IndexFunc(tr.Calls(), func(c detcoretest.Call) bool { return c.Nr == abi.SYS_GETPPID })
}
