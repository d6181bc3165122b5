package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// Fast futex wakes. A thread that hands work to another wakes it with
// FUTEX_WAKE_PRIVATE, then most often waits itself: two stops a handoff,
// of which the wake's only tells the engine what the thread did. So, in a
// program with fast writes (fastio.go), a site that made such a wake is
// patched (FastWrites.FutexSite) to enter the page's futex code
// (detcore/ptrace/testdata/fastio.S, fio_futex) from then on, and before
// a thread runs with fast calls allowed (armFast), the engine writes into
// its page a table of the words its process's threads wait on, with their
// counts of waiters (armFutexes). The code answers a wake from the table
// without a stop:
//   - a word nobody waits on: none woken, nothing to do;
//   - a word with waiters: it leaves the wake (the word and the count) for
//     the engine and turns the thread's syscall user dispatch on, its
//     switch blocking, so that its next syscall stops, whichever it is (a
//     SIGSYS, dispatched; a futex call at a patched site is made from the
//     slow page instead, which the switch does not block: its own stop).
//     The engine turns it off again once the thread has been resumed
//     sudKeep times without leaving such a wake (offSUD): while on, each
//     of the thread's syscalls costs the kernel a look at the switch (some
//     190 cycles: 200k getppid took 1.73x native with dispatch on for
//     good, against strace's 1.41x), but a thread that hands work to
//     another at every turn would pay a prctl and a ptrace call a turn.
//     The engine makes the wake there (and at any stop that every run,
//     record and replay has: foldsAt, runStops), before anything else of
//     that stop, as the trapped wake would have been made just before; not
//     at a call that only a recording stops at, nor at the watchdog's look
//     for a spin unless it finds one: those stops must change nothing, so
//     the page stays as the code left it. From there the thread counts its
//     calls, as after a trapped wake (another thread is ready). One such
//     wake at a time: the thread's fast calls end with it, and its clock
//     reads trap within vclockReads;
//   - anything else (another operation, the page's clock at its limit, a
//     wake pending, more words waited on than the table takes) makes the
//     call at the site.
//
// Once a wake waits in the page, the watchdog treats the thread it wakes
// as ready (wokeFromPage), so a thread that wakes another and then spins
// for it is examined and preempted as it would have been after the
// trapped wake; until then, the waiters are as blocked as ever.
//
// What the code answers depends only on the engine's state at the
// thread's resume and on the guest's own steps, so it is the same in
// every run, record and replay; --no-fast-io turns it off with the rest.

// Offsets in a clock page with fast futex wakes (fastio.S).
const (
	fxOn    = 0x100 // nonzero: the table is that of the running thread's process
	fxPend  = 0x108 // nonzero: a wake waits for the engine
	fxAddr  = 0x110 // its word
	fxN     = 0x118 // its count of waiters to wake
	fxQuant = 0x120 // how far the clock limit may be after a wake
	fxCalls = 0x128 // wakes answered without a stop
	fxSel   = 0x130 // the threads' syscall user dispatch switch: 1 blocks
	fxSUD   = 0x140 // nonzero: the running thread's dispatch is on (sudOn)
	fxTable = 0x400 // fxSlots slots of 16 bytes: the word, its waiters
	fxSlots = 128   // of which at most half are filled, so that a search ends soon
	// futexWakePrivate is the one operation the code answers.
	futexWakePrivate = abi.FUTEX_WAKE | abi.FUTEX_PRIVATE_FLAG
)

// futexTable is what the engine wrote into a page's table.
type futexTable struct {
	mm    *addrSpace
	slots []int // in use
	// live says the table was armed with waiters, at the running
	// thread's resume (the page's own words change as it runs); woke,
	// that a wake the code left was made since.
	live, woke bool
}

