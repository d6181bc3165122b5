package detcore

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/arch/x86/x86asm"
)

// Spin detection: deterministic preemption of a thread that waits for
// memory without a PMU (spinloop.go has the model).
//
// A thread that runs spinBudget without a stop while another thread
// waits to run (or a deadline could move virtual time on) is stopped by
// the watchdog and single-stepped, at most spinSteps instructions. If its
// states close into a cycle that changes no register and no byte it
// touches, it is stepped on to the cycle's canonical point and waits
// there (bkSpin) until one of those bytes changes or a signal comes.
// Both are decided at scheduling points, so the schedule does not depend
// on when the watchdog looked. Woken, it is examined again at once,
// from the canonical point, before it runs free: a thread that went
// round once more and is back in a spin (two threads handing a turn
// to each other) waits again without a second budget.
//
// Anything else (a loop that counts, code that does not loop, an
// instruction hermit does not model) runs on; the thread's next
// examination comes after twice the budget, up to spinBudgetMax (a new
// thread starts with its creator's), and, if it has not stopped by then,
// no sooner than ten times what the last examination took (a thread may
// compute past one look and then spin, at a barrier after its share of
// work), so a CPU-bound thread pays one examination in a second at most
// once the budget has grown, and a tenth of its time before; an
// examination ends early in code that does not loop (spinNoLoop) or
// loops without repeating (spinRounds; a loop inside one whose
// registers do come back, as a list walked in each round of a wait, is
// followed to the outer one's end). A thread found spinning is
// examined again after spinBudgetAgain: it is likely to spin again
// (a handoff, a barrier a round).

// SpinTracer is implemented by tracers that let the engine examine a
// thread that runs without syscalls.
type SpinTracer interface {
	// VectorRegs returns tid's x87, SSE and AVX registers (the XSAVE
	// layout), reusing b's storage when it is large enough.
	VectorRegs(tid int, b []byte) ([]byte, error)
	// Symbolize names the code at addr in tid's address space
	// ("main+0x16 in prog"), or returns "".
	Symbolize(tid int, addr uint64) string
}

const (
	// spinBudget is how long a thread runs without a stop, while others
	// wait, before it is first examined.
	spinBudget = 20 * time.Millisecond
	// spinBudgetAgain is the budget of a thread whose last examination
	// found it spinning.
	spinBudgetAgain = 2 * time.Millisecond
	// spinBudgetMax bounds the budget as it doubles after examinations
	// that found no spin.
	spinBudgetMax = time.Second
	// spinSteps is how many instructions one examination steps at most
	// (Go's runtime waits in loops of some 330).
	spinSteps = 1500
	// spinRounds is how many times an examination sees one instruction
	// of a loop whose states never repeat before it gives up.
	spinRounds = 8
	// spinNoLoop is how many instructions an examination steps at most
	// when none of them comes twice.
	spinNoLoop = 400
	// spinNoLoopRecheck is spinNoLoop for a thread examined again as it
	// is woken at its loop's head.
	spinNoLoopRecheck = 100
	// spinLeftRecheck is how many instructions in a row outside the
	// loop it was found in end such an examination: it has left the
	// loop for other work, not gone round to it again (a handoff).
	spinLeftRecheck = 32
)

// examResult is what one examination found.
type examResult int

const (
	examSpin    examResult = iota // a pure cycle: the thread waits at its canonical point
	examRuns                      // no such cycle: the thread may run on
	examStop                      // the thread stopped for something else
	examSyscall                   // the stop found the thread asleep in a syscall
	examLater                     // not this cycle: look on for a longer one
)

// budget returns how long t runs before its next examination.
func (t *thread) budget() time.Duration {
	if t.spinWait == 0 {
		return spinBudget
	}
	return t.spinWait
}

