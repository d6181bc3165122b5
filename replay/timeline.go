package replay

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// A Timeline runs a Session forwards and backwards. It knows where the
// replay is as a position that it can return to exactly, and goes back by
// running forwards again to an earlier position, from the nearest run set
// aside before it (a checkpoint) or from the start.
//
// Positions. A replay runs one thread at a time and switches only at
// recorded events, so event boundary n is a place every run reaches in the
// same state. Between boundaries, without instruction counters, a place is
// known by how the debugger got there: a position is a boundary (or the
// start, or the end) followed by the moves the debugger made from it, each
// a continue or an instruction step together with the breakpoints and
// watchpoints it ran under. Replaying the same moves under the same
// points from the same boundary reaches the same stop in the same state,
// because the debug layer hides its stops from the engine. A move that
// ends at a boundary starts a new position there.
//
// Going back one instruction of thread T (ReverseStep) drops the last
// instruction of a step of T; otherwise it replays the last move again
// single-stepping T, counts the instructions T executes until the move's
// stop, and replays to one fewer. ReverseContinue finds the latest stop
// of the current breakpoints and watchpoints before the position: first
// among the moves that led to it (each replayed under its own points plus
// the current ones), then in the spans between earlier checkpoints, latest
// first. A watchpoint found that way is shown as gdb expects going
// backwards: before the access, with the instruction that makes it next.
//
// Checkpoints are runs set aside, paused (see checkpoint.go). Tids are
// host tids of the current run, as with the Session; positions keep the
// guest's own.
type Timeline struct {
	s  *Session
	mu sync.Mutex
	// pos is where the current run is.
	pos position
	// pool holds the checkpoints (checkpoint.go).
	pool pool
	// noRun: the Session has no current run (Checkpoint took it).
	noRun bool
	opts  TimelineOptions
	// passed is what the last reverse continue's search passed (backcache.go).
	passed *backCache
	// keep, during ReverseContinueWhere, says which stops the search may
	// land at.
	keep func(Stop) bool
}

// A move is one resume of the run: a continue (to a boundary when until
// is set), a step of n instructions of thread vtid, under pts, or (hitAt
// set) a run to thread vtid's nth arrival at address hitAt (count.go).
type move struct {
	step  bool
	vtid  int
	n     int
	hitAt uint64
	until uint64 // 1 + the boundary a continue also stops at; 0: none
	pts   points
	// ev is the number of events consumed where the move began, and
	// trace, for a step, where its thread went (reverse.go); neither is
	// part of what the move is.
	ev    uint64
	trace *stepTrace
	// ended: the move is a user's, whose end is known: at watchpoint
	// end if end.on, else at no watchpoint. Its other watchpoints did
	// not stop it (its end was its points' first stop), so a replay of
	// the move needs only end of them.
	ended bool
	end   watch
}

func (m move) equal(o move) bool {
	return m.step == o.step && m.vtid == o.vtid && m.n == o.n && m.hitAt == o.hitAt && m.until == o.until && m.pts.equal(o.pts)
}

// position is a place of the replay a Timeline can return to.
type position struct {
	// at is where the moves start: 0 for the start of the replay (before
	// the first instruction), n+1 for event boundary n.
	at uint64
	// end: the replay has ended (no moves).
	end   bool
	moves []move
	// final is the stop the position is, as the run that made it reported
	// it (its Tid is that run's); vtid is its thread's guest id.
	final Stop
	vtid  int
	// done is how many instructions the last move's thread executed in
	// it, when it is a step.
	done int
	// inexact: an Interrupt stopped the run between two stops, where no
	// move can return, or the run went on from such a place; the
	// position stands for the boundary before it.
	inexact bool
	// For an inexact position: from is the exact one where the move the
	// Interrupt cut short began; guess, when set, is what would be this
	// position if the moves from there made no stop before those the run
	// made (settle finds out), and regs are its thread's registers here.
	from, guess *position
	regs        abi.Regs
}

// event is the number of events consumed at p.
func (p *position) event() uint64 { return p.final.Event }

// prefix returns p's first k moves as a position (final unknown).
func (p position) prefix(k int) position {
	return position{at: p.at, moves: slices.Clone(p.moves[:k])}
}

// with returns p followed by m (final unknown).
func (p position) with(m move) position {
	q := p.prefix(len(p.moves))
	q.moves = append(q.moves, m)
	return q
}

// before orders positions by how far a run at them has got, for picking
// the nearest run to start from.
func (p *position) before(q *position) bool {
	switch {
	case p.end != q.end:
		return q.end
	case p.event() != q.event():
		return p.event() < q.event()
	case p.at != q.at:
		return p.at < q.at
	}
	return len(p.moves) < len(q.moves)
}

