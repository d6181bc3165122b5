package replay

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Going backwards (see Timeline).

// maxSteps stands for "until the stop" in a counting step.
const maxSteps = math.MaxInt32

// ReverseStep goes back one instruction of thread tid. At the start of
// the recording it returns the start stop and ErrHistoryStart.
func (t *Timeline) ReverseStep(tid int) (Stop, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.autoCheckpoint()
	vtid := t.vtidOf(tid)
	if vtid == 0 {
		return t.pos.final, fmt.Errorf("reverse step: no live thread %d", tid)
	}
	if t.atBirth(tid) {
		// Before this it did not exist: counting its instructions
		// from a boundary before its clone stepped it out of the
		// recorded schedule, into its future.
		return t.pos.final, ErrThreadStart
	}
	if err := t.exactHere(); err != nil {
		return t.pos.final, err
	}
	// Counting runs under other points: the user's are back at the end.
	defer t.restorePoints(t.s.getPoints())
	from := t.pos
	// gdb steps back off a breakpoint before it continues back: where
	// the step lands, the stops the last search passed still serve.
	passed := t.passed
	t.passed = nil
	q, err := t.back(t.pos, vtid)
	if errors.Is(err, ErrInterrupted) {
		return t.cancelled(from)
	}
	if err != nil {
		return t.pos.final, err
	}
	if err := t.seek(q); err != nil {
		return t.pos.final, err
	}
	if passed.steppedBack(&from, &t.pos) {
		t.passed = passed
	}
	st := t.pos.final
	if len(t.pos.moves) > 0 || t.pos.at > 0 {
		st.Reason, st.Steps = ReasonStep, 1
		if ntid, err := t.hostTid(vtid); err == nil {
			st.Tid = ntid
		}
	}
	return st, nil
}

// atBirth says whether thread tid stands at its first instruction: just
// after the syscall instruction of the clone, fork or vfork that made it,
// which returned 0 there; or at the first instruction of the program an
// execve gave it (before it, another program ran).
func (t *Timeline) atBirth(tid int) bool {
	r, err := t.s.Regs(tid)
	if err != nil || r.Rax != 0 {
		return false
	}
	switch r.OrigRax {
	case abi.SYS_CLONE, abi.SYS_CLONE3, abi.SYS_FORK, abi.SYS_VFORK:
	case abi.SYS_EXECVE, abi.SYS_EXECVEAT:
		return true
	default:
		return false
	}
	var b [2]byte
	n, err := t.s.ReadMem(tid, r.Rip-2, b[:])
	return err == nil && n == 2 && b == [2]byte{0x0f, 0x05}
}

// cancelled brings the replay back to where an interrupted reverse
// command began.
func (t *Timeline) cancelled(from position) (Stop, error) {
	if err := t.seek(from); err != nil {
		return t.pos.final, err
	}
	return t.pos.final, ErrInterrupted
}

// restorePoints gives the Session the user's points again.
func (t *Timeline) restorePoints(user points) { _ = t.s.setPoints(user) }

// back returns the position one instruction of thread vtid before p,
// which the run may have to visit to count that thread's instructions.
func (t *Timeline) back(p position, vtid int) (position, error) {
	switch {
	case p.end:
		return p, errors.New("the replay has ended: step back from a stop before the end")
	case p.inexact:
		p = position{at: p.at}
	}
	k := len(p.moves)
	if k == 0 {
		if p.at == 0 {
			return p, ErrHistoryStart
		}
		return t.backFromBoundary(p, vtid)
	}
	m, q := p.moves[k-1], p.prefix(k-1)
	if m.step && m.vtid == vtid {
		switch n := p.done; {
		case n > 1:
			m.n = n - 1
			return q.with(m), nil
		case n == 1:
			return q, nil
		}
		// The thread did nothing in this move: back from where it began.
		if err := t.seek(q); err != nil {
			return p, err
		}
		return t.back(t.pos, vtid)
	}
	if m.hitAt != 0 && m.vtid == vtid && p.done < m.n {
		// A stop of the move's points before its nth arrival (the
		// breakpoint a reverse continue went back to, in a stretch a
		// step back had counted by arrivals): count from the last
		// arrival before it, not from the one before the nth, which
		// came after it (the step went forwards, into code that ran
		// later).
		if p.vtid != vtid {
			return p, fmt.Errorf("reverse step: thread %d did not make the last stop (thread %d did): select it first", vtid, p.vtid)
		}
		if p.done > 0 {
			m.n = p.done
			q = q.with(m)
		}
		return t.backTo(p, q, vtid, m.pts)
	}
	if m.hitAt != 0 && m.vtid == vtid {
		// The nth arrival at an address: count from the one before.
		if m.n > 1 {
			m.n--
			q = q.with(m)
		}
		cn, err := t.count(q, vtid, points{}, m.hitAt, false, 0)
		if err != nil {
			return p, err
		}
		if cn.st.Reason != ReasonStep {
			return p, fmt.Errorf("reverse step: replaying from the arrival of thread %d at %#x before did not come back to the next (got %v)", vtid, m.hitAt, cn.st)
		}
		return t.before(cn, vtid, points{})
	}
	if p.vtid != vtid {
		return p, fmt.Errorf("reverse step: thread %d did not make the last stop (thread %d did): select it first", vtid, p.vtid)
	}
	// Replay the move single-stepping the thread, counting its
	// instructions up to the move's stop: from the boundary before the
	// stop when the move began in an earlier span (the thread may not
	// have existed then, and there is less to step), since the move makes
	// no stop before its own.
	if e := p.final.Event; m.ev < e {
		q = position{at: e}
	}
	return t.backTo(p, q, vtid, m.pts)
}