// examineSpin examines running thread t, stopped by the watchdog (or at
// its canonical point again, recheck), and blocks it, resumes it, or
// handles the stop that ended the examination.
func (e *Engine) examineSpin(t *thread, recheck bool) error {
	noLoop, loop := spinNoLoop, map[uint64]bool(nil)
	if recheck {
		if tr := t.proc.mm.trap(t.spinAt); tr != nil {
			// Its loop has a trap (spintrap.go): leaving the loop ends
			// the look, since the int3 tells a return.
			return e.examineAtTrap(t, t.spinAt, tr, true)
		}
		// Woken at its loop's head: it spins there again at once, or it
		// has left the loop, which a short look tells.
		noLoop, loop = spinNoLoopRecheck, t.spinLoop
	}
	start := time.Now()
	res, stop, err := examRuns, Stop{}, error(nil)
	hops := !recheck && e.startHop(t)
	if !hops {
		res, stop, err = e.examine(t, noLoop, loop, spinLeftRecheck)
	}
	e.examCost.Store(int64(time.Since(start)))
	e.result.Stats.SpinExams++
	if e.cfg.Debug != nil {
		e.cfg.Debug("spin examination tid=%d recheck=%v hops=%v: result %d (%s) stop %+v err %v", t.tid, recheck, hops, res, t.note(), stop, err)
	}
	if err != nil {
		return e.gone(t, err)
	}
	if done, err := e.examined(t, res, stop); done {
		return err
	}
	if !recheck {
		e.warnStarved(t)
		t.spinWait = min(2*t.budget(), spinBudgetMax)
		// A thread whose wait t ended while it ran (data in a pipe,
		// say) waits to run: the watchdog must count it. It is not
		// woken here: the examination came when the watchdog looked,
		// and only a scheduling point may change what the schedule
		// sees (a thread ready at t's next one makes t count calls).
		e.wakeable = 0
		for _, o := range e.ordered() {
			if o != t && o.state == tsBlocked && o.block.kind != bkSpin && e.couldWake(o) {
				e.wakeable++
			}
		}
	}
	if err := e.resumeLooked(t, t.contMode(), 0); err != nil {
		return e.gone(t, err)
	}
	return nil
}

// examined acts on what an examination of t found, unless it found t
// free to run on (examRuns, which the caller handles), and reports
// whether it did.
func (e *Engine) examined(t *thread, res examResult, stop Stop) (bool, error) {
	if res == examRuns {
		return false, nil
	}
	e.foldWakes(t.tid)
	switch res {
	case examSpin:
		return true, nil
	case examStop:
		return true, e.handleStop(stop)
	}
	// examSyscall: what watchKernelWait would have found had it looked
	// (its stop and this one may have been one signal): an open that
	// sleeps is made again, marked, for the engine to see.
	if e.cfg.Journal == nil && e.kwaitSkip.Load() != int64(t.tid) {
		return true, e.kernelWaitStop(t)
	}
	return true, e.deliver(t, 0)
}

