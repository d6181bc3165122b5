package detcore

import (
	"fmt"
	"sync"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// The watchdog: a goroutine that examines a thread which runs too long
// without a scheduling point while others wait (spin.go), preempts it
// after --watchdog, and looks at a thread which has sat quiet for
// fifoGrace (watchKernelWait).

// watchdogTick is how often the watchdog looks at the running thread
// when no budget of its ends sooner.
const watchdogTick = 2 * time.Millisecond

// watchdogMinSleep bounds how soon the watchdog looks again when a budget
// is about to end: the CPU time it reads runs behind the wall time.
const watchdogMinSleep = 100 * time.Microsecond

// lookedRan is how long the running thread had run at the watchdog's
// last look, and the engine's progress count then: a recording tells a
// replay how long a thread had run when a signal from outside reached it
// (outsidesig.go), without a look of its own at each resume.
type lookedRan struct {
	mu       sync.Mutex
	progress int64
	ran      time.Duration
}

func (l *lookedRan) note(progress int64, ran time.Duration) {
	l.mu.Lock()
	l.progress, l.ran = progress, ran
	l.mu.Unlock()
}

// since returns how long the thread had run at the last look, if that
// look came after the stop that progress counted.
func (l *lookedRan) since(progress int64) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ran, l.progress == progress
}

// runStart is where the running thread started, as the engine saw it at
// its resume: its CPU time then (CPUTimeTracer), for the watchdog to count the
// thread's budget from there rather than from its own first look (which
// came up to a tick later, and made a 2 ms budget take 2 to 6).
type runStart struct {
	mu       sync.Mutex
	progress int64
	tid      int
	cpu      time.Duration
}

// shortBudget is the budget under which the engine notes a thread's CPU
// time as it resumes it (noteRunStart), at the cost of a read: a thread
// found spinning before (spinBudgetAgain), which would otherwise run up
// to a tick more than its budget. A longer budget is counted from the
// watchdog's first look.
const shortBudget = 5 * watchdogTick

// noteRunStart records, before the engine waits for running thread t,
// its CPU time, when the watchdog may time it (watched: others wait for
// it, or a deadline does).
func (e *Engine) noteRunStart(t *thread, watched bool) {
	if !watched {
		return
	}
	ct, ok := e.t.(CPUTimeTracer)
	if !ok {
		return
	}
	cpu, ok := ct.CPUTime(t.proc.pid, t.tid)
	if !ok {
		return
	}
	r := &e.runStart
	r.mu.Lock()
	r.progress, r.tid, r.cpu = e.progress.Load(), t.tid, cpu
	r.mu.Unlock()
}

// startOf returns the CPU time tid had when the engine resumed it, if the
// engine noted it for this progress count.
func (r *runStart) startOf(progress int64, tid int) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cpu, r.progress == progress && r.tid == tid
}

// startWatchdog starts the watchdog goroutine; the function it returns
// stops it, and returns once it is gone.
func (e *Engine) startWatchdog() func() {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		w := watchdog{e: e, last: e.progress.Load(), since: time.Now(), examAt: -1, cpu: cpuMeter{t: e.t}}
		timer := time.NewTimer(watchdogTick)
		defer timer.Stop()
		for {
			select {
			case <-done:
				return
			case <-timer.C:
			}
			timer.Reset(w.look())
		}
	}()
	// Stopped, it is gone before Run returns (and the tracer unmaps the
	// pages it reads).
	return func() {
		close(done)
		<-exited
	}
}

// watchdog is the state of the watchdog goroutine.
type watchdog struct {
	e *Engine
	// last is the engine's progress count at the last look, and since
	// when it has not changed.
	last  int64
	since time.Time
	// looked: watchKernelWait has looked at the thread since; asleep:
	// the thread was found asleep in a syscall.
	looked, asleep bool
	// examAt is how long the thread had run at its last examination
	// since its last stop; -1: none yet.
	examAt time.Duration
	cpu    cpuMeter
}