// backTo returns the position one instruction of thread vtid before p,
// counting its instructions from q, where it has not reached p's stop,
// under pts.
func (t *Timeline) backTo(p, q position, vtid int, pts points) (position, error) {
	var at uint64
	if p.final.Reason == ReasonBreakpoint {
		at = p.final.Addr
	}
	cn, err := t.count(q, vtid, pts, at, false, 0)
	if err != nil {
		return p, err
	}
	if !sameStop(p.final, cn.st) {
		return p, fmt.Errorf("reverse step: replaying from the last stop of thread %d did not come back to %v (got %v)", vtid, p.final, cn.st)
	}
	return t.before(cn, vtid, pts)
}

// before returns the position one instruction of vtid before where a
// counting pass ended.
func (t *Timeline) before(cn counted, vtid int, pts points) (position, error) {
	switch {
	case cn.c > 1:
		return cn.base.with(move{step: true, vtid: vtid, n: cn.c - 1, pts: pts, ev: cn.ev, trace: cn.tr}), nil
	case cn.c == 1:
		return cn.base, nil
	}
	if err := t.seek(cn.base); err != nil {
		return cn.base, err
	}
	return t.back(t.pos, vtid)
}

// sameStop says whether a counting step ended where a move had: st
// stepped onto a breakpoint's address, or made the same watchpoint or
// signal stop.
func sameStop(want, st Stop) bool {
	switch want.Reason {
	case ReasonBreakpoint:
		return st.Reason == ReasonStep && st.Steps < maxSteps
	case ReasonWatchpoint:
		return st.Reason == ReasonWatchpoint && st.Addr == want.Addr
	case ReasonSignal:
		return st.Reason == ReasonSignal && st.Sig == want.Sig
	}
	return false
}

// backFromBoundary returns the position one instruction of vtid before
// event boundary p.at-1: it counts the thread's instructions from an
// earlier boundary, further back each time the thread did not run.
func (t *Timeline) backFromBoundary(p position, vtid int) (position, error) {
	if q, ok, err := t.backFromSyscall(p, vtid); ok || err != nil {
		return q, err
	}
	b := p.at - 1
	for d := uint64(1); ; d *= 2 {
		q := position{}
		if p.at > d {
			q.at = p.at - d
		}
		cn, err := t.count(q, vtid, points{}, 0, true, b)
		if err != nil {
			return p, err
		}
		if cn.c > 0 {
			return cn.base.with(move{step: true, vtid: vtid, n: cn.c, ev: cn.ev, trace: cn.tr}), nil
		}
		if q.at == 0 {
			return position{}, ErrHistoryStart
		}
	}
}

