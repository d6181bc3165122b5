package detcore

import (
	"sort"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// pick chooses the next thread to run: the first runnable thread after the
// last one picked, in creation order (round robin), or, with a seed, after a
// pseudo-random thread. A blocked thread is runnable when its wait is over.
func (e *Engine) pick() *thread {
	e.fireTimers()
	ts := e.ordered()
	n := len(ts)
	if n == 0 {
		return nil
	}
	if t := e.last; t != nil && t.retried {
		// A call made again because its ready descriptor went stale
		// (readyDecided) keeps the turn it was given: two threads
		// waiting on one descriptor would otherwise hand it back and
		// forth without end.
		t.retried = false
		if t.state == tsReady && t.vforkChild == nil && e.threads[t.tid] == t {
			e.streak++
			return e.picked(t)
		}
	}
	if h := e.cfg.Heuristic; h == Random || h == PCT {
		return e.pickChaos(ts)
	}
	if t := e.last; t != nil && e.streak < e.cfg.Timeslice && t.state == tsReady && t.vforkChild == nil &&
		t.nr != abi.SYS_SCHED_YIELD && !e.clockSpent(t) && e.wokeBy != t && e.threads[t.tid] == t {
		// The thread that ran last keeps its turn until its timeslice of
		// intercepted syscalls is used up, it blocks, it yields, it
		// has read the clock as often as a slice allows (vclock.go), or
		// it has woken a futex waiter (wokeWaiters).
		e.streak++
		return e.picked(t)
	}
	e.streak = 1
	start := sort.Search(n, func(i int) bool { return ts[i].seq > e.cursor })
	if e.cfg.Seed != 0 {
		// A seeded run starts each round-robin scan at a pseudo-random
		// thread: a different, still deterministic, interleaving.
		start += int(splitmix64(e.cfg.Seed+uint64(e.result.Stats.Turns)) % uint64(n))
	}
	for i := 0; i < n; i++ {
		t := ts[(start+i)%n]
		if e.runnable(t) {
			e.cursor = t.seq
			return e.picked(t)
		}
	}
	return nil
}

// picked accounts for the turn given to t.
func (e *Engine) picked(t *thread) *thread {
	e.last = t
	e.wokeBy = nil
	t.insnPoints = 0
	e.result.Stats.Turns++
	e.clock += e.cfg.Quantum
	t.charge(e.cfg.Quantum)
	// Not t.act: how hermit carries a call out (natively, to its exit,
	// from the recording) is no part of the schedule, and differs
	// between a replay and its recording.
	e.digest.add(int64(t.vtid), e.turnCall(t), t.ret)
	if e.cfg.TurnLog != nil {
		e.logTurn(t)
	}
	return t
}

// turnCall returns the call t's turn is at: the one it stopped at, or at
// an event stop (a vfork's return, a call counted on its way out) the one
// its registers show, -1 for none. t.nr there is the last call hermit
// stopped t at, which record, stopping at more calls than run, has
// another.
func (e *Engine) turnCall(t *thread) int64 {
	if t.atSyscall || t.state == tsNew || !t.started {
		return int64(t.nr)
	}
	var r abi.Regs
	if e.t.GetRegs(t.tid, &r) != nil {
		return -1
	}
	return int64(r.OrigRax)
}

func (e *Engine) runnable(t *thread) bool {
	switch t.state {
	case tsNew:
		return true
	case tsReady:
		return t.vforkChild == nil
	case tsBlocked:
		return e.wake(t)
	}
	return false
}
