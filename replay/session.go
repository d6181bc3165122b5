package replay

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
)

// A Session debugs runs of one recording: it starts a run paused before
// its first instruction, runs it to event boundaries, breakpoints,
// watchpoints or the end, single-steps threads, and shows registers and
// memory, without ever changing what the run does: the debug layer
// (debug.go) hides the debugger's stops from the engine. Going back is
// starting again: every run of a Starter is identical, and breakpoints and
// watchpoints carry over.
//
// Threads are named by their host tids (detcore.ThreadInfo.Tid). Those
// change from run to run (after Restart, or RunToEvent to an earlier
// event); the guest's own ids (ThreadInfo.Vtid) do not.
//
// The methods may be called from any goroutine; they are serialized (mu),
// and a method that runs the guest holds the Session until the run stops,
// except Interrupt. Each run lives on a goroutine of its own, locked to
// its OS thread as ptrace requires; the methods send it commands, which it
// executes while paused. Close must be called to end the run.
type Session struct {
	start Starter
	// intr asks the running run to stop (Interrupt); waiting is the
	// layer of the run while it waits for a stop (debug_kick.go).
	intr    atomic.Bool
	waiting atomic.Pointer[layer]
	// signals makes Continue and Step stop at signals (StopAtSignals).
	signals atomic.Bool
	// focus is the process Focus names, which every run gets. Protected
	// by mu.
	focus int
	// results are the calls' results CaptureResults collects, shared by
	// every run (they are all the same) and touched only by the run
	// goroutine, or under mu with no run. nil: not collected.
	results map[uint64]int64
	// out passes on the guest's output once across runs (nil: the
	// Starter's runs write where it sends them).
	out *outputMux

	mu sync.Mutex
	// r is the current run; nil once closed. Protected by mu.
	r *dbgRun
	// bps and wps are the breakpoints and watchpoints, which every new
	// run gets. Protected by mu.
	bps map[uint64]bool
	wps [4]watch
	// last is the last stop, boundary says it is at an event boundary, and
	// lastErr is the run's error once it has exited. Protected by mu.
	last     Stop
	boundary bool
	lastErr  error
}

// dbgRun is one debugged run of the Starter and the goroutine that drives it.
type dbgRun struct {
	l      *layer
	runner Runner
	// cmds carries the Session's commands to the paused run.
	cmds chan sessCmd
	// reports carries each stop (and the start's failure) back.
	reports chan sessReport
	// done is closed when the run's goroutine ends: the guest is gone.
	done chan struct{}
	// ended: the run has reported its exit. Protected by Session.mu.
	ended bool
	// outs are its output streams, when the Session passes output on.
	outs []*outStream
}

// sessCmd is work for the run's goroutine; a resume command, once do
// succeeds, ends the pause.
type sessCmd struct {
	do     func() error
	resume bool
	done   chan error
}

type sessReport struct {
	stop     Stop
	boundary bool
	err      error
	failed   bool // the run could not start
}

// killTimeout bounds the wait for a killed run to end.
const killTimeout = time.Minute

// NewSession starts the first run, paused before the guest's first
// instruction (Stop ReasonStart, event 0).
func NewSession(start Starter) (*Session, error) {
	return NewSessionWith(start, SessionOptions{})
}