// armFutexes writes into t's page the words t's process waits on, if t
// may make fast calls (on) and the page has the futex code; otherwise it
// turns the table off.
func (e *Engine) armFutexes(t *thread, on bool) {
	c := t.proc.clock
	if c == nil || c.fast == nil || c.fast.FutexSite == nil {
		return
	}
	if c.word(fxPend) != 0 {
		// t's wake waits for a stop that a run has too; this resume
		// follows one that must change nothing (foldsAt): the page
		// stays as t's code left it, its fast calls ended.
		c.put(vcFast, 0)
		return
	}
	for _, s := range c.futex.slots {
		c.put(fxTable+16*s, 0)
		c.put(fxTable+16*s+8, 0)
	}
	c.futex.slots = c.futex.slots[:0]
	c.futex.live, c.futex.woke = false, false
	c.put(fxSel, 0)
	// A thread a signal woke from a futex wait is in no table
	// (futexSigWoken): wakes stop while there is one.
	if !on || len(e.futexes) > fxSlots/2 || len(e.sigWoken) > 0 || !e.dispatches(t) {
		c.put(fxOn, 0)
		return
	}
	mm := t.proc.mm
	for key, ws := range e.futexes {
		if key.mm != mm || len(ws) == 0 {
			continue
		}
		// The first free slot from the word's own: which words share
		// slots changes only how far the code looks (addresses differ
		// with the environment's size; what the code answers must not).
		s := int(key.addr>>2) % fxSlots
		for c.word(fxTable+16*s) != 0 {
			s = (s + 1) % fxSlots
		}
		c.put(fxTable+16*s, key.addr)
		c.put(fxTable+16*s+8, uint64(len(ws)))
		c.futex.slots = append(c.futex.slots, s)
	}
	c.futex.mm = mm
	c.futex.live = len(c.futex.slots) > 0
	c.put(fxQuant, uint64(vclockReads*e.cfg.Quantum))
	c.put(fxOn, 1)
}

// dispatches reports whether t's page's code may turn t's syscall user
// dispatch on, asking the kernel once per thread and program whether the
// engine can turn it off again: a wake the code leaves for the engine
// needs the thread's next syscall, whichever it is, to stop (it raises
// SIGSYS, which dispatched handles). Not for a process that set up
// syscall user dispatch of its own.
func (e *Engine) dispatches(t *thread) bool {
	c := t.proc.clock
	if t.proc.ownSUD {
		return false
	}
	if t.sud == c {
		return true
	}
	if c.fast.Undispatch == nil || !c.fast.Undispatch(t.tid) {
		return false
	}
	t.sud, t.sudOn = c, false
	return true
}

// sudKeep is how many times in a row a thread is resumed without having
// left a wake before the engine turns its syscall user dispatch off.
const sudKeep = 4

// offSUD, as t is resumed, turns off the syscall user dispatch its page's
// code turned on when it left a wake (the engine has made the wake), if
// it has not left one for sudKeep resumes, and tells the page whether it
// is on. Whether it is on changes nothing the guest sees (the switch
// lets every call through until the code leaves a wake), only what the
// thread's syscalls cost; the code must know, to turn it on.
func (e *Engine) offSUD(t *thread) {
	c := t.proc.clock
	if t.sudOn && t.sud != c && t.sud != nil {
		// A new program (the dispatch does not survive what ended the
		// old one's page, an exec, unless the probe turned it off).
		t.sudOn = false
		t.sud.fast.Undispatch(t.tid)
	}
	if c == nil || c.fast == nil || c.fast.FutexSite == nil || c.word(fxPend) != 0 {
		// No futex code, or its wake waits: the page as the code left it.
		return
	}
	if t.sudOn {
		if t.sudIdle++; t.sudIdle > sudKeep {
			t.sudOn = false
			c.fast.Undispatch(t.tid)
		}
	}
	on := uint64(0)
	if t.sudOn {
		on = 1
	}
	c.put(fxSUD, on)
}

// siSysUserDispatch is the si_code of a SIGSYS that syscall user
// dispatch raised.
const siSysUserDispatch = 2

// dispatched handles the SIGSYS that t's first syscall after a wake its
// code left raised (the wake is made by now: a signal's stop is one every
// run has), and reports whether it was that: the call, which the kernel
// did not make, is made again, as t's next turn (another thread is ready).
func (e *Engine) dispatched(t *thread) (bool, error) {
	st, ok := e.t.(SiginfoTracer)
	if !ok || t.sud == nil || t.sud != t.proc.clock || t.proc.ownSUD {
		// A process with dispatch of its own gets no wakes answered
		// (dispatches): the SIGSYS is its own, for its handler.
		return false, nil
	}
	info, err := st.Siginfo(t.tid)
	if err != nil || len(info) < 12 || int32(le32(info[8:])) != siSysUserDispatch {
		return false, nil
	}
	var r abi.Regs
	if err := e.t.GetRegs(t.tid, &r); err != nil {
		return true, e.gone(t, err)
	}
	r.Rip -= 2 // the syscall instruction
	r.Rax = r.OrigRax
	if err := e.t.SetRegs(t.tid, &r); err != nil {
		return true, e.gone(t, err)
	}
	t.sud.put(fxSel, 0)
	t.sudOn, t.sudIdle = true, 0
	e.park(t)
	// The turn is at this call (not the last one the engine saw, which
	// in a recording may be one a run never stops at).
	t.nr, t.ret = int(int32(r.OrigRax)), 0
	return true, nil
}