// backFromSyscall returns the position one instruction of thread vtid
// before boundary p when p is that thread's system call: at its syscall
// instruction, before it ran, the thread's last arrival there since an
// earlier boundary. Arrivals cost a breakpoint's trap each; counting
// every instruction the thread ran since (backFromBoundary) cost a trap
// per instruction, hundreds of thousands for a loop without calls before
// an exit. ok is false when p is no such boundary, or the count found no
// arrival: then backFromBoundary counts.
func (t *Timeline) backFromSyscall(p position, vtid int) (q position, ok bool, err error) {
	tid, err := t.hostTid(vtid)
	if err != nil || p.final.Reason != ReasonEvent || p.final.Tid != tid {
		return p, false, nil
	}
	r, err := t.s.Regs(tid)
	if err != nil || int64(r.OrigRax) < 0 || r.Rip < 2 {
		return p, false, nil
	}
	var ins [2]byte
	if n, err := t.s.ReadMem(tid, r.Rip-2, ins[:]); err != nil || n != 2 || ins != [2]byte{0x0f, 0x05} {
		return p, false, nil
	}
	addr, b := r.Rip-2, p.at-1
	for d := uint64(1); ; d *= 2 {
		q = position{}
		if p.at > d {
			q.at = p.at - d
		}
		if err := t.seek(q); err != nil {
			return p, false, err
		}
		ev := t.pos.event()
		qtid, err := t.hostTid(vtid)
		if err != nil {
			return p, false, nil // not born yet: the count sees to it
		}
		if err := t.s.setPoints(points{}); err != nil {
			return p, false, err
		}
		st, got, err := t.hits(qtid, addr, maxSteps, true, b)
		t.pos = position{at: q.at, final: st, inexact: true}
		switch {
		case err != nil:
			return p, false, err
		case st.Reason == ReasonInterrupt:
			return p, false, ErrInterrupted
		case st.Reason != ReasonEvent:
			return p, false, nil // a signal on the way, say: count
		case got > 0:
			return q.with(move{vtid: vtid, hitAt: addr, n: got, ev: ev}), true, nil
		case q.at == 0:
			return p, false, nil
		}
	}
}

// ReverseContinue goes back to the latest stop of the current
// breakpoints, watchpoints and signals before where the replay is. A
// watchpoint stops before the access that triggers it, as gdb expects
// going backwards. With nothing before, it goes to the start and returns
// ErrHistoryStart.
func (t *Timeline) ReverseContinue() (Stop, error) {
	return t.ReverseContinueWhere(nil)
}

// ReverseContinueWhere is ReverseContinue passing by, in the same search,
// the stops keep rejects (a breakpoint whose condition is false): keep is
// called at each stop the search makes, with the replay there, and nil
// keeps every one. A search under keep neither takes nor leaves what the
// last one passed (backcache.go), which holds every stop.
func (t *Timeline) ReverseContinueWhere(keep func(Stop) bool) (Stop, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.autoCheckpoint()
	t.keep = keep
	defer func() { t.keep = nil }()
	if err := t.exactHere(); err != nil {
		return t.pos.final, err
	}
	user := t.s.getPoints()
	// The search runs under other points: the user's are back at the end.
	defer t.restorePoints(user)
	t0 := t.pos
	p := t.pos
	if !p.end && p.at == 0 && len(p.moves) == 0 {
		return t.pos.final, ErrHistoryStart
	}
	var (
		cand  position
		found bool
		scan  *backScan
		err   error
	)
	if keep == nil {
		cand, found, scan = t.passed.take(&t.pos, user)
	}
	if !found {
		cand, found, scan, err = t.searchMoves(p, user)
	}
	if err == nil && !found {
		cand, found, err = t.searchBefore(p, user)
	}
	if errors.Is(err, ErrInterrupted) {
		return t.cancelled(t0)
	}
	if err == nil && !found {
		err = t.seek(position{})
		if err == nil {
			err = ErrHistoryStart
		}
		return t.pos.final, err
	}
	if err != nil {
		return t.pos.final, err
	}
	target := cand
	watchStop := cand.final.Reason == ReasonWatchpoint
	if watchStop {
		if target, err = t.back(cand, cand.vtid); errors.Is(err, ErrInterrupted) {
			return t.cancelled(t0)
		} else if err != nil {
			return t.pos.final, err
		}
	}
	if err := t.seek(target); err != nil {
		return t.pos.final, err
	}
	st := cand.final
	if watchStop && len(cand.moves) > 0 {
		// The slot of the set the search ran under, as the user has it.
		w := cand.moves[len(cand.moves)-1].pts.wps[st.Watch]
		for i, uw := range user.wps {
			if uw == w {
				st.Watch = i
			}
		}
	}
	st.Event = t.pos.final.Event
	if tid, err := t.hostTid(cand.vtid); err == nil {
		st.Tid = tid
	}
	t.passed = nil
	if !watchStop && keep == nil {
		t.passed = scan.after(t.pos, user)
	}
	return st, nil
}