// NewSessionWith is NewSession with options.
func NewSessionWith(start Starter, o SessionOptions) (*Session, error) {
	s := &Session{start: start, bps: map[uint64]bool{}}
	if o.Stdout != nil || o.Stderr != nil {
		s.out = &outputMux{w: [2]io.Writer{cmp.Or[io.Writer](o.Stdout, io.Discard), cmp.Or[io.Writer](o.Stderr, io.Discard)}}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.launch(); err != nil {
		return nil, err
	}
	return s, nil
}

// launch starts a run and waits for its first pause. Preconditions: mu
// held, no run.
func (s *Session) launch() error {
	r := &dbgRun{cmds: make(chan sessCmd), reports: make(chan sessReport, 1), done: make(chan struct{})}
	bps := make([]uint64, 0, len(s.bps))
	for a := range s.bps {
		bps = append(bps, a)
	}
	slices.Sort(bps)
	var h Hooks
	if s.out != nil {
		var err error
		if h.Stdout, h.Stderr, r.outs, err = s.out.pipes(); err != nil {
			return fmt.Errorf("starting a run: %w", err)
		}
		defer h.Stdout.Close()
		defer h.Stderr.Close()
	}
	go r.main(s.start, h, s, bps)
	rep := <-r.reports
	if rep.failed {
		<-r.done
		return rep.err
	}
	s.r, s.last, s.boundary, s.lastErr = r, rep.stop, rep.boundary, nil
	return nil
}

// main is the run's goroutine.
// It takes what it needs of s before launch returns.
func (r *dbgRun) main(start Starter, h Hooks, s *Session, bps []uint64) {
	defer close(r.done)
	// ptrace binds the guest to this thread, which exits with the
	// goroutine (never unlocked).
	runtime.LockOSThread()
	l := newLayer(&s.intr, &s.signals)
	l.focus, l.results, l.waiting = s.focus, s.results, &s.waiting
	wps := s.wps
	l.stop = r.pause
	r.l = l
	h.Wrap, h.OnEvent = l.wrap, l.onEvent
	runner, err := start(h)
	if err != nil {
		r.reports <- sessReport{failed: true, err: fmt.Errorf("starting a run: %w", err)}
		return
	}
	r.runner = runner
	if l.inner == nil {
		l.kill()
		runner.Kill()
		_, _ = runner.Run()
		r.reports <- sessReport{failed: true, err: errors.New("starting a run: the Starter did not call Hooks.Wrap")}
		return
	}
	l.list = runner.Engine().Threads
	l.clock = runner.Engine().Clock
	l.inStub = runner.Engine().InHermitStub
	st := Stop{Reason: ReasonStart}
	if ts := l.list(); len(ts) > 0 {
		st.Tid = ts[0].Tid
		// Stopped at its exec: a step first completes the execve.
		l.thread(st.Tid).inSyscall = true
	}
	l.install(bps, wps)
	l.pause(st)
	res, err := runner.Run()
	if l.killed {
		return
	}
	r.reports <- sessReport{stop: Stop{Reason: ReasonExited, Event: l.event, Result: res}, err: err}
}

// pause is the layer's stop: it reports st and executes commands until
// one resumes the run.
func (r *dbgRun) pause(st Stop) {
	r.reports <- sessReport{stop: st, boundary: r.l.boundary}
	for c := range r.cmds {
		err := c.do()
		c.done <- err
		if c.resume && err == nil {
			return
		}
	}
}

// live returns the current run if it can take commands. Preconditions:
// mu held.
func (s *Session) live() (*dbgRun, error) {
	switch {
	case s.r == nil:
		return nil, ErrClosed
	case s.r.ended:
		return nil, ErrExited
	}
	return s.r, nil
}

// do runs fn on the paused run's goroutine. Preconditions: mu held.
func (s *Session) do(fn func(l *layer) error) error {
	r, err := s.live()
	if err != nil {
		return err
	}
	c := sessCmd{do: func() error { return fn(r.l) }, done: make(chan error, 1)}
	r.cmds <- c
	return <-c.done
}

// resume sets the run going toward the goal setup returns, and waits for
// its next stop. Preconditions: mu held.
func (s *Session) resume(setup func(l *layer) (goal, error)) (Stop, error) {
	if s.r == nil {
		return Stop{}, ErrClosed
	}
	if s.r.ended {
		return s.last, s.lastErr
	}
	r := s.r
	s.intr.Store(false)
	c := sessCmd{resume: true, done: make(chan error, 1), do: func() error {
		g, err := setup(r.l)
		if err == nil {
			r.l.setGoal(g)
		}
		return err
	}}
	r.cmds <- c
	if err := <-c.done; err != nil {
		return Stop{}, err
	}
	rep := <-r.reports
	if s.out != nil {
		// What the guest wrote before the stop, before the stop.
		s.out.sync(r.outs)
	}
	s.last, s.boundary = rep.stop, rep.boundary
	if rep.stop.Reason == ReasonExited {
		r.ended = true
		<-r.done
		s.lastErr = rep.err
	}
	return rep.stop, rep.err
}

// kill ends the current run, if any, and waits until its guest is gone.
// Preconditions: mu held.
func (s *Session) kill() error {
	r := s.r
	if r == nil {
		return nil
	}
	s.r = nil
	return r.end()
}

// end kills the run, paused or ended, and waits until its guest is gone.
func (r *dbgRun) end() error {
	if !r.ended {
		c := sessCmd{resume: true, done: make(chan error, 1), do: func() error {
			r.l.kill()
			r.runner.Kill()
			return nil
		}}
		r.cmds <- c
		<-c.done
	}
	select {
	case <-r.done:
		return nil
	case <-time.After(killTimeout):
		return fmt.Errorf("the killed run did not end within %v", killTimeout)
	}
}

// Event returns the number of events the run has consumed: at event
// boundary n (RunToEvent(n)) it is n, between boundaries n-1 and n it is n.
func (s *Session) Event() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last.Event
}