// look looks at the running thread once, and returns how long to sleep
// until the next look.
func (w *watchdog) look() time.Duration {
	e := w.e
	cur := e.progress.Load()
	tid := int(e.waitTid.Load())
	pid := int(e.waitPid.Load())
	if cur != w.last {
		w.last, w.since, w.looked, w.asleep, w.examAt = cur, time.Now(), false, false, -1
		w.cpu.reset()
		if tid == 0 {
			return watchdogTick
		}
		if cpu, ok := e.runStart.startOf(cur, tid); ok {
			w.cpu.start(tid, cpu)
		} else {
			// Its CPU time now (perhaps the last thread's): the next look
			// counts from here.
			w.cpu.ran(pid, tid, 0)
			return watchdogTick
		}
	}
	if tid == 0 {
		return watchdogTick
	}
	// quiet is how long the thread has been out of the engine's sight;
	// ran, how much of it it spent on a CPU.
	quiet := time.Since(w.since)
	ran := w.cpu.ran(pid, tid, quiet)
	e.lastLook.note(cur, ran)
	if !w.looked && quiet >= fifoGrace {
		w.looked = true
		e.watchKernelWait(tid)
	}
	// A wake the thread left in its page (fastfutex.go) has made a
	// thread ready, as far as the watchdog is concerned.
	woke := e.wokeFromPage()
	limit, forced, timer := e.cfg.Watchdog, false, false
	if d := time.Duration(e.preemptDue.Load()); d > 0 {
		// A replay preempts where the recording did, whoever waits.
		limit, forced = d, true
	} else if d := time.Duration(e.cpuDue.Load()); d > 0 && (limit <= 0 || d < limit) {
		// A timer on its CPU-time clock is due then (engine.go).
		limit, timer = max(d, watchdogMinSleep), true
	}
	if !woke && !forced && !e.spinExamWanted() {
		return watchdogTick
	}
	// First an examination for a spin (spin.go), then, if the thread
	// still runs, a plain preemption. A blocked thread whose wait the
	// running one may have ended (a pipe it wrote to) asks for the
	// examination, which finds out.
	due := time.Duration(e.spinWait.Load())
	if w.examAt >= 0 {
		// Examined already since its last stop, it ran on: it may have
		// left a loop that computes for one that spins (a barrier after
		// its share of work). Again once it has run its doubled budget
		// more, and ten times what an examination costs, so that they
		// take a tenth of its time at most.
		due = w.examAt + max(due, 10*time.Duration(e.examCost.Load()))
	}
	spin := !w.asleep && !e.cfg.NoSpinCheck && ran >= due
	if spin && e.sleepsInKernel(tid) {
		// Quiet, but not running: it sleeps in a syscall.
		spin, w.asleep = false, true
	}
	if !spin && (limit <= 0 || ran < limit || !forced && e.others.Load() == 0 && !woke && !e.timed.Load()) {
		next := watchdogTick
		if !w.asleep && !e.cfg.NoSpinCheck && ran < due {
			// Look again as the budget ends, not up to a tick after.
			next = min(next, max(due-ran, watchdogMinSleep))
		}
		if (forced || timer) && ran < limit {
			next = min(next, max(limit-ran, watchdogMinSleep))
		}
		return next
	}
	if !spin {
		e.plainRan.Store(int64(ran))
	}
	sent := e.preempt(tid, spin)
	if spin {
		// A tracer that refused (a debugger is at work) is asked again
		// at the next look.
		if sent {
			w.examAt = ran
		}
	} else {
		w.since = time.Now()
		w.cpu.reset()
	}
	return watchdogTick
}

// cpuMeter measures, for the watchdog, the CPU time a running thread has
// used since the meter was reset: its budgets (the spin examination's,
// --watchdog) count the thread's own running, so that on a loaded machine,
// where it runs a fraction of the wall time, a computation that ends by
// itself is not examined or preempted at a point a quiet machine does
// not reach (a preemption is not deterministic). Without a CPU clock it
// falls back to the wall time.
type cpuMeter struct {
	t    Tracer
	tid  int
	base time.Duration
	set  bool
}

func (m *cpuMeter) reset() { m.set = false }

// start counts tid's CPU time from base.
func (m *cpuMeter) start(tid int, base time.Duration) {
	m.tid, m.base, m.set = tid, base, true
}

// ran returns tid's CPU time since the reset (or since the meter first saw
// tid), or wall when it cannot tell.
func (m *cpuMeter) ran(pid, tid int, wall time.Duration) time.Duration {
	ct, ok := m.t.(CPUTimeTracer)
	if !ok {
		return wall
	}
	now, ok := ct.CPUTime(pid, tid)
	if !ok {
		return wall
	}
	if !m.set || m.tid != tid {
		m.start(tid, now)
	}
	return now - m.base
}

// spinExamWanted reports whether the watchdog would examine the running
// thread once its budget ran out: others wait to run, or a deadline or a
// blocked thread it may have woken would be served by its waiting.
func (e *Engine) spinExamWanted() bool {
	return e.others.Load() > 0 || e.timed.Load() || e.blockedOthers.Load()
}

// recordedPreempt returns how much CPU time t may use before the
// watchdog preempts it as the recording's did (a replay), or to give it a
// signal from outside it did not reach a call in time for (a recording),
// or 0.
func (e *Engine) recordedPreempt(t *thread) int64 {
	if len(t.deferred) > 0 {
		// A recording gives a signal from outside there if t makes no
		// call before (outsidesig.go).
		return int64(deferGrace)
	}
	pj, ok := e.cfg.Journal.(PreemptJournal)
	if !ok {
		return 0
	}
	d, ok := pj.PreemptDue(t.vtid)
	if !ok {
		return 0
	}
	return max(int64(d), 1)
}

// warnPreempted warns, once, that the watchdog preempted t at an
// arbitrary point.
func (e *Engine) warnPreempted(t *thread) {
	var r abi.Regs
	_ = e.t.GetRegs(t.tid, &r)
	hint := e.cfg.WatchdogHint
	if hint == "" {
		hint = "--watchdog sets the limit; --watchdog=0 never preempts, which keeps a run whose threads end their work by themselves deterministic"
	}
	st, _ := e.t.(SpinTracer)
	why := t.note()
	if why == "" {
		why = "hermit did not examine it"
	}
	ran := fmt.Sprintf("ran for %v without a syscall (ip %s) while ", e.cfg.Watchdog, where(st, t.tid, r.Rip))
	switch {
	case e.cpuDue.Load() > 0 && (e.cfg.Watchdog <= 0 || time.Duration(e.cpuDue.Load()) < e.cfg.Watchdog):
		// Its own CPU-time timer (ITIMER_PROF, a profiler's) came due.
		ran = fmt.Sprintf("ran without a syscall (ip %s) until a timer on its CPU time came due (SIGPROF, SIGVTALRM: hermit counts CPU time at syscalls)", where(st, t.tid, r.Rip))
	case len(e.threads) == 1:
		// The only thread: a timer or a sleep's end waited for
		// virtual time, which computation does not move.
		ran += "a timer waited for virtual time to reach its deadline (it moves at syscalls)"
	default:
		ran += "other threads waited to run"
	}
	e.warnOnce("watchdog", fmt.Sprintf("thread %d %s; "+
		"it is not a pure spin hermit can stop deterministically (%s), so hermit preempted it at an arbitrary point "+
		"and this run may not repeat exactly (%s)", t.vtid, ran, why, hint))
}