// fastWaiters reports whether the running thread's page told it, at its
// resume, of waiters it may wake without a stop.
func (e *Engine) fastWaiters() bool {
	t := e.running
	return t != nil && t.proc.clock != nil && t.proc.clock.futex.live
}

// wokeFromPage reports, for the watchdog, whether the running thread has
// left a wake in its page since its resume: a thread is ready then, which
// the engine learns at the thread's next stop.
func (e *Engine) wokeFromPage() bool {
	e.wakeMu.Lock()
	defer e.wakeMu.Unlock()
	c := e.wakePage.Load()
	return c != nil && c.word(fxPend) != 0
}

// foldsAt reports whether st is a stop at which a wake left in a page is
// made (foldWakes): a stop that every run, record and replay of the guest
// has at the same point. Not a syscall's entry (e.syscall decides: one a
// recording stops at only to keep its result is not one), nor its exit
// (its entry came first, with no guest code between), nor the watchdog's
// look for a spin, which comes when the watchdog looks and so changes
// nothing unless it finds one (examineSpin).
func (e *Engine) foldsAt(st Stop) bool {
	if st.Kind == StopSeccomp || st.Kind == StopSyscallExit {
		return false
	}
	_, spin := e.ownStop(st, false)
	return !spin
}

// runStops reports whether a run stops at t's call (the seccomp filter
// of `hermit run` traces it): one of the policy's calls, with the
// arguments its condition asks for, if it has one, and not one of those
// that take no turn (noTurn: a recording made before they were the
// policy's has nothing folded there).
func runStops(t *thread) bool {
	if policy[t.nr] == nil || noTurn[t.nr] {
		return false
	}
	c, ok := conditions[t.nr]
	if !ok {
		c, ok = TracedWhen(t.nr)
	}
	if !ok {
		return true
	}
	arg := t.regs.Arg(c.Arg)
	if c.Mask != 0 {
		return uint32(arg)&c.Mask != 0
	}
	for _, v := range c.Values {
		if uint32(arg) == v {
			return true
		}
	}
	return false
}

// conditions are ConditionalSyscalls', for runStops.
var conditions = ConditionalSyscalls()

// foldWakes makes the wakes left in the pages of the thread last resumed
// and of thread tid, at a stop of tid's that may change the schedule.
func (e *Engine) foldWakes(tid int) {
	if e.lastClock != nil {
		e.foldFutexes(e.lastClock)
	}
	t := e.threads[tid]
	if t == nil || t.proc.clock == nil {
		return
	}
	c := t.proc.clock
	if c != e.lastClock {
		e.foldFutexes(c)
	}
	if c.fast != nil && c.word(fxPend) == 0 && c.futex.woke {
		// The limit its code set after the wake is the thread's, as
		// count mode's would have been (clockSpent).
		c.futex.woke = false
		t.clockLimit = min(t.clockLimit, int64(c.word(vcLimit)))
	}
}

// foldFutexes makes the wake that c's code left for the engine, and counts
// the wakes it answered.
func (e *Engine) foldFutexes(c *ClockPage) {
	if c.fast == nil {
		return
	}
	if n := c.word(fxCalls); n != 0 {
		e.result.Stats.FastWakes += int64(n)
		c.put(fxCalls, 0)
	}
	if c.word(fxPend) == 0 {
		return
	}
	addr, n := c.word(fxAddr), int(c.word(fxN))
	c.put(fxPend, 0)
	c.put(fxSel, 0)
	if l := e.last; l != nil && l.sud == c {
		// Its code turned its syscall user dispatch on, or found it on.
		l.sudOn, l.sudIdle = true, 0
	}
	c.futex.woke = true
	if c.futex.mm == nil {
		return
	}
	// The thread that left it ran last (one runs at a time).
	e.wokeWaiters(e.last, e.futexWake(futexKey{mm: c.futex.mm, addr: addr}, n, abi.FUTEX_BITSET_ANY))
}

// futexSite has the site of t's trapped private futex call patched to
// enter the page's futex code from then on: a wake's, which the code
// may answer, and a wait's, which, while a wake of the thread's waits for
// the engine, the code makes where the switch does not block it (one
// stop, not the SIGSYS's and then the call's).
func (e *Engine) futexSite(t *thread) {
	c := t.proc.clock
	if c == nil || c.fast == nil || c.fast.FutexSite == nil || e.cfg.NoFastIO || t.pt != nil || t.seccompMode != 0 ||
		t.regs.Rsi&abi.FUTEX_PRIVATE_FLAG == 0 {
		return
	}
	e.patchSite(t, c, siteKey{pc: t.regs.Rip, futex: true}, c.fast.FutexSite)
}