// reaches says whether a run at p can get to q by going forwards.
func (p *position) reaches(q *position) bool {
	switch {
	case p.end:
		return false
	case q.end:
		return true
	case q.at > p.at:
		return len(p.moves) == 0 || q.at-1 >= p.event()
	case q.at < p.at || len(p.moves) > len(q.moves):
		return false
	}
	for i, m := range p.moves {
		if !m.equal(q.moves[i]) {
			return false
		}
	}
	return true
}

// ErrHistoryStart: a reverse command reached the start of the recording.
var ErrHistoryStart = errors.New("no more reverse-execution history")

// ErrThreadStart: a reverse step reached the first instruction of its
// thread (or process), which had none before.
var ErrThreadStart = fmt.Errorf("%w: the thread starts here", ErrHistoryStart)

// NewTimeline runs s forwards and backwards. s must be at its start; the
// Timeline owns it from now on (Close closes both).
func NewTimeline(s *Session, opts TimelineOptions) *Timeline {
	t := &Timeline{s: s, opts: opts}
	t.pos = position{final: s.LastStop()}
	t.pool.init(opts)
	return t
}

// Session returns the Session the Timeline drives, for what does not move
// the run (registers, memory, threads).
func (t *Timeline) Session() *Session { return t.s }

// vtidOf returns the guest id of the current run's thread tid (0: none).
func (t *Timeline) vtidOf(tid int) int {
	for _, th := range t.s.Threads() {
		if th.Tid == tid {
			return th.Vtid
		}
	}
	return 0
}

// hostTid returns the current run's host tid of guest thread vtid.
func (t *Timeline) hostTid(vtid int) (int, error) {
	for _, th := range t.s.Threads() {
		if th.Vtid == vtid {
			return th.Tid, nil
		}
	}
	return 0, fmt.Errorf("thread %d is not alive here", vtid)
}

// advance moves t.pos by m, which ended at st.
func (t *Timeline) advance(m move, st Stop, err error) {
	switch {
	case err != nil && st.Reason != ReasonExited:
		// The move failed before the run went anywhere, or the run is
		// lost (the Session's later calls say so).
		return
	case st.Reason == ReasonExited:
		t.pos = position{end: true, final: st}
		return
	case st.Reason == ReasonEvent || st.Reason == ReasonInterrupt && t.s.boundaryNow():
		t.pos = position{at: st.Event + 1, final: st}
		return
	case st.Reason == ReasonInterrupt:
		t.pos = position{at: st.Event, final: st, inexact: true, from: t.pos.exactFrom()}
		return
	case t.pos.inexact && (m.step || m.hitAt != 0 || st.Event == t.pos.final.Event):
		// It began where no move returns to, and stopped before the
		// next boundary, or counted from there: no move is known to
		// return here, but one may (guessFrom).
		p := position{at: st.Event, final: st, vtid: t.vtidOf(st.Tid), inexact: true, from: t.pos.from, guess: t.pos.guessFrom(m)}
		if p.guess != nil {
			p.regs, _ = t.s.Regs(st.Tid)
		}
		t.pos = p
		return
	case t.pos.inexact:
		// A continue that passed a boundary stopped at the first of its
		// points after the last one it passed: the move from there
		// returns here.
		t.pos = position{at: st.Event}
		m.ev = max(st.Event, 1) - 1
	}
	m.ended, m.end = true, watch{}
	if st.Reason == ReasonWatchpoint && st.Watch >= 0 && st.Watch < len(m.pts.wps) {
		m.end = m.pts.wps[st.Watch]
	}
	p := t.pos.prefix(len(t.pos.moves))
	if k := len(p.moves); k > 0 && m.step && t.pos.final.Reason == ReasonStep {
		// Steps of one thread under the same points run as one.
		if last := &p.moves[k-1]; last.step && last.vtid == m.vtid && last.pts.equal(m.pts) && last.ended {
			last.n += m.n
			last.end = m.end
			t.pos = position{at: p.at, moves: p.moves, final: st, vtid: t.vtidOf(st.Tid), done: t.pos.done + st.Steps}
			return
		}
	}
	p.moves = append(p.moves, m)
	p.final, p.vtid, p.done = st, t.vtidOf(st.Tid), st.Steps
	t.pos = p
}

// userMove is a move under the Session's points.
func (t *Timeline) userMove(m move) move {
	m.pts = t.s.getPoints()
	m.ev = t.pos.event()
	return m
}

// Where returns the stop the Timeline is at.
func (t *Timeline) Where() Stop {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pos.final
}

// Continue is Session.Continue.
func (t *Timeline) Continue() (Stop, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.autoCheckpoint()
	m := t.userMove(move{})
	st, err := t.s.Continue()
	t.advance(m, st, err)
	return st, err
}

// ContinueTo is Session.ContinueTo.
func (t *Timeline) ContinueTo(n uint64) (Stop, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.autoCheckpoint()
	m := t.userMove(move{until: n + 1})
	st, err := t.s.ContinueTo(n)
	t.advance(m, st, err)
	return st, err
}

