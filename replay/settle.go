package replay

import (
	"errors"
	"slices"
)

// Places after an Interrupt. An Interrupt that stops a computing thread
// (a kick, debug_kick.go) leaves the replay between two of the
// recording's stops, at an instruction no move returns to: without an
// instruction counter hermit cannot count its way there again. The
// position is inexact. Going on from it, a continue that passes a
// boundary is exact again (advance); one that stops before, at a
// breakpoint the user set after the Interrupt, say, is guessed: the same
// continue from where the cut move began (from) gets there too, unless
// one of its points stopped it before the Interrupt's place. settle tries
// the guess on a fresh run when a command needs an exact place (going
// back, a checkpoint), and compares the registers.

// inexactWhy says why an inexact place refuses what needs an exact one.
const inexactWhy = "an interrupt stopped the replay between two of the recording's stops, " +
	"a place hermit cannot find again (it counts no instructions); continue to a breakpoint or to the next event first"

// errInexact refuses to go back from an inexact place, and
// errInexactCheckpoint to make a checkpoint there.
var (
	errInexact           = errors.New("cannot go back from here: " + inexactWhy)
	errInexactCheckpoint = errors.New("no checkpoint can be made here: " + inexactWhy)
)

// exactFrom is the exact position a move from p begins at, as far as an
// Interrupt that cuts the move short is concerned: p, or p's own from.
func (p *position) exactFrom() *position {
	switch {
	case p.inexact:
		return p.from
	case p.end:
		return nil
	}
	q := *p
	q.moves = slices.Clone(p.moves)
	return &q
}

// guessFrom is the guess for where move m from inexact p stops: m from
// p's guess, or for a continue, the continue from where the cut move
// began.
func (p *position) guessFrom(m move) *position {
	switch {
	case p.guess != nil:
		q := p.guess.with(m)
		return &q
	case p.from != nil && !m.step && m.hitAt == 0:
		m.ev = p.from.event()
		q := p.from.with(m)
		return &q
	}
	return nil
}

// settle makes the inexact position exact if its guess holds: a fresh
// run goes to the guess, and the replay is there when it stops as this
// one did, with the same registers. Meanwhile the run at the place is set
// aside; it comes back if the guess fails, and the place stays inexact.
// An Interrupt on the way returns ErrInterrupted, the guess kept.
func (t *Timeline) settle() error {
	p := t.pos
	if !p.inexact || p.guess == nil || t.noRun {
		return nil
	}
	cur := t.s.detachRun()
	if cur == nil {
		return nil
	}
	t.noRun = true
	err := t.seek(*p.guess)
	if err == nil && t.samePlace(p) {
		_ = killParked(cur)
		return nil
	}
	interrupted := errors.Is(err, ErrInterrupted) || t.pos.final.Reason == ReasonInterrupt
	if fresh := t.s.detachRun(); fresh != nil {
		_ = killParked(fresh)
	}
	if err := t.s.attachRun(cur); err != nil {
		return err // t.noRun: the next command starts a run
	}
	t.noRun = false
	t.pos = p
	if interrupted {
		return ErrInterrupted
	}
	t.pos.guess = nil
	return nil
}

// exactHere settles the position, and refuses an inexact one.
func (t *Timeline) exactHere() error {
	if err := t.settle(); err != nil {
		return err
	}
	if t.pos.inexact {
		return errInexact
	}
	return nil
}

// samePlace says whether the run stopped at p's place: an exact position
// whose stop is p's, with p's registers.
func (t *Timeline) samePlace(p position) bool {
	if t.pos.inexact || t.pos.end || t.pos.final.Reason != p.final.Reason || t.pos.final.Event != p.final.Event {
		return false
	}
	tid, err := t.hostTid(p.vtid)
	if err != nil {
		return false
	}
	r, err := t.s.Regs(tid)
	return err == nil && r == p.regs
}
