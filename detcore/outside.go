package detcore

import (
	"fmt"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// When no guest thread can run: virtual time jumps to the next deadline,
// or the engine waits for the world outside the guest (a descriptor it
// makes ready, a signal it sends), or reports a deadlock.

// OutsideTracer is implemented by tracers that can tell whether a wait
// depends on the world outside the guest.
type OutsideTracer interface {
	// WaitsOutside reports whether one of ws is a descriptor whose other
	// end is outside the guest (a network socket, a terminal, hermit's
	// own stdio), directly or through an epoll set.
	WaitsOutside(ws []FdWait) bool
}

// LoopbackTracer is implemented by tracers that can tell a TCP connection
// over loopback between the guest's own sockets.
type LoopbackTracer interface {
	// GuestLoopback reports whether w is such a connection, or an epoll
	// set that holds one.
	GuestLoopback(w FdWait) bool
}

// deadlockGrace is how long, in real time, the engine lets a guest whose
// threads all wait on each other sit before it reports the deadlock.
const deadlockGrace = 2 * time.Second

// maxOutsideWait bounds how long, in real time, the engine waits for the
// outside world before letting virtual time reach a deadline.
const maxOutsideWait = 10 * time.Second

// allBlocked runs when no thread can run: time jumps to the next deadline,
// or the engine waits for the outside world. Only the outside world can
// make a descriptor ready while every guest thread waits; when a thread
// waits on it and another has a deadline, the engine waits for real for up
// to the time left (a client's timeout then means what it says) before
// time jumps.
func (e *Engine) allBlocked() error {
	var ws []FdWait
	for _, t := range e.ordered() {
		if t.state == tsBlocked && t.block.kind == bkFd {
			ws = append(ws, t.block.fds...)
		}
	}
	d, ok := e.nextDeadline()
	if ok {
		if d <= e.clock {
			return nil
		}
		if ot, can := e.t.(OutsideTracer); !can || len(ws) == 0 || !ot.WaitsOutside(ws) {
			e.clock = d
			return nil
		}
		return e.waitOutsideUntil(ws, d)
	}
	start := time.Now()
	outside := false
	if ot, can := e.t.(OutsideTracer); !can || (len(ws) > 0 && ot.WaitsOutside(ws)) {
		outside = true
	}
	for _, t := range e.ordered() {
		// A signal from outside ends a pause; a lock may be held outside.
		outside = outside || t.state == tsNew || (t.state == tsBlocked && (t.block.kind == bkSignal || t.block.kind == bkRetry || t.block.kind == bkSpin))
	}
	// Signals from outside are looked for between polls: soon at first
	// (a signal that ends a wait is often followed by another: ^C, a
	// test's kill), then every outsideLook.
	look := time.Millisecond
	for {
		e.stopNow()
		ready, err := e.pollOutside(ws, look)
		look = min(2*look, outsideLook)
		if ready || err != nil {
			return err
		}
		for _, t := range e.ordered() {
			if e.runnable(t) {
				e.result.Stats.Nondet++
				e.result.Stats.OutsideWakes++
				return nil
			}
		}
		if e.retryAll() {
			// Only the outside world (a process outside the guest that
			// holds the lock, say) can let them through now.
			e.result.Stats.Nondet++
			e.result.Stats.OutsideLocks++
			return nil
		}
		if !outside && time.Since(start) > deadlockGrace && e.awaitsSignal() {
			// A handler of a signal users send may end the wait (a
			// self-pipe a handler writes, a read it interrupts): a
			// daemon waiting for SIGTERM or SIGHUP, not a deadlock.
			outside = true
		}
		if !outside && time.Since(start) > deadlockGrace {
			return fmt.Errorf("the guest is deadlocked: every thread waits for another, and nothing outside the guest can end the waits (%s)", e.describeBlocked())
		}
		if time.Since(start) > 5*time.Second {
			e.warnOnce("allblocked", "all guest threads have been blocked for 5s: "+e.describeBlocked())
		}
	}
}

// userSignals are the signals users, terminals and supervisors send a
// program from outside: SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2,
// SIGTERM, SIGWINCH and the realtime ones.
const userSignals = 1<<(abi.SIGHUP-1) | 1<<(abi.SIGINT-1) | 1<<(abi.SIGQUIT-1) | 1<<(abi.SIGUSR1-1) |
	1<<(abi.SIGUSR2-1) | 1<<(abi.SIGTERM-1) | 1<<(abi.SIGWINCH-1) | (1<<64-1)&^(1<<33-1)

// awaitsSignal reports whether a waiting thread's process has a handler
// for one of userSignals, which a signal from outside may run.
func (e *Engine) awaitsSignal() bool {
	for _, t := range e.ordered() {
		if caught, _, err := e.t.Caught(t.tid); err == nil && caught&userSignals != 0 {
			return true
		}
	}
	return false
}

// waitOutsideUntil waits for the outside world to make one of ws ready
// for up to the time left until deadline d (at most maxOutsideWait), and
// lets virtual time reach d if none did. It waits in slices, as allBlocked
// does without a deadline, and between two looks for a signal from
// outside that ends a wait (a SIGTERM to a server in a poll with a
// timeout came only once the timeout had passed). How many slices it
// takes depends only on the time left and on what each slice's poll and
// look found, which a recording keeps: its replay takes as many.
func (e *Engine) waitOutsideUntil(ws []FdWait, d int64) error {
	total := min(time.Duration(d-e.clock), maxOutsideWait)
	look := time.Millisecond
	for waited := time.Duration(0); waited < total; {
		slice := min(look, total-waited)
		e.stopNow()
		ready, err := e.pollOutside(ws, slice)
		if ready || err != nil {
			e.waited(waited)
			return err
		}
		waited += slice
		look = min(2*look, outsideLook)
		for _, t := range e.ordered() {
			if e.runnable(t) {
				e.result.Stats.Nondet++
				e.result.Stats.OutsideWakes++
				e.waited(waited)
				return nil
			}
		}
	}
	e.clock = d
	return nil
}

// waited moves the clock on by the time a wait for the outside world that
// ended early took, as its slices count it (not the host's clock: a
// replay takes as many). Otherwise a thread that such a wait lets try
// again and again (a probed wait4, woken at every slice, since a child may
// change from outside) would keep the clock where it is, a microsecond a
// turn, and a sleep beside a TCP server would never end.
func (e *Engine) waited(d time.Duration) {
	if !e.cfg.OldOutsideClock {
		e.clock += int64(d)
	}
}

// outsideLook is how often, at most, the engine looks for signals from
// outside while every thread waits for the outside world.
const outsideLook = 100 * time.Millisecond

// pollOutside waits up to timeout for one of ws to become ready, which
// counts as a nondeterministic point. Whatever happened, a signal from
// outside may be pending now, or a child may have changed.
func (e *Engine) pollOutside(ws []FdWait, timeout time.Duration) (bool, error) {
	ready, err := e.t.Poll(ws, timeout)
	if err != nil {
		return false, err
	}
	e.sigEpoch++
	e.childEpoch++
	for i, r := range ready {
		if r {
			e.result.Stats.Nondet++
			e.result.Stats.OutsideReady++
			e.warnLoopback(ws[i])
			return true, nil
		}
	}
	return false, nil
}

// warnLoopback warns, once, in a run (a recording keeps what came), when
// the descriptor the host made ready is a TCP connection over loopback
// between the guest's own sockets: on the host's network its data comes
// when the host's TCP timers say, which no schedule repeats.
func (e *Engine) warnLoopback(w FdWait) {
	lt, ok := e.t.(LoopbackTracer)
	if !ok || e.cfg.Journal != nil || e.warned["loopback"] || !lt.GuestLoopback(w) {
		return
	}
	e.warnOnce("loopback", "a TCP connection over loopback between the guest's own sockets is on the host's network, "+
		"whose timers decide when its data comes: this run may not repeat exactly "+
		"(--network local gives the guest a network of its own, where it does; hermit record keeps what came)")
}