// examine single-steps t until its states repeat, spinSteps pass, or it
// stops for another reason. On a pure cycle it leaves t waiting at the
// cycle's canonical point.
func (e *Engine) examine(t *thread, noLoop int, loop map[uint64]bool, left int) (examResult, Stop, error) {
	st, ok := e.t.(SpinTracer)
	if !ok {
		t.spinNote = fixedNote("this tracer cannot examine it")
		return examRuns, Stop{}, nil
	}
	// The steps meet the code, not hermit's int3s.
	mm := t.proc.mm
	e.disarmSpinTraps(t)
	defer e.armSpinTraps(t, mm)
	// Until the general registers come back as they were at an earlier
	// step there is no cycle to close, so only they are kept (a loop
	// that counts or computes never gets further). The full state (the
	// vector registers, the memory each instruction touches), which
	// doubles the cost of a step, is taken from then on, a round before
	// a cycle can close.
	obs := make([]spinObs, 0, 32)
	seen := map[uint64][]int{}
	regsSeen := map[uint64]bool{}
	visits := map[uint64]int{}
	rips := make([]uint64, 0, 64)
	// capture: the general registers came back as they were; rounds:
	// the cycles that closed without their memory coming back.
	capture := false
	var rounds unrestored
	// outside counts the instructions in a row that were not of loop.
	outside := 0
	var ext []byte
	for k := 0; ; k++ {
		var o spinObs
		if err := e.t.GetRegs(t.tid, &o.regs); err != nil {
			return examRuns, Stop{}, err
		}
		o.regs.Eflags &^= rfFlag
		if k == 0 && int64(o.regs.OrigRax) >= 0 && restarting(int64(o.regs.Rax)) {
			// The stop interrupted a syscall, which the kernel makes
			// again when the thread goes on: it was asleep, not
			// spinning. (A call that had ended leaves its result.)
			t.spinNote = fixedNote("it was asleep in a syscall")
			return examSyscall, Stop{}, nil
		}
		if !capture {
			h := stateHash(&o.regs, nil)
			capture = regsSeen[h]
			regsSeen[h] = true
		}
		if capture {
			var err error
			if ext, err = st.VectorRegs(t.tid, ext); err != nil {
				t.spinNote = fixedNote("hermit cannot read its vector registers")
				return examRuns, Stop{}, ignoreUnlessGone(err)
			}
			o.ext = append([]byte(nil), ext...)
			o.hash = stateHash(&o.regs, o.ext)
			if n := len(obs); n > 0 {
				obs[n-1].after = e.readRanges(t, obs[n-1].acc)
			}
			if i := cycleStart(obs, seen, &o); i >= 0 {
				res, stop, err := e.closeCycle(t, obs[i:], st)
				if res != examLater {
					return res, stop, err
				}
				rounds.add(i, len(obs)-1)
				// The registers came back, but not the memory it
				// reads: a longer round may (a loop whose body calls
				// one function from two places comes back to the same
				// registers with another return address on its stack).
				// On to a later repeat.
			}
		}
		inst, acc, known := accesses(e.readCode(t, o.regs.Rip), &o.regs)
		// A thread that counts its calls makes each a scheduling point:
		// stepping over one would take a turn away, and whether the
		// watchdog looked depends on timing.
		if insnEnd(inst.Op) && (t.counting || !steppableCall(&inst, &o.regs)) {
			note := fmt.Sprintf("it reached a %v instruction", inst.Op)
			if inst.Op == x86asm.SYSCALL {
				note = fmt.Sprintf("it calls %s, which hermit lets run without a stop", abi.SyscallName(int(o.regs.Rax)))
			}
			t.spinNote = fixedNote(note)
			return examRuns, Stop{}, nil
		}
		if capture {
			o.acc, o.known, o.writeOnly = acc, known, writeOnly(&inst)
			if known {
				if o.before = e.readRanges(t, acc); o.before == nil && len(acc) > 0 {
					o.known = false
				}
			}
			obs = append(obs, o)
			seen[o.hash] = append(seen[o.hash], len(obs)-1)
		}
		rips = append(rips, o.regs.Rip)
		visits[o.regs.Rip]++
		if outside++; loop[o.regs.Rip] {
			outside = 0
		}
		if loop != nil && outside == left {
			t.spinNote = fixedNote(fmt.Sprintf("it left the loop it waited in, for %d instructions", left))
			return examRuns, Stop{}, nil
		}
		if k == spinSteps || visits[o.regs.Rip] >= spinRounds && (!capture || rounds.full) || k == noLoop && len(visits) == len(rips) {
			// Or spinNoLoop instructions without one seen twice: no
			// loop of a size spins have.
			// spinRounds rounds of a loop without a state seen twice:
			// it counts or computes, and going on would cost more steps.
			// Once the registers came back, though, the loop seen may
			// be inner to one that repeats (a wait whose round walks a
			// list): that one is followed to spinSteps, unless a whole
			// round came back in the registers but not in memory.
			t.spinNote = loopNote(rips, st, t.tid)
			return examRuns, Stop{}, nil
		}
		if stop, trapped, err := e.stepGuest(t, &inst, &o.regs); err != nil || !trapped {
			return examStop, stop, err
		}
	}
}

