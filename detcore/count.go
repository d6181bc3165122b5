package detcore

// Count mode: scheduling points at the syscalls hermit does not intercept.
//
// A thread that makes only syscalls the seccomp filter lets through
// (gettid, getpid, mmap) reaches no scheduling
// point: while it loops on them, a thread waiting for its turn, or a
// timer that would end the loop, waits for the watchdog, which finds no
// spin (the loop makes syscalls) and lets it run on. So at every
// scheduling point where that would hold others up, the engine resumes
// the thread with ResumeCount instead of ResumeCont: the tracer then
// stops it (StopUntraced) before each call the filter allows, and the
// engine takes a turn there as at an intercepted call, with the clock
// moving one quantum. The decision is made from the engine's state alone
// (threads that may share memory with it waiting to run, sharedmem.go; a
// signal timer armed), so it is the same in every run, and it holds until
// the thread's next scheduling point: the stops
// hermit makes on its own account between two (a syscall exit, a clone
// or exec event, a call intercepted only for a journal) resume it as it
// was resumed there, so that a recording takes the turns a run takes.
//
// While a thread counts, a call the filter lets through costs two ptrace
// stops, and so does an intercepted one that runs in the kernel (one
// otherwise): the tracer's side is in ptrace/count.go. Nothing changes
// for a thread that runs alone with no signal timer armed and no
// deadline passed (signalTimerArmed).

// countWaiting counts threads that could run if the running one stopped.
func (e *Engine) countWaiting() int {
	n := 0
	for _, t := range e.threads {
		if t.couldRun() {
			n++
		}
	}
	return n
}

// couldRun reports whether t could run if the running thread stopped. A
// parent suspended in vfork cannot run until its child execs or exits.
func (t *thread) couldRun() bool {
	return t.state == tsNew || t.state == tsReady && t.vforkChild == nil
}

// waitsForTurn reports whether t could run, or spins waiting (bkSpin)
// for another thread to act.
func (t *thread) waitsForTurn() bool {
	return t.couldRun() || t.state == tsBlocked && t.block.kind == bkSpin
}

// resume restarts t, picked at a scheduling point, according to how it
// parked, counting its calls if that would hold others up.
func (e *Engine) resume(t *thread) error {
	e.wakeable = 0
	e.schedPoint(t)
	return e.resumeParked(t)
}

// schedPoint decides, at a scheduling point of t, how t runs until its
// next one: whether it counts its calls (counting), and where its clock
// reads trap (vclock.go).
func (e *Engine) schedPoint(t *thread) {
	others, deadline, timed := e.contention(t)
	wakes := e.mayWakeNear(t)
	if wakes {
		// The waiter is looked at when the next pick goes round.
		e.streak = max(e.streak, e.cfg.Timeslice)
	}
	t.counting = wakes || e.nearWaiting(t) > 0 || timed && (deadline <= e.clock || e.signalTimerArmed() || e.timedFutexNear(t)) || e.cpuTimerOn(t)
	t.clockLimit = e.clockLimit(others, deadline, timed)
}

// signalTimerArmed reports whether a timer that sends a signal is armed
// (alarm, setitimer, timer_create): a loop on calls the filter lets
// through may wait for its signal, so the thread counts its calls. A
// sleep, or a wait with a timeout, that has not come due does not make
// a thread count: a loop that waits for the sleeper to act reaches no
// scheduling point, but the watchdog examines it (a deadline is
// pending), and a loop on getpid or gettid is a pure spin there, which
// waits while virtual time moves on to the sleeper's end. That spares the
// calls of every Go program, whose sysmon thread nearly always sleeps,
// count mode's second stop, and lets its reads and writes go fast.
func (e *Engine) signalTimerArmed() bool {
	for _, tm := range e.timers {
		if tm.deadline >= 0 && tm.signals() {
			return true
		}
	}
	return false
}