// owns says whether the points pts (a subset of run, the points the run
// had) make stop st.
func owns(pts, run points, st Stop) bool {
	switch st.Reason {
	case ReasonBreakpoint:
		return pts.hasBreak(st.Addr)
	case ReasonWatchpoint:
		return st.Watch >= 0 && st.Watch < len(run.wps) && pts.hasWatch(run.wps[st.Watch])
	case ReasonSignal:
		return true
	}
	return false
}

// needs returns the points a replay of m needs beside user's: all of
// m's, but of a move whose end is known only the watchpoint that ended it
// (the others did not stop it).
func (m move) needs(user points) points {
	if !m.ended {
		return m.pts
	}
	pts := m.pts
	for i, w := range pts.wps {
		if w.on && w != m.end && !user.hasWatch(w) {
			pts.wps[i] = watch{}
		}
	}
	return pts
}

// union returns a's points and b's, a's watchpoints in their slots.
func union(a, b points) (points, error) {
	u := points{wps: a.wps}
	seen := map[uint64]bool{}
	for _, x := range append(append([]uint64(nil), a.bps...), b.bps...) {
		if !seen[x] {
			seen[x] = true
			u.bps = append(u.bps, x)
		}
	}
	slices.Sort(u.bps)
	for _, w := range b.wps {
		if !w.on || u.hasWatch(w) {
			continue
		}
		free := -1
		for i, o := range u.wps {
			if !o.on {
				free = i
				break
			}
		}
		if free < 0 {
			return u, fmt.Errorf("going back from here needs, beside your watchpoints, one that was set when the replay came here: %w (delete one of yours, or go to an event first: monitor goto N)", ErrNoWatchSlot)
		}
		u.wps[free] = w
	}
	return u, nil
}

// searchMoves finds the latest stop of user before p among the moves
// that led to p from its boundary: it replays them, each under its own
// points and user's.
func (t *Timeline) searchMoves(p position, user points) (position, bool, *backScan, error) {
	if len(p.moves) == 0 {
		return position{}, false, nil, nil
	}
	// Each move's points and user's, all found before the replay moves:
	// one that cannot be had leaves it where it is.
	mps := make([]points, len(p.moves))
	for i, m := range p.moves {
		var err error
		if mps[i], err = union(m.needs(user), user); err != nil {
			return position{}, false, nil, err
		}
	}
	if err := t.seek(position{at: p.at}); err != nil {
		return position{}, false, nil, err
	}
	// cur grows one move per stop, in place (the replay of a span with
	// thousands of hits copied its moves at each: quadratic); best is
	// the prefix of it of length bestLen, made once at the end.
	cur := t.pos
	cur.moves = slices.Clip(cur.moves)
	var best position
	bestLen, found := 0, false
	// The stops before best, for the next search (backcache.go).
	scan := &backScan{}
	seen := func() {
		if found {
			scan.add(bestLen, best)
		}
	}
	for i, m := range p.moves {
		mp := mps[i]
		last := i == len(p.moves)-1
		leg, remaining := m, m.n
		// Every stop of mp must show: no breakpoint-hit shortcut.
		leg.pts, leg.trace = mp, nil
		for {
			leg.n, leg.ev = remaining, t.pos.event()
			st, err := t.play(leg)
			if err != nil && st.Reason != ReasonExited {
				return position{}, false, nil, err
			}
			cur.moves = append(cur.moves, leg)
			cur.final, cur.vtid, cur.done = st, t.vtidOf(st.Tid), st.Steps
			t.pos = cur
			if st.Reason == ReasonExited || st.Reason == ReasonEvent || st.Reason == ReasonInterrupt {
				t.pos = position{at: st.Event + 1, end: st.Reason == ReasonExited, final: st, inexact: st.Reason == ReasonInterrupt}
				if st.Reason == ReasonInterrupt {
					return position{}, false, nil, ErrInterrupted
				}
				return cur.upTo(bestLen, best), found, scan.of(cur), nil
			}
			own := st.Reason == ReasonStep || owns(m.pts, mp, st) || m.hitAt != 0 && st.Steps >= remaining
			// The stop where the replay is now is no stop before it,
			// unless it is a watchpoint's: that stops after the access,
			// which going back stops before.
			here := last && own && st.Reason != ReasonWatchpoint
			if owns(user, mp, st) && !here {
				if t.kept(st) {
					seen()
					bestLen, found = len(cur.moves), true
					best.final, best.vtid, best.done = cur.final, cur.vtid, cur.done
				}
			} else if pc, ok := t.stepOnto(st, user); ok && !last && t.kept(Stop{Reason: ReasonBreakpoint, Tid: st.Tid, Addr: pc, Event: st.Event}) {
				// A step that ended at a breakpoint of the user's (gdb
				// steps into a call, then continues): the thread stood
				// there, about to run it, as at a hit.
				seen()
				bestLen, found = len(cur.moves), true
				best.final, best.vtid, best.done = cur.final, cur.vtid, cur.done
				best.final.Reason, best.final.Addr = ReasonBreakpoint, pc
			}
			if own {
				break
			}
			if m.step || m.hitAt != 0 {
				// A stop of the user's ended the step or the count
				// early: on.
				if remaining -= st.Steps; remaining <= 0 {
					break
				}
			}
		}
	}
	return cur.upTo(bestLen, best), found, scan.of(cur), nil
}

