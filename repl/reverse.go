package repl

import "fmt"

// continue and reverse-continue, and the positions they compare.

// stopKey names a code stop (a breakpoint, watchpoint or signal stop)
// within the span between two event boundaries: its kind, thread and
// address, and how many times the same key stopped before in that span.
// Every replay makes the same stops, so a key finds the same stop again.
type stopKey struct {
	kind  StopKind
	tid   int
	addr  uint64
	sig   int
	event uint64
	occ   int
}

// position is where the replay is, as reverse-continue needs it.
type position struct {
	// event is the Stop's Event; boundary says the stop is at that event
	// boundary (else it is in the span before it).
	event    uint64
	boundary bool
	// seen counts the code stops so far in the span, by key (occ = 0).
	seen map[stopKey]int
	// last is the latest code stop in the span, and have says there is
	// one; step says the replay moved on from it by instruction steps.
	last stopKey
	have bool
	step bool
}

// key returns st's key, counting it in p.
func (p *position) key(st Stop) stopKey {
	if p.boundary || st.Event != p.event || p.seen == nil {
		*p = position{event: st.Event, seen: map[stopKey]int{}}
	}
	k := stopKey{kind: st.Kind, tid: st.Tid, addr: st.Addr, sig: st.Signal, event: st.Event}
	k.occ = p.seen[k]
	p.seen[k]++
	p.last, p.have, p.step = k, true, false
	return k
}

// isCode says whether st is a code stop (one reverse-continue returns to).
func isCode(st Stop) bool {
	return st.Kind == StopBreakpoint || st.Kind == StopWatch || st.Kind == StopSignal
}

// track updates pos for a stop reached by a forward command.
func (r *REPL) track(st Stop) {
	switch {
	case isCode(st):
		r.pos.key(st)
	case st.Kind == StopEvent:
		r.pos = position{event: st.Event, boundary: true}
	case st.Kind == StopStart || st.Kind == StopExited:
		r.pos = position{event: st.Event}
	}
}

// forward continues until a stop to show: a wanted one (a signal the
// user did not ask for goes by), counting code stops in p.
func (r *REPL) forward(p *position, until uint64) (Stop, error) {
	for {
		stop, lib, atLib := until, uint64(0), false
		if r.hasPending() {
			lib, atLib = r.libraryBoundary(ahead(r.s.Where()))
			if atLib = atLib && lib < until; atLib {
				stop = lib
			}
		}
		st, err := r.s.Continue(stop)
		if err != nil {
			return st, err
		}
		if atLib && st.Kind == StopEvent && st.Event == lib {
			r.resolvePending(st.Tid)
			continue
		}
		if !r.wanted(st) || !r.holds(st) {
			continue
		}
		if isCode(st) {
			p.key(st)
		}
		return st, nil
	}
}

func (r *REPL) cmdContinue(args []string) error {
	if err := wantArgs("continue", args, 0, 0); err != nil {
		return err
	}
	at := r.s.Where()
	if at.Kind == StopExited {
		return errEnded
	}
	until, ok := r.boundaryAfter(ahead(at), 1, r.matchEvent)
	if !ok {
		until = r.s.Len()
	}
	st, err := r.forward(&r.pos, until)
	if err == nil && !isCode(st) {
		r.track(st)
	}
	return r.report(st, err)
}

func (r *REPL) cmdReverseContinue(args []string) error {
	if err := wantArgs("reverse-continue", args, 0, 0); err != nil {
		return err
	}
	if rw, ok := r.rewinder(); ok {
		return r.rewindContinue(rw, "reverse-continue", r.matchEvent)
	}
	return r.reverse("reverse-continue", r.matchEvent)
}

// reverse goes back to the latest stop before the one the replay is at:
// an event boundary whose event match accepts, or a code stop, whichever
// comes later.
func (r *REPL) reverse(name string, match func(Event) bool) error {
	at, target := r.s.Where(), r.pos
	if at.Kind == StopStart {
		return fmt.Errorf("%s: at the start of the recording", name)
	}
	// The latest event breakpoint before the stop.
	m, haveM := r.boundaryBefore(at.Event, 1, match)
	// The latest code stop before it: replay from the start through the
	// stops until the one the replay is at.
	n, key, haveCode, err := r.lastCodeStop(at, target)
	if err != nil {
		return err
	}
	switch {
	case haveCode && (!haveM || key.event > m):
		return r.replayToStop(n)
	case haveM:
		return r.gotoEvent(m)
	}
	if name == "reverse-continue" {
		r.printf("no breakpoint before this stop; back at the start\n")
	}
	return r.restart()
}

// hasCodeBreaks says whether a forward run can make code stops the user
// asked for: code breakpoints, watchpoints, signal breakpoints. (A fault
// is shown without one, but ends its process: there is nothing to go back
// to it from.)
func (r *REPL) hasCodeBreaks() bool {
	for _, b := range r.bps {
		if b.kind == bpAddr || b.kind == bpWatch || b.kind == bpSignal {
			return true
		}
	}
	return false
}

// lastCodeStop replays from the start and finds the last code stop before
// the stop at (where target says it is among the code stops): its number
// n among the wanted stops of a forward run, and its key.
func (r *REPL) lastCodeStop(at Stop, target position) (int, stopKey, bool, error) {
	if !r.hasCodeBreaks() {
		return 0, stopKey{}, false, nil
	}
	if _, err := r.s.Restart(); err != nil {
		return 0, stopKey{}, false, err
	}
	until := at.Event
	if at.Kind == StopExited {
		until = r.s.Len()
	}
	var p position
	var best stopKey
	bestN, have := 0, false
	for i := 1; ; i++ {
		st, err := r.forward(&p, until)
		if err != nil {
			return 0, stopKey{}, false, err
		}
		if !isCode(st) {
			break // the boundary of the stop, or the end
		}
		k := p.last
		if k.event == target.event && target.have && !target.boundary {
			if k == target.last && !target.step {
				break // the stop itself
			}
			if k == target.last { // stepped on from it: it counts
				bestN, best, have = i, k, true
				break
			}
		}
		bestN, best, have = i, k, true
	}
	return bestN, best, have, nil
}

// replayToStop replays from the start to the nth wanted code stop.
func (r *REPL) replayToStop(n int) error {
	if _, err := r.s.Restart(); err != nil {
		return err
	}
	r.pos = position{}
	var st Stop
	var err error
	for range n {
		if st, err = r.forward(&r.pos, r.s.Len()); err != nil {
			return err
		}
	}
	return r.report(st, nil)
}