// timedFutexNear reports whether a thread that may share memory with t
// waits on a futex with a timeout: a lock or condition variable whose
// waiter gives up, and then acts, when its time comes (CPython's GIL asks
// the thread that holds it to drop it after 5 ms). A loop of t's on calls
// the filter lets through, until the waiter acts, is no spin the watchdog
// can stop deterministically (its counter changes every round), so t
// counts its calls for the clock to reach the deadline. A plain sleep does
// not count (signalTimerArmed).
func (e *Engine) timedFutexNear(t *thread) bool {
	if e.cfg.OldTimedFutexCount {
		return false
	}
	for _, u := range e.threads {
		if u != t && u.state == tsBlocked && u.block.kind == bkFutex && u.block.deadline >= 0 && sharesMemory(t, u) {
			return true
		}
	}
	return false
}

// cpuTimerOn reports whether a timer that sends a signal counts t's CPU
// time (its own clock's, or its process's): that time moves only at t's
// scheduling points, so t counts its calls for the timer to come due.
func (e *Engine) cpuTimerOn(t *thread) bool {
	for _, tm := range e.timers {
		if tm.cpu != nil && tm.deadline >= 0 && tm.signals() && tm.proc == t.proc && (tm.cpu.thread == nil || tm.cpu.thread == t) {
			return true
		}
	}
	return false
}

// contention says whether t, about to be resumed at a scheduling point,
// would hold up another thread or virtual time if it made no scheduling
// point for a while: how many other threads are ready to run or spin
// waiting for one, and the next deadline (a sleep, a timer), if any.
func (e *Engine) contention(t *thread) (others int, deadline int64, timed bool) {
	others = e.countWaiting() + e.countSpinning()
	if t.state == tsReady || t.state == tsNew {
		others--
	}
	deadline, timed = e.nextDeadline()
	return others, deadline, timed
}

// contMode is how t runs on until its next stop, as decided at its last
// scheduling point.
func (t *thread) contMode() ResumeMode {
	if t.pt != nil {
		if m, ok := t.pt.mode(); ok {
			return m
		}
	}
	if t.counting {
		return ResumeCount
	}
	return ResumeCont
}

// untraced handles StopUntraced: t, resumed in count mode, is at a call
// the filter lets through. It takes a turn there; resumed, the call runs
// natively. An open is no counted call: a run finds an open that waits
// (fifo.go), and a recording, which stops at every open, makes the turn
// of a policy call or none, as the run does.
func (e *Engine) untraced(t *thread, nr int) error {
	if markedOnly[nr] {
		if err := e.resumeThread(t, t.contMode(), 0); err != nil {
			return e.gone(t, err)
		}
		return nil
	}
	e.park(t)
	if e.sigAfter {
		e.sigAfter = false
		e.sigEpoch++
	}
	e.countedTurn(t, nr)
	return nil
}

// countedTurn makes t, stopped at call nr that the engine lets run as it
// is, wait for its turn as at an intercepted call.
func (e *Engine) countedTurn(t *thread, nr int) {
	t.nr, t.act, t.ret = nr, actCont, 0
	e.result.Stats.Counted++
}

// countStop counts a ptrace stop (exit reports are not stops).
func (e *Engine) countStop(st Stop) {
	e.result.Stats.Stops += int64(st.Handled)
	e.result.Stats.SyscallStops += int64(st.Handled)
	e.result.Stats.CountStops += int64(st.Handled)
	if st.Kind == StopUntraced {
		e.result.Stats.CountStops++
	}
	switch st.Kind {
	case StopExited, StopKilled:
	case StopSeccomp, StopSyscallExit, StopUntraced:
		e.result.Stats.Stops++
		e.result.Stats.SyscallStops++
	default:
		e.result.Stats.Stops++
	}
}

// continueAfterExit resumes t at once after a syscall-exit stop that left
// it ready: an exit stop is not a scheduling point, so whether a call
// needed one (to fix up its result, or for a journal) never changes the
// schedule.
func (e *Engine) continueAfterExit(t *thread) error {
	if t.hold {
		// Threads it killed must be reaped first (sysKill).
		t.hold = false
		return nil
	}
	if t.state != tsReady || t.act != actCont || t.sig != 0 || e.threads[t.tid] != t {
		return nil
	}
	t.state = tsRunning
	e.running = t
	if err := e.resumeThread(t, t.contMode(), 0); err != nil {
		return e.gone(t, err)
	}
	return nil
}