// upTo returns the position of p's first k moves, where the stop was
// final's (vtid, done).
func (p position) upTo(k int, final position) position {
	q := p.prefix(k)
	q.final, q.vtid, q.done = final.final, final.vtid, final.done
	return q
}

// stepOnto reports whether st is the end of a step at an address where
// pts has a breakpoint, and that address.
func (t *Timeline) stepOnto(st Stop, pts points) (uint64, bool) {
	if st.Reason != ReasonStep || len(pts.bps) == 0 {
		return 0, false
	}
	r, err := t.s.Regs(st.Tid)
	if err != nil || !pts.hasBreak(r.Rip) {
		return 0, false
	}
	return r.Rip, true
}

// ErrInterrupted: Interrupt stopped a reverse command; the replay is back
// where the command began.
var ErrInterrupted = errors.New("interrupted")

// searchBefore finds the latest stop of user before p's boundary: it
// replays the spans between runs set aside (or the start) under user's
// points, the latest span first.
func (t *Timeline) searchBefore(p position, user points) (position, bool, error) {
	hi := p.at // search up to boundary hi-1; with p.end, to the end
	toEnd := p.end
	for {
		if !toEnd && hi == 0 {
			return position{}, false, nil
		}
		src := t.pool.sourceBefore(hi, toEnd)
		if err := t.seek(src); err != nil {
			return position{}, false, err
		}
		var best position
		found := false
		perSpan, inSpan, spanAt := 0, 0, uint64(0)
		leg := move{pts: user}
		// The moves since the boundary, in place (as searchMoves').
		t.pos.moves = slices.Clip(t.pos.moves)
		if !toEnd {
			leg.until = hi
		}
		for {
			leg.ev = t.pos.event()
			st, err := t.play(leg)
			if err != nil && st.Reason != ReasonExited {
				return position{}, false, err
			}
			if st.Reason == ReasonExited || st.Reason == ReasonEvent || st.Reason == ReasonInterrupt {
				t.pos = position{at: st.Event + 1, end: st.Reason == ReasonExited, final: st, inexact: st.Reason == ReasonInterrupt}
				if st.Reason == ReasonInterrupt {
					return position{}, false, ErrInterrupted
				}
				break
			}
			t.pos.moves = append(t.pos.moves, leg)
			t.pos.final, t.pos.vtid = st, t.vtidOf(st.Tid)
			// The stop as a position from the boundary before it, which
			// a step back replays from cheaply: perSpan moves of leg,
			// made once the search is over (inSpan counts them, kept or
			// not).
			if inSpan > 0 && spanAt == st.Event {
				inSpan++
			} else {
				spanAt, inSpan = st.Event, 1
			}
			if t.kept(st) {
				best = position{at: st.Event, final: st, vtid: t.pos.vtid}
				perSpan, found = inSpan, true
			}
		}
		if found {
			for i := range perSpan {
				l := leg
				l.ev = best.at // the first begins at the boundary before
				if i == 0 {
					l.ev = max(best.at, 1) - 1
				}
				best.moves = append(best.moves, l)
			}
			return best, true, nil
		}
		if src.at == 0 {
			return position{}, false, nil
		}
		hi, toEnd = src.at, false
	}
}

// sourceBefore returns the latest boundary before hi (as a position's at;
// toEnd: any) where a run is set aside, or the start.
func (p *pool) sourceBefore(hi uint64, toEnd bool) position {
	best := position{}
	for _, c := range p.list {
		if c.run != nil && len(c.pos.moves) == 0 && !c.pos.end && (toEnd || c.pos.at < hi) && c.pos.at > best.at {
			best = position{at: c.pos.at}
		}
	}
	return best
}

// kept says whether a reverse search may land at stop st (keep).
func (t *Timeline) kept(st Stop) bool {
	return t.keep == nil || t.keep(st)
}