// Step is Session.Step.
func (t *Timeline) Step(tid, n int) (Stop, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.autoCheckpoint()
	m := t.userMove(move{step: true, vtid: t.vtidOf(tid), n: n})
	st, err := t.s.Step(tid, n)
	t.advance(m, st, err)
	return st, err
}

// RunToEvent is Session.RunToEvent, going back from the nearest
// checkpoint rather than the start.
func (t *Timeline) RunToEvent(n uint64) (Stop, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer t.autoCheckpoint()
	err := t.seek(position{at: n + 1})
	if errors.Is(err, errPastEnd) {
		err = t.seek(position{end: true})
	}
	return t.pos.final, err
}

// RunToEventWhile is RunToEvent, unless the stop it reaches fails keep
// (a debugged process has ended by then): the replay then comes back to
// where it was, exactly. It returns the stop reached (kept or not), the
// stop the replay is at, and whether it was kept.
func (t *Timeline) RunToEventWhile(n uint64, keep func(Stop) bool) (reached, at Stop, kept bool, err error) {
	t.mu.Lock()
	here := t.pos
	here.moves = slices.Clone(t.pos.moves)
	t.mu.Unlock()
	reached, err = t.RunToEvent(n)
	if err != nil && reached.Reason != ReasonExited || keep(reached) {
		return reached, reached, true, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	err = t.seek(here)
	return reached, t.pos.final, false, err
}

// Restart goes back to the start of the replay.
func (t *Timeline) Restart() (Stop, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.seek(position{})
	return t.pos.final, err
}

// errPastEnd: the replay ended before the position.
var errPastEnd = errors.New("the replay ends before that position")

// seek brings the replay to q exactly, from the nearest run that reaches
// it, and restores the Session's points.
func (t *Timeline) seek(q position) error {
	user := t.s.getPoints()
	err := t.goTo(q)
	if perr := t.s.setPoints(user); err == nil && perr != nil && !errors.Is(perr, ErrClosed) {
		err = perr
	}
	return err
}

// goTo is seek without restoring the Session's points.
func (t *Timeline) goTo(q position) error {
	if t.noRun || t.pos.inexact || !t.pos.reaches(&q) {
		if err := t.pool.take(t, &q); err != nil {
			return err
		}
	}
	if q.end || q.at > t.pos.at {
		// A run to a boundary stops at no breakpoint: none is armed on
		// the way (one in a loop cost a trap per round; seek gives the
		// user's back).
		if err := t.s.setPoints(points{}); err != nil {
			return err
		}
	}
	if q.end {
		st, err := t.s.RunToEvent(math.MaxUint64)
		t.pos = position{end: true, final: st}
		return err
	}
	if q.at > t.pos.at {
		st, err := t.s.RunToEvent(q.at - 1)
		if st.Reason == ReasonExited {
			t.pos = position{end: true, final: st}
			if err == nil {
				err = errPastEnd
			}
			return err
		}
		if err != nil {
			return err
		}
		t.pos = position{at: q.at, final: st}
	}
	for i := len(t.pos.moves); i < len(q.moves); i++ {
		st, err := t.play(q.moves[i])
		if st.Reason == ReasonExited {
			t.pos = position{end: true, final: st}
			if err == nil && i+1 < len(q.moves) {
				err = errPastEnd
			}
			return err
		}
		if err != nil {
			return err
		}
		// q's moves, shared (not copied at each move: quadratic over a
		// span of thousands of stops), clipped so that none is appended
		// to in place.
		t.pos = position{at: q.at, moves: q.moves[: i+1 : i+1], final: st, vtid: t.vtidOf(st.Tid), done: st.Steps}
	}
	return nil
}

// play replays m under its points.
func (t *Timeline) play(m move) (Stop, error) {
	if err := t.s.setPoints(m.pts); err != nil {
		return Stop{}, err
	}
	switch {
	case m.hitAt != 0:
		tid, err := t.hostTid(m.vtid)
		if err != nil {
			return Stop{}, err
		}
		if len(m.pts.bps) > 0 || m.pts.wps != (points{}).wps {
			// A reverse search's leg: its points' stops show; Steps
			// counts the arrivals before the stop.
			st, _, err := t.hits(tid, m.hitAt, m.n, false, 0)
			return st, err
		}
		return t.playHitsAt(tid, m.hitAt, m.n)
	case m.step:
		tid, err := t.hostTid(m.vtid)
		if err != nil {
			return Stop{}, err
		}
		if tr := m.trace; tr != nil && m.n >= hitsFrom && m.n <= len(tr.pcs) && tr.pcs[m.n-1] != tr.pc0 && tr.pcs[m.n-1] != 0 {
			return t.playTraced(m, tid)
		}
		return t.s.Step(tid, m.n)
	case m.until > 0:
		return t.s.ContinueTo(m.until - 1)
	}
	return t.s.Continue()
}

// Close kills the runs: the current one and every checkpoint.
func (t *Timeline) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopBuilder()
	t.pool.close()
	return t.s.Close()
}