// closeCycle decides on a cycle t's states closed into (its first state
// is t's state now): a pure one leaves t waiting at its canonical point.
func (e *Engine) closeCycle(t *thread, cycle []spinObs, st SpinTracer) (examResult, Stop, error) {
	pure := pureCycle(cycle)
	if !pure && !restoringCycle(cycle) {
		head, tid := cycle[canonical(cycle)].regs.Rip, t.tid
		why := "the memory it writes changes from round to round"
		for i := range cycle {
			if !cycle[i].known || cycle[i].after == nil {
				why, at := "hermit does not model the instruction", cycle[i].regs.Rip
				if code := e.readCode(t, at); code != nil {
					if inst, err := x86asm.Decode(code, 64); err == nil {
						why = fmt.Sprintf("hermit does not model its %v", inst.Op)
					}
				}
				t.spinNote = func() string {
					return fmt.Sprintf("it loops at %s, but %s at %s", where(st, tid, head), why, where(st, tid, at))
				}
				return examRuns, Stop{}, nil
			}
		}
		t.spinNote = func() string { return fmt.Sprintf("it loops at %s, but %s", where(st, tid, head), why) }
		return examLater, Stop{}, nil
	}
	c := canonical(cycle)
	for s := 0; s < c; s++ {
		if stop, trapped, err := e.stepGuest(t, nil, nil); err != nil || !trapped {
			return examStop, stop, err
		}
	}
	var r abi.Regs
	if err := e.t.GetRegs(t.tid, &r); err != nil {
		return examRuns, Stop{}, err
	}
	if r.Rip != cycle[c].regs.Rip {
		return examRuns, Stop{}, fmt.Errorf("thread %d: stepping to the head of its spin loop ended at %#x, not %#x", t.tid, r.Rip, cycle[c].regs.Rip)
	}
	rs := readSet(cycle)
	snap := e.readRanges(t, rs)
	t.spinLoop = map[uint64]bool{}
	for i := range cycle {
		t.spinLoop[cycle[i].regs.Rip] = true
	}
	e.park(t)
	t.spinAt = r.Rip
	if pure {
		e.addSpinTrap(t, r.Rip, t.spinLoop)
	}
	// A thread found waiting in a spin is likely to wait so again (a
	// spin handoff, a flag set once a round): its next examination
	// comes soon; if that finds no spin, the budget doubles from there.
	t.spinWait = spinBudgetAgain
	t.spinRecheck = true
	t.sigChecked = 0
	e.progress.Add(1) // the next thread's budget starts now
	if !pure {
		// Its canonical point may hold a lock (Go's runtime walks a list
		// under one as it waits). With nothing else to run, a thread in
		// a spin wait for that lock would wait for ever beside it: t
		// goes on round its cycle to the first point where one such
		// thread finds what it reads changed, and yields there.
		freed := e.spinWaiterFreed()
		if !freed && e.countWaiting() == 1 && e.countSpinning() > 0 {
			for s := 0; !freed && s < len(cycle); s++ {
				if stop, trapped, err := e.stepGuest(t, nil, nil); err != nil || !trapped {
					return examStop, stop, err
				}
				freed = e.spinWaiterFreed()
			}
			if freed {
				if err := e.t.GetRegs(t.tid, &r); err != nil {
					return examRuns, Stop{}, err
				}
				t.spinAt = r.Rip
			}
		}
		if e.spinYield(t, freed) {
			return examSpin, Stop{}, nil
		}
	}
	e.result.Stats.SpinWaits++
	e.digest.add(-5, int64(t.vtid), int64(r.Rip))
	e.blockOn(t, &blocker{
		kind:     bkSpin,
		deadline: -1,
		check: func(e *Engine) bool {
			return !bytes.Equal(e.readRanges(t, rs), snap)
		},
		onSignal: func(_ *Engine, t *thread) { t.spinRecheck = false },
	})
	return examSpin, Stop{}, nil
}

// spinYield ends the turn of t, parked at the canonical point of a cycle
// that writes memory and puts it back, and reports whether it did. Its
// writes may be a lock it holds at that point, so it does not wait for
// memory to change as a pure spinner does: it stays ready, after the
// others, and is examined again when it runs. When no other thread could
// run, it waits as a pure spinner (nothing else could change its
// memory), or for the next deadline; unless freed: where t is now, a
// thread in a spin wait finds what it reads changed, and runs next.
func (e *Engine) spinYield(t *thread, freed bool) bool {
	if !freed && e.countWaiting() == 1 {
		d, ok := e.nextDeadline()
		if !ok {
			return false
		}
		if d > e.clock {
			e.clock = d
		}
	}
	e.endTurn(t)
	e.result.Stats.SpinYields++
	e.digest.add(-7, int64(t.vtid), int64(t.spinAt))
	return true
}

