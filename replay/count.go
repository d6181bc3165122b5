package replay

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hermitdbg/hermit/detcore/ptrace"
)

// Counting a thread's instructions, for going back one of them. Single
// steps cost a ptrace stop each, so a long stretch without events (a loop
// that computes) is not stepped through: after countChunk steps, the
// instruction the thread executed most often lately (a loop's) becomes an
// anchor, the thread runs on to the stop counting its arrivals there,
// and only the way from the last arrival to the stop is stepped, from a
// replay of "the nth arrival at the anchor". Arrivals are counted with an
// instruction breakpoint in a debug register, inside the debug layer: a
// trap per arrival (per loop iteration), nothing to step over. The tail
// after the last arrival may hold another loop: the same is done again
// from there.

// A stepTrace is where one thread went, single-stepped from a position:
// its instruction pointer there (pc0) and after each instruction. A step
// move that has one replays, when long, as breakpoint hits: to the hth
// arrival of the thread at the address it ends at.
type stepTrace struct {
	pc0 uint64
	pcs []uint64
}

// hitsFrom is the shortest step a trace replays as breakpoint hits.
const hitsFrom = 16

// countChunk is how many instructions are stepped before looking for an
// anchor (and between progress reports).
const countChunk = 1 << 14

// counted is where a counting pass got: c instructions of the thread from
// base, whose events consumed are ev, to stop st; tr is the way.
type counted struct {
	st   Stop
	base position
	ev   uint64
	c    int
	tr   *stepTrace
}

// count runs thread vtid from q under pts until its instruction pointer
// is at (if set), the run reaches boundary event (toEvent), or a stop of
// pts, and counts its instructions from a position on the way (counted's
// base). An Interrupt ends it with ErrInterrupted.
func (t *Timeline) count(q position, vtid int, pts points, at uint64, toEvent bool, event uint64) (counted, error) {
	if err := t.seek(q); err != nil {
		return counted{}, err
	}
	cn := counted{base: q, ev: t.pos.event()}
	if toEvent && t.s.Event() >= event {
		// q's boundary is no earlier than the one to count to: the events
		// before it are the engine's own (host answers), and the run
		// stands at the next boundary, where the count ends. The thread
		// ran no instruction on the way (stepping it would run it past
		// that boundary, to its exit).
		cn.st = t.s.LastStop()
		t.pos = position{at: q.at, final: cn.st, inexact: true}
		return cn, nil
	}
	tid, err := t.hostTid(vtid)
	if err != nil {
		return cn, fmt.Errorf("reverse step: %w (at event %d)", err, cn.ev)
	}
	if err := t.s.setPoints(pts); err != nil {
		return cn, err
	}
	regs, err := t.s.Regs(tid)
	if err != nil {
		return cn, err
	}
	cn.tr = &stepTrace{pc0: regs.Rip}
	for {
		st, err := t.s.stepCount(tid, countChunk, at, toEvent, event, &cn.tr.pcs)
		t.pos = position{at: q.at, final: st, inexact: true}
		cn.st = st
		cn.c += st.Steps
		switch {
		case err != nil:
			return cn, err
		case st.Reason == ReasonInterrupt:
			return cn, ErrInterrupted
		case st.Reason == ReasonStep && st.Steps == countChunk && !t.atPC(tid, at):
			// A long stretch.
			t.progress("going back: thread %d, %d instructions stepped", vtid, cn.c)
			if l := anchor(cn.tr, at); l != 0 {
				return t.countByHits(q, cn, vtid, tid, l, pts, at, toEvent, event)
			}
			continue
		case toEvent && st.Reason != ReasonEvent && st.Reason != ReasonExited:
			continue // a signal on the way to the boundary
		}
		return cn, nil
	}
}

// atPC says whether thread tid's instruction pointer is at (set).
func (t *Timeline) atPC(tid int, at uint64) bool {
	if at == 0 {
		return false
	}
	r, err := t.s.Regs(tid)
	return err == nil && r.Rip == at
}

// anchor picks the instruction executed most often in the trace's last
// countChunk/4 instructions, if it repeats: neither where the trace began
// (a breakpoint there would fire at once) nor the stop's own address.
func anchor(tr *stepTrace, at uint64) uint64 {
	recent := tr.pcs[max(0, len(tr.pcs)-countChunk/4):]
	n := map[uint64]int{}
	best := uint64(0)
	for _, pc := range recent {
		if pc == tr.pc0 || pc == at || pc == 0 {
			continue
		}
		n[pc]++
		if n[pc] > n[best] {
			best = pc
		}
	}
	if n[best] < 2 {
		return 0
	}
	return best
}

