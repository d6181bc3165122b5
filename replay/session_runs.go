package replay

import (
	"fmt"
	"slices"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// What a Timeline needs of a Session beyond its public methods: setting
// runs aside and taking them back (checkpoints), replacing every
// breakpoint and watchpoint at once (to replay a move as it was made),
// and steps that stop at an address or an event boundary (to count a
// thread's instructions).

// parked is a run set aside, paused at a stop: a checkpoint.
type parked struct {
	r        *dbgRun
	last     Stop
	boundary bool
}

// points are a set of breakpoints and watchpoints.
type points struct {
	bps []uint64 // sorted
	wps [4]watch
}

func (p points) equal(q points) bool { return slices.Equal(p.bps, q.bps) && p.wps == q.wps }

func (p points) hasBreak(addr uint64) bool {
	_, ok := slices.BinarySearch(p.bps, addr)
	return ok
}

func (p points) hasWatch(w watch) bool { return w.on && slices.Contains(p.wps[:], w) }

// detach takes the current run from the Session, paused where it is;
// nil if there is none or it has ended. Preconditions: mu held.
func (s *Session) detach() *parked {
	if s.r == nil || s.r.ended {
		return nil
	}
	p := &parked{r: s.r, last: s.last, boundary: s.boundary}
	s.r = nil
	return p
}

// detachRun is detach for a Timeline.
func (s *Session) detachRun() *parked {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.detach()
}

// attachRun makes p the current run, killing the current one, and gives
// it the Session's breakpoints and watchpoints.
func (s *Session) attachRun(p *parked) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.kill(); err != nil {
		return err
	}
	s.r, s.last, s.boundary, s.lastErr = p.r, p.last, p.boundary, nil
	// A run made by another Session (an automatic checkpoint's helper)
	// takes this one's interrupts, signal stops, focus and results.
	if err := s.do(func(l *layer) error {
		l.intr, l.signals, l.focus, l.results, l.waiting = &s.intr, &s.signals, s.focus, s.results, &s.waiting
		return nil
	}); err != nil {
		return err
	}
	return s.syncPoints()
}

// launchRun replaces the current run, if any, with a fresh one.
func (s *Session) launchRun() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.kill(); err != nil {
		return err
	}
	return s.launch()
}

// killParked ends a run set aside.
func killParked(p *parked) error { return p.r.end() }

// syncPoints makes the current run's breakpoints and watchpoints the
// Session's; a breakpoint whose page is not mapped yet goes in when it
// is. Preconditions: mu held.
func (s *Session) syncPoints() error {
	if s.r == nil || s.r.ended {
		return nil
	}
	return s.do(func(l *layer) error {
		for a := range l.bps {
			if !s.bps[a] {
				l.remove(a)
			}
		}
		for a := range l.pending {
			if !s.bps[a] {
				delete(l.pending, a)
			}
		}
		for a := range s.bps {
			if _, ok := l.bps[a]; !ok {
				// Pending until it is in, so that insert waits for its
				// page to be code: a run brought back to a point where
				// a library is mapped but not yet as code (points are
				// set again after every seek) lost it to the loader.
				l.pending[a] = true
				_ = l.insert(a)
			}
		}
		for i, w := range s.wps {
			if l.wps[i] != w {
				if err := l.setWatch(i, w); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// getPoints returns the Session's breakpoints and watchpoints.
func (s *Session) getPoints() points {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := points{wps: s.wps}
	for a := range s.bps {
		p.bps = append(p.bps, a)
	}
	slices.Sort(p.bps)
	return p
}

// setPoints replaces the Session's breakpoints and watchpoints with p.
func (s *Session) setPoints(p points) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return ErrClosed
	}
	s.bps = map[uint64]bool{}
	for _, a := range p.bps {
		s.bps[a] = true
	}
	s.wps = p.wps
	return s.syncPoints()
}

// boundaryNow says whether the last stop is at an event boundary.
func (s *Session) boundaryNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.boundary
}

// stepCount single-steps thread tid, as Step does, until it has executed
// n instructions, its instruction pointer is at (at != 0), or the run
// reaches event boundary event (toEvent); Stop.Steps counts them.
func (s *Session) stepCount(tid, n int, at uint64, toEvent bool, event uint64, trace *[]uint64) (Stop, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resume(func(l *layer) (goal, error) {
		if l.dr == nil {
			return goal{}, ErrNoDebugRegs
		}
		if !slices.Contains(l.liveTids(), tid) {
			return goal{}, fmt.Errorf("step: no live thread %d", tid)
		}
		return goal{breaks: true, stepTid: tid, stepN: n, stepAt: at, toEvent: toEvent, event: event, trace: trace}, nil
	})
}

// eflagsRF is the resume flag (X86_EFLAGS_RF).
const eflagsRF = 1 << 16

// errNoFreeSlot: every debug register is taken (countHits).
var errNoFreeSlot = ErrNoWatchSlot

// countBreakHits is countHits with the int3 of a breakpoint the
// Session's points have at addr (the debug registers are dead, or all
// taken): the arrivals are counted in the run, as with a debug register,
// but each costs a step over the int3 as well. The count's end is a
// ReasonWatchpoint stop with Watch -1.
func (s *Session) countBreakHits(tid int, addr uint64, n int, toEvent bool, event uint64) (Stop, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resume(func(l *layer) (goal, error) {
		return goal{breaks: true, toEvent: toEvent, event: event, countTid: tid, countAt: addr, countN: n}, nil
	})
}

// countHits runs until thread tid has arrived n times at the instruction
// at addr, counted with an instruction breakpoint in a free debug
// register (one trap per arrival, nothing to step over), or until another
// stop of the Session's points, or event boundary event (toEvent);
// Stop.Steps is the arrivals counted. errNoFreeSlot when the debug
// registers are all taken.
func (s *Session) countHits(tid int, addr uint64, n int, toEvent bool, event uint64) (Stop, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot := slices.IndexFunc(s.wps[:], func(w watch) bool { return !w.on })
	if slot < 0 {
		return Stop{}, errNoFreeSlot
	}
	w := watch{on: true, addr: addr, size: 1, kind: WatchExec}
	if err := s.do(func(l *layer) error { return l.setWatch(slot, w) }); err != nil {
		return Stop{}, err
	}
	st, err := s.resume(func(l *layer) (goal, error) {
		return goal{breaks: true, toEvent: toEvent, event: event, countTid: tid, countSlot: slot, countN: n}, nil
	})
	if s.r != nil && !s.r.ended {
		_ = s.do(func(l *layer) error {
			if st.Reason == ReasonWatchpoint && st.Watch == slot {
				// The trap set the resume flag, which the thread would
				// not have here without it (and the register is gone).
				var r abi.Regs
				if l.inner.GetRegs(tid, &r) == nil && r.Eflags&eflagsRF != 0 {
					r.Eflags &^= eflagsRF
					_ = l.inner.SetRegs(tid, &r)
				}
			}
			return l.setWatch(slot, s.wps[slot])
		})
	}
	return st, err
}