// stepOnce single-steps t and waits for its trap. A stop of another
// thread meanwhile is kept for the run loop (wait); any other stop of t
// ends the step untrapped.
func (e *Engine) stepOnce(t *thread) (Stop, bool, error) {
	if err := e.resumeThread(t, ResumeStep, 0); err != nil {
		return Stop{}, false, err
	}
	for {
		st, err := e.t.Wait()
		if err != nil {
			return st, false, err
		}
		if st.Tid != t.tid {
			e.deferred = append(e.deferred, st)
			continue
		}
		e.countStop(st)
		return st, st.Kind == StopSignal && st.Sig == abi.SIGTRAP, nil
	}
}

// stepGuest single-steps t over its instruction inst at r, its registers
// (nil: read them), as stepOnce does, with the step's trap flag kept out
// of the program's sight (TrapFlag).
func (e *Engine) stepGuest(t *thread, inst *x86asm.Inst, r *abi.Regs) (Stop, bool, error) {
	t.tf.Stepping(e.t, t.tid, inst, r)
	st, trapped, err := e.stepOnce(t)
	if err == nil && trapped {
		if err := t.tf.Stepped(e.t, t.tid); err != nil {
			return st, false, ignoreUnlessGone(err)
		}
	}
	return st, trapped, err
}

// wait returns the next stop: one kept while a thread was stepped, or
// the tracer's next.
func (e *Engine) wait() (Stop, error) {
	if len(e.deferred) > 0 {
		st := e.deferred[0]
		e.deferred = e.deferred[1:]
		return st, nil
	}
	st, err := e.t.Wait()
	if err == nil {
		e.foldStop(st.Tid)
	}
	return st, err
}

// readCode reads the instruction bytes at rip (fewer at the end of a
// mapping).
func (e *Engine) readCode(t *thread, rip uint64) []byte {
	return codeAt(e.t, t.tid, rip)
}

// readRanges reads and concatenates rs in t's memory; nil on failure.
func (e *Engine) readRanges(t *thread, rs []memRange) []byte {
	var out []byte
	for _, m := range rs {
		b := make([]byte, m.size)
		if e.t.ReadMem(t.tid, m.addr, b) != nil {
			return nil
		}
		out = append(out, b...)
	}
	if out == nil {
		out = []byte{}
	}
	return out
}

// lazilyBlocked reports whether a thread other than the running one waits
// where the running thread may have ended its wait without a scheduling
// point (data it wrote to a pipe wakes the reader only when the engine
// looks), so that an examination may find it waits for that thread. A
// futex wait, a wait for a child and a sleep are not such waits: only a
// syscall of the running thread ends the first two (a futex wake, its
// exit), and a deadline the third, which the watchdog asks about on its
// own. So a program that computes while its parent waits for it (cc1
// under gcc, anything under a shell) is not single-stepped for nothing.
func (e *Engine) lazilyBlocked() bool {
	for _, o := range e.threads {
		if o != e.running && o.waitsLazily() {
			return true
		}
	}
	return false
}

// waitsLazily reports whether t waits where another thread may end its
// wait without a scheduling point (lazilyBlocked).
func (t *thread) waitsLazily() bool {
	switch {
	case t.state == tsReady || t.state == tsNew:
		return false
	case t.state == tsBlocked && (t.block.kind == bkFutex || t.block.kind == bkChild || t.block.kind == bkSleep):
		return false
	}
	return true
}