// LastStop returns the stop the Session is at.
func (s *Session) LastStop() Stop {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Current returns the thread the last stop concerns (0 after the end).
func (s *Session) Current() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last.Tid
}

// Threads lists the live guest threads in creation order (none after the
// end).
func (s *Session) Threads() []detcore.ThreadInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []detcore.ThreadInfo
	_ = s.do(func(l *layer) error {
		out = l.list()
		return nil
	})
	return out
}

// Regs returns thread tid's registers. At a breakpoint the instruction
// pointer is the breakpoint's address.
func (s *Session) Regs(tid int) (abi.Regs, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var r abi.Regs
	err := s.do(func(l *layer) error { return l.inner.GetRegs(tid, &r) })
	return r, err
}

// SetRegs would set thread tid's registers, but a replay that changed them
// would no longer follow its recording: it accepts only the registers tid
// already has, and otherwise returns ErrReadOnly.
func (s *Session) SetRegs(tid int, r abi.Regs) error {
	cur, err := s.Regs(tid)
	if err != nil {
		return err
	}
	if cur != r {
		return ErrReadOnly
	}
	return nil
}

// ReadMem reads thread tid's memory at addr into b, showing the original
// bytes under breakpoints. It returns how many bytes it read: fewer than
// len(b), with an error, when the range runs into unmapped memory.
func (s *Session) ReadMem(tid int, addr uint64, b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int
	err := s.do(func(l *layer) (err error) {
		n, err = l.readMem(tid, addr, b)
		return err
	})
	return n, err
}

// breakpointAt says whether a breakpoint is set at addr.
func (s *Session) breakpointAt(addr uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bps[addr]
}

// SetBreakpoint sets a breakpoint at the instruction at addr, in every
// guest process. It fails when no process maps addr. After a Restart the
// breakpoint is inserted as soon as its page is mapped.
func (s *Session) SetBreakpoint(addr uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return ErrClosed
	}
	if s.bps[addr] {
		return nil
	}
	if !s.r.ended {
		if err := s.do(func(l *layer) error { return l.insertSoon(addr) }); err != nil {
			return err
		}
	}
	s.bps[addr] = true
	return nil
}

// ClearBreakpoint removes the breakpoint at addr.
func (s *Session) ClearBreakpoint(addr uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return ErrClosed
	}
	if !s.bps[addr] {
		return fmt.Errorf("no breakpoint at %#x", addr)
	}
	delete(s.bps, addr)
	if !s.r.ended {
		return s.do(func(l *layer) error {
			l.remove(addr)
			return nil
		})
	}
	return nil
}

// SetWatchpoint watches size bytes (1, 2, 4 or 8, aligned) at addr in
// every thread, and returns the watchpoint's id (0–3). Setting the same
// watchpoint twice returns the same id.
func (s *Session) SetWatchpoint(addr uint64, size int, kind WatchKind) (int, error) {
	if err := checkWatch(addr, size, kind); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return 0, ErrClosed
	}
	w := watch{on: true, addr: addr, size: size, kind: kind}
	slot := -1
	for i, o := range s.wps {
		if o == w {
			return i, nil
		}
		if !o.on && slot < 0 {
			slot = i
		}
	}
	if slot < 0 {
		return 0, ErrNoWatchSlot
	}
	if !s.r.ended {
		if err := s.do(func(l *layer) error { return l.setWatch(slot, w) }); err != nil {
			return 0, err
		}
	}
	s.wps[slot] = w
	return slot, nil
}

