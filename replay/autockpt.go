package replay

import (
	"slices"
	"sync"
)

// Automatic checkpoints. A checkpoint of the user's whose run a move used
// up gets a new one. And after each command the Timeline keeps a ladder
// of runs at boundaries before where the replay is: one just before it,
// and others about autoSpacing, 4, 16 and 64 times that further back, so
// that going back a little costs little, and going back far costs a
// replay from a rung below. A missing rung is made by a helper run in the
// background, from the start, nearest rung first, while the user reads.
// It runs on the replay's own CPU, as every run of the recording does (a
// guest may read its CPU number without a system call), so it competes
// with the user's commands while it works. Its output goes through the
// same once-only writer, so nothing shows twice. One helper at a time;
// the runs kept are bounded like every checkpoint.

// autoSpacing is the first rung's distance below the replay, in events;
// each further one is 4 times as far.
const autoSpacing = 1000

// autoRungs is how many rungs below the first, just before the replay.
const autoRungs = 4

// rungs returns the boundaries (as positions' at) the ladder wants for a
// replay whose last boundary passed is at-1, nearest first.
func rungs(at uint64) []uint64 {
	out := []uint64{at}
	for d := uint64(autoSpacing); len(out) <= autoRungs && d < at; d *= 4 {
		out = append(out, at-d)
	}
	return out
}

// builder is the background helper's state, under Timeline.mu.
type builder struct {
	// s is the helper's Session while one runs; idle is closed when none
	// does.
	s    *Session
	idle chan struct{}
	// off: no automatic checkpoints (TimelineOptions.NoAuto), or the
	// Timeline is closed.
	off bool
	// failed are the rungs a helper could not make (the replay ended
	// first, or failed), and failedMine the user's checkpoints: not tried
	// again.
	failed     map[uint64]bool
	failedMine map[*ckpt]bool
	wg         sync.WaitGroup
}

// autoCheckpoint starts the helper if the replay needs a run kept nearer.
// Preconditions: t.mu held.
func (t *Timeline) autoCheckpoint() {
	b := &t.pool.b
	if b.off || b.s != nil || t.pos.inexact {
		return
	}
	// A checkpoint of the user's whose run was used up comes first.
	var mine *ckpt
	for _, c := range t.pool.list {
		if c.id > 0 && c.run == nil && !b.failedMine[c] {
			mine = c
			break
		}
	}
	at := uint64(0)
	if mine == nil {
		cur := t.pos.event() // boundary cur-1: the last one the replay has passed
		if len(t.pos.moves) == 0 && t.pos.at > 0 {
			cur = t.pos.at
		}
		for _, r := range rungs(cur) {
			if r >= 2 && !b.failed[r] && !t.pool.covered(r, r-min(r, rungSlack(cur, r))) {
				at = r
				break
			}
		}
		if at == 0 {
			return
		}
	}
	target := position{at: at}
	if mine != nil {
		target = mine.pos
		target.moves = slices.Clone(mine.pos.moves)
	}
	t.s.mu.Lock()
	focus := t.s.focus
	t.s.mu.Unlock()
	hs := &Session{start: t.s.start, bps: map[uint64]bool{}, out: t.s.out, focus: focus}
	// Its run plays the moves as this Session's did: stopping at the
	// signals it stops at, with breakpoints in the process it focuses on.
	hs.signals.Store(t.s.signals.Load())
	b.s, b.idle = hs, make(chan struct{})
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		hs.mu.Lock()
		err := hs.launch()
		hs.mu.Unlock()
		// The helper's own Timeline, without checkpoints, brings the
		// fresh run to the target.
		ht := &Timeline{s: hs, pos: position{final: hs.LastStop()}}
		ht.pool.b.off = true
		if err == nil {
			err = ht.goTo(target)
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		run := hs.detachRun()
		if b.failed == nil {
			b.failed, b.failedMine = map[uint64]bool{}, map[*ckpt]bool{}
		}
		ok := run != nil && err == nil && !b.off && !ht.pos.end && !ht.pos.inexact
		switch {
		case !ok && mine != nil:
			b.failedMine[mine] = true // not again
		case !ok:
			b.failed[at] = true
		case mine != nil && mine.run == nil && slices.Contains(t.pool.list, mine):
			t.pool.clock++
			mine.run, mine.used = run, t.pool.clock
			t.pool.evict(mine)
			run = nil
		case mine == nil:
			t.pool.stash(ht.pos, run, nil)
			run = nil
		}
		if run != nil {
			_ = killParked(run)
		}
		b.s = nil
		close(b.idle)
		t.autoCheckpoint() // the next rung
	}()
}

// rungSlack is how far below rung r (of a replay at cur) a kept run may
// be and still serve as it: a quarter of the rung's distance.
func rungSlack(cur, r uint64) uint64 {
	return max((cur-r)/4, autoSpacing/4)
}

// covered says whether a run is kept at a boundary in [lo, hi].
func (p *pool) covered(hi, lo uint64) bool {
	for _, c := range p.list {
		if c.run != nil && len(c.pos.moves) == 0 && !c.pos.end && c.pos.at >= lo && c.pos.at <= hi {
			return true
		}
	}
	return false
}

// Settle waits until no automatic checkpoint is being made (for
// measurements and tests).
func (t *Timeline) Settle() {
	for {
		t.mu.Lock()
		idle, busy := t.pool.b.idle, t.pool.b.s != nil
		t.mu.Unlock()
		if !busy {
			return
		}
		<-idle
	}
}

// stopBuilder ends the helper. Preconditions: t.mu held; it is released
// while the helper winds down.
func (t *Timeline) stopBuilder() {
	b := &t.pool.b
	b.off = true
	if b.s != nil {
		b.s.Interrupt()
	}
	t.mu.Unlock()
	b.wg.Wait()
	t.mu.Lock()
}