// warnStarved notes, the first time, that running thread t, which
// computes rather than spins, keeps a thread that has not yet run from
// starting: the two would run at once natively, and a program that
// counts on that (one thread computes until another has run) behaves
// otherwise. Only a new thread counts: a woken one waiting for its turn
// behind a computation is the ordinary life of a pool of workers. And
// the note is a warning only if the guest fails (reportStarved): Go's
// runtime starts threads while it computes, and a `go build` that
// works needs no such word. The message is made now, once a run, while
// the thread's process still lives to name the address in.
func (e *Engine) warnStarved(t *thread) {
	if e.starved != "" {
		return
	}
	for _, o := range e.ordered() {
		if o == t || o.state != tsNew {
			continue
		}
		var r abi.Regs
		_ = e.t.GetRegs(t.tid, &r)
		st, _ := e.t.(SpinTracer)
		e.starved = fmt.Sprintf("the guest failed, and thread %d had run for %v without a syscall (ip %s) while thread %d, new, waited to run: "+
			"natively both would run at once, but hermit runs one thread at a time and, with no PMU to count instructions, "+
			"preempts a thread that computes only at a syscall or, after --watchdog (%v), at an arbitrary point", t.vtid, t.budget(), where(st, t.tid, r.Rip), o.vtid, e.cfg.Watchdog)
		return
	}
}

// reportStarved warns of warnStarved's and lateTimer's notes at the end
// of a run whose guest failed.
func (e *Engine) reportStarved() {
	if _, replay := e.cfg.Journal.(OutsideSignalPlayer); replay {
		// A replay follows its recording, which said so if it did; its
		// own real time (a debugger held it, killed it at a detach)
		// tells nothing.
		return
	}
	if e.starved != "" && e.result.ExitCode != 0 {
		e.warnOnce("starved", e.starved)
	}
	if e.late != "" && e.result.ExitCode != 0 {
		e.warnOnce("late timer", e.late)
	}
}

// fixedNote is a spinNote that needs no symbol.
func fixedNote(s string) func() string { return func() string { return s } }

// note returns what t's last examination found, or "".
func (t *thread) note() string {
	if t.spinNote == nil {
		return ""
	}
	return t.spinNote()
}

// loopNote says what an examination that found no cycle saw. The
// address is named only when the note is read (a warning): reading a
// program's symbols costs more than the examination.
func loopNote(rips []uint64, st SpinTracer, tid int) func() string {
	count := map[uint64]int{}
	head, best := uint64(0), 0
	for _, rip := range rips {
		count[rip]++
		if n := count[rip]; n > best || n == best && rip < head {
			head, best = rip, n
		}
	}
	if best >= 3 {
		return countingNote(st, tid, head)
	}
	n, start := len(rips), rips[0]
	return func() string {
		return fmt.Sprintf("in %d instructions from %s it did not loop", n, where(st, tid, start))
	}
}

// countingNote is the spinNote of a thread found in a loop at head whose
// registers never came back.
func countingNote(st SpinTracer, tid int, head uint64) func() string {
	return func() string {
		return fmt.Sprintf("it loops at %s, but its registers change on every round (a counter or a computation), so no point of the loop repeats exactly", where(st, tid, head))
	}
}

// where names an address for a warning.
func where(st SpinTracer, tid int, addr uint64) string {
	if st != nil {
		if s := st.Symbolize(tid, addr); s != "" {
			return fmt.Sprintf("%#x (%s)", addr, s)
		}
	}
	return fmt.Sprintf("%#x", addr)
}

// restarting reports whether rax is the value of a syscall a signal
// interrupted, which the kernel restarts (or fails with EINTR).
func restarting(rax int64) bool {
	switch rax {
	case -abi.ERESTARTSYS, -abi.ERESTARTNOINTR, -abi.ERESTARTNOHAND, -abi.ERESTART_RESTARTBLOCK:
		return true
	}
	return false
}

// ignoreUnlessGone keeps an error only when it says the thread died.
func ignoreUnlessGone(err error) error {
	if errors.Is(err, ErrGone) {
		return err
	}
	return nil
}

// spinWaiterFreed reports whether a thread in a spin wait would find
// what it waits on changed.
func (e *Engine) spinWaiterFreed() bool {
	for _, t := range e.threads {
		if t.state == tsBlocked && t.block.kind == bkSpin && t.block.check(e) {
			return true
		}
	}
	return false
}

// countSpinning counts threads in a spin wait (spin.go).
func (e *Engine) countSpinning() int {
	n := 0
	for _, t := range e.threads {
		if t.state == tsBlocked && t.block.kind == bkSpin {
			n++
		}
	}
	return n
}
