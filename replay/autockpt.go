package replay

import "sync"

// Automatic checkpoints. After each command, when no run is kept at a
// boundary within autoSpacing events before where the replay is, a
// helper run is brought to the boundary just before it in the background,
// from the start, and set aside: going back from there then costs the
// distance to that boundary, not a replay from the start. The helper runs
// while the user reads (on the other CPU, if there is one); its output
// goes through the same once-only writer, so nothing shows twice. One
// helper at a time; the runs kept are bounded like every checkpoint.

// autoSpacing is the distance, in events, within which a run kept before
// the replay makes another unnecessary.
const autoSpacing = 1000

// builder is the background helper's state, under Timeline.mu.
type builder struct {
	// s is the helper's Session while one runs; idle is closed when none
	// does.
	s    *Session
	idle chan struct{}
	// off: no automatic checkpoints (CheckpointOptions.NoAuto), or the
	// Timeline is closed.
	off bool
	wg  sync.WaitGroup
}

// autoCheckpoint starts the helper if the replay needs a run kept nearer.
// Preconditions: t.mu held.
func (t *Timeline) autoCheckpoint() {
	b := &t.pool.b
	if b.off || b.s != nil || t.pos.end || t.pos.inexact {
		return
	}
	at := t.pos.event() // boundary at-1: the last one the replay has passed
	if len(t.pos.moves) == 0 && t.pos.at > 0 {
		at = t.pos.at
	}
	if at < 2 {
		return
	}
	for _, c := range t.pool.list {
		if c.run != nil && len(c.pos.moves) == 0 && !c.pos.end && c.pos.at <= at && at-c.pos.at < autoSpacing {
			return
		}
	}
	hs := &Session{start: t.s.start, bps: map[uint64]bool{}, out: t.s.out}
	b.s, b.idle = hs, make(chan struct{})
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		hs.mu.Lock()
		err := hs.launch()
		hs.mu.Unlock()
		var st Stop
		if err == nil {
			st, err = hs.RunToEvent(at - 1)
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		run := hs.detachRun()
		switch {
		case run == nil:
		case err != nil || b.off || st.Reason != ReasonEvent:
			_ = killParked(run)
		default:
			t.pool.stash(position{at: at, final: st}, run, nil)
		}
		b.s = nil
		close(b.idle)
	}()
}

// Settle waits until no automatic checkpoint is being made (for
// measurements and tests).
func (t *Timeline) Settle() {
	t.mu.Lock()
	idle := t.pool.b.idle
	t.mu.Unlock()
	if idle != nil {
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