// ClearWatchpoint removes watchpoint id.
func (s *Session) ClearWatchpoint(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return ErrClosed
	}
	if id < 0 || id >= len(s.wps) || !s.wps[id].on {
		return fmt.Errorf("no watchpoint %d", id)
	}
	s.wps[id] = watch{}
	if !s.r.ended {
		return s.do(func(l *layer) error { return l.setWatch(id, watch{}) })
	}
	return nil
}

// Continue runs until a breakpoint or watchpoint is hit, Interrupt is
// called, or the guest ends. After the end it returns the Exited stop
// again.
func (s *Session) Continue() (Stop, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resume(func(*layer) (goal, error) { return goal{breaks: true}, nil })
}

// ContinueTo is Continue that also stops at event boundary n, which must
// not be behind the run (n >= Event()).
func (s *Session) ContinueTo(n uint64) (Stop, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < s.last.Event {
		return Stop{}, fmt.Errorf("event %d is behind the run (at event %d)", n, s.last.Event)
	}
	if s.boundary && s.last.Event == n {
		return s.atBoundary(), nil
	}
	return s.resume(func(*layer) (goal, error) { return goal{breaks: true, toEvent: true, event: n}, nil })
}

// RunToEvent runs to event boundary n (before the engine acts on event
// n), restarting first if n is behind the run. Breakpoints and
// watchpoints do not stop it. If the guest ends first, it returns the
// Exited stop.
func (s *Session) RunToEvent(n uint64) (Stop, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return Stop{}, ErrClosed
	}
	if n < s.last.Event {
		if err := s.restart(); err != nil {
			return Stop{}, err
		}
	}
	if s.boundary && s.last.Event == n {
		return s.atBoundary(), nil
	}
	return s.resume(func(*layer) (goal, error) { return goal{toEvent: true, event: n}, nil })
}

// atBoundary returns the last stop, known to be at an event boundary, as
// an event stop. Preconditions: mu held.
func (s *Session) atBoundary() Stop {
	st := s.last
	st.Reason = ReasonEvent
	return st
}

// Step runs until thread tid has executed n instructions, the other
// threads running in between as the recording has them. An intercepted
// syscall instruction counts once, when it completes, and so does an
// instruction the engine emulates (rdtsc, rdtscp, cpuid), as natively;
// the entry into a signal handler does too. The step ends early, with Steps telling how far it got,
// at a breakpoint or watchpoint hit (of any thread), at Interrupt, or at
// the end of the guest.
func (s *Session) Step(tid, n int) (Stop, error) {
	if n < 1 {
		return Stop{}, fmt.Errorf("step %d instructions: want at least 1", n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resume(func(l *layer) (goal, error) {
		if l.dr == nil {
			return goal{}, ErrNoDebugRegs
		}
		if !slices.Contains(l.liveTids(), tid) {
			return goal{}, fmt.Errorf("step: no live thread %d", tid)
		}
		return goal{breaks: true, stepTid: tid, stepN: n}, nil
	})
}

// Focus names the process (by guest pid) whose program breakpoints are
// for: where processes run different programs at the same addresses, a
// breakpoint goes into that process and those that hold the same
// instruction there, not into the first process that maps the address.
func (s *Session) Focus(vpid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.focus = vpid
	_ = s.do(func(l *layer) error {
		l.focus = vpid
		return nil
	})
}

// StopAtSignals makes Continue and Step stop (ReasonSignal) before each
// signal the recording delivers, as a live debugger does; off by default.
func (s *Session) StopAtSignals(on bool) { s.signals.Store(on) }

// Interrupt stops the running run at its next stop or event boundary,
// with ReasonInterrupt; a thread that computes without a syscall is
// stopped where it is (debug_kick.go). It does not wait, and may be
// called while another method runs.
func (s *Session) Interrupt() {
	if !s.intr.Swap(true) {
		go kickWhileWaiting(&s.intr, &s.waiting)
	}
}

// Restart kills the run and starts a fresh, identical one, paused before
// its first instruction. Breakpoints and watchpoints carry over. If the new
// run cannot start, the Session is closed.
func (s *Session) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return ErrClosed
	}
	return s.restart()
}

// restart: Preconditions: mu held, s.r set.
func (s *Session) restart() error {
	if err := s.kill(); err != nil {
		return err
	}
	return s.launch()
}

// Close kills the run; no guest process is left behind, and the output
// it wrote has been passed on.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.kill()
	if s.out != nil {
		s.out.drain()
	}
	return err
}
