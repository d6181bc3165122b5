package replay

// A reverse continue searches: it replays the moves from the boundary
// before the replay under the user's points and takes the last of their
// stops. gdb goes back over a conditional breakpoint's hits one at a time
// (it tests the condition itself, and continues back while it is false),
// so each search replayed the whole span again, thousands of stops in a
// loop without system calls, to find the hit just before. The search
// passes every earlier stop on its way: the Timeline keeps them, and the
// next reverse continue from where the last one landed, under the same
// points, takes the latest of them with no search (it still replays up to
// it, as any seek back does).

// backScan is what a search passed: its moves from the boundary and the
// breakpoint stops among them, in order.
type backScan struct {
	moves position // at and moves
	stops []backStop
}

// backStop is a stop a search passed: after the first k of its moves, at
// the stop p's final (with p's vtid and done; p has no moves).
type backStop struct {
	k int
	p position
}

// backCache is a backScan's stops before where the reverse continue that
// made it landed, for the next one from there under the same points.
type backCache struct {
	at    position
	user  points
	scan  position
	stops []backStop
}

// add notes a stop of the search: the first k moves, where it stood at
// p's final.
func (b *backScan) add(k int, p position) {
	b.stops = append(b.stops, backStop{k, position{final: p.final, vtid: p.vtid, done: p.done}})
}

// of returns b with the search's moves, cur.
func (b *backScan) of(cur position) *backScan {
	b.moves = position{at: cur.at, moves: cur.moves}
	return b
}

// after returns the cache for the next reverse continue, which the one
// that used b landed at (at): the stops b kept, up to the last one that
// is not a breakpoint's (a step's end at one counts as a hit; a signal's
// or a watchpoint's stop would need going back from it to be found).
func (b *backScan) after(at position, user points) *backCache {
	if b == nil {
		return nil
	}
	c := &backCache{at: at, user: user, scan: b.moves}
	for _, s := range b.stops {
		if s.p.final.Reason != ReasonBreakpoint {
			c.stops = c.stops[:0]
			continue
		}
		c.stops = append(c.stops, s)
	}
	if len(c.stops) == 0 {
		return nil
	}
	return c
}

// take returns the latest stop c keeps if the replay is where the last
// reverse continue landed and the points are the same, with what is left
// of c (nil, false otherwise; c may be nil).
func (c *backCache) take(at *position, user points) (position, bool, *backScan) {
	if c == nil || !c.at.same(at) || !c.user.equal(user) {
		return position{}, false, nil
	}
	s := c.stops[len(c.stops)-1]
	p := c.scan.upTo(s.k, s.p)
	return p, true, &backScan{moves: c.scan, stops: c.stops[: len(c.stops)-1 : len(c.stops)-1]}
}

// steppedBack reports whether c serves at to, where a step back from from
// landed, and if so moves c there: from must be where c was made for, and
// to after c's latest stop, by moves from it (so not before it, as a step
// back of a thread that another's stop followed would be).
func (c *backCache) steppedBack(from, to *position) bool {
	if c == nil || !c.at.same(from) {
		return false
	}
	k := c.stops[len(c.stops)-1].k
	if to.at != c.scan.at || to.end || to.inexact || len(to.moves) <= k {
		return false
	}
	for i := range k {
		if !to.moves[i].equal(c.scan.moves[i]) {
			return false
		}
	}
	c.at = *to
	return true
}

// same reports whether p and q are the same place of the replay, made of
// the same moves.
func (p *position) same(q *position) bool {
	if p.at != q.at || p.end != q.end || p.inexact != q.inexact || len(p.moves) != len(q.moves) {
		return false
	}
	for i := range p.moves {
		if !p.moves[i].equal(q.moves[i]) {
			return false
		}
	}
	return true
}