// countByHits goes on from a counting pass that found a loop at l: it
// runs to the stop counting the thread's arrivals at l, then counts from
// a replay of the last arrival.
func (t *Timeline) countByHits(q position, cn counted, vtid, tid int, l uint64, pts points, at uint64, toEvent bool, event uint64) (counted, error) {
	h := 0
	for _, pc := range cn.tr.pcs {
		if pc == l {
			h++
		}
	}
	if pcs := cn.tr.pcs; len(pcs) > 0 && pcs[len(pcs)-1] == l {
		// The chunk ended with the thread at l, an arrival the trace
		// holds; resumed there, it traps at once (an int3, or an
		// instruction breakpoint, fires before the instruction), and
		// hits counts the same arrival again.
		h--
	}
	run := pts
	if at != 0 && !pts.hasBreak(at) {
		// The stop is the thread's arrival at `at`: a breakpoint there.
		run.bps = append(slices.Clone(pts.bps), at)
		slices.Sort(run.bps)
	}
	if err := t.s.setPoints(run); err != nil {
		return cn, err
	}
	for {
		st, n, err := t.hits(tid, l, maxSteps, toEvent, event)
		t.pos = position{at: q.at, final: st, inexact: true}
		h += n
		t.progress("going back: thread %d, %d passes through %#x", vtid, h, l)
		switch {
		case err != nil:
			return cn, err
		case st.Reason == ReasonInterrupt:
			return cn, ErrInterrupted
		case st.Reason == ReasonBreakpoint && st.Addr == at && st.Tid != tid,
			st.Reason == ReasonSignal && toEvent:
			continue
		}
		break
	}
	// The way from the last arrival at l, which may hold another loop.
	return t.count(q.with(move{vtid: vtid, hitAt: l, n: h, ev: cn.ev}), vtid, pts, at, toEvent, event)
}

// hits runs until thread tid has arrived n times at addr, or another stop
// of the Session's points, and returns the stop and the arrivals: counted
// in a debug register when one is free (and the machine's trigger), else
// with a breakpoint.
func (t *Timeline) hits(tid int, addr uint64, n int, toEvent bool, event uint64) (st Stop, got int, err error) {
	if toEvent && t.s.Event() >= event {
		// The run stands at or past the boundary to count to (a seek
		// to the engine's own events, host answers, lands at the next
		// boundary): no arrival is before it. Counting on would count
		// those of the next rounds.
		st, err = t.s.ContinueTo(event)
		return st, 0, err
	}
	st, err = t.s.countHits(tid, addr, n, toEvent, event)
	if !errors.Is(err, errNoFreeSlot) && !errors.Is(err, ptrace.ErrDebugRegsDead) {
		return st, st.Steps, err
	}
	// The int3 of a breakpoint counts instead, in the run.
	user := t.s.getPoints()
	if !user.hasBreak(addr) {
		with := user
		with.bps = append(slices.Clone(user.bps), addr)
		slices.Sort(with.bps)
		if err := t.s.setPoints(with); err != nil {
			return Stop{}, 0, err
		}
		defer t.restorePoints(user)
	}
	st, err = t.s.countBreakHits(tid, addr, n, toEvent, event)
	if err == nil && st.Reason == ReasonWatchpoint && st.Watch == -1 && user.hasBreak(addr) {
		st.Reason = ReasonBreakpoint // the user's own breakpoint
	}
	return st, st.Steps, err
}

// playHitsAt replays a move to thread tid's nth arrival at addr.
func (t *Timeline) playHitsAt(tid int, addr uint64, n int) (Stop, error) {
	if err := t.s.setPoints(points{}); err != nil {
		return Stop{}, err
	}
	for got := 0; ; {
		st, k, err := t.hits(tid, addr, n-got, false, 0)
		got += k
		switch {
		case err != nil || st.Reason == ReasonExited || st.Reason == ReasonInterrupt:
			return st, err
		case got >= n:
			return st, nil
		}
		// A signal on the way: on.
	}
}

// playTraced replays step move m, which has a trace, as breakpoint hits.
func (t *Timeline) playTraced(m move, tid int) (Stop, error) {
	x := m.trace.pcs[m.n-1]
	h := 0
	for _, pc := range m.trace.pcs[:m.n] {
		if pc == x {
			h++
		}
	}
	st, err := t.playHitsAt(tid, x, h)
	if err == nil && st.Reason == ReasonWatchpoint {
		st.Reason, st.Steps = ReasonStep, m.n
	}
	return st, err
}

// progress reports a long reverse command's progress (TimelineOptions).
func (t *Timeline) progress(format string, args ...any) {
	if t.opts.Progress != nil {
		t.opts.Progress(fmt.Sprintf(format, args...))
	}
}
