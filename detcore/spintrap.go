package detcore

import (
	"bytes"
	"errors"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Spin traps: an int3 at the canonical point of a loop a thread was found
// spinning in (spin.go), so that the next thread to come round that loop
// is examined as it arrives rather than after its spin budget, and the
// loop's exit is told by the int3 not coming back rather than by
// stepping on.
//
// A trap changes no schedule. An examination at the trap starts where
// the budget's would have found the thread, in the same pure cycle
// (only the running thread runs, and a pure cycle changes nothing), and
// it stops the thread at the same canonical point; an examination there
// that finds no spin changes nothing the engine keeps. So a run with
// traps, one without (--no-spin-traps) and a replay of either have the
// same schedule: only the time to find each spin differs (a budget of
// 2 to 20 ms against a stop and a few steps).
//
// A trap goes only into code mapped from a file, executable and not
// writable (a JIT's code moves and changes), in an address space no
// guest process traces (a guest debugger would see the int3s). The
// engine steps a thread with the int3s out of memory, and a replay under
// a debugger runs without traps; a program that reads its own code sees
// the int3. A trap whose arrivals keep finding no spin (a lock
// taken at once, most of the time) is taken out for good, once they
// outnumber spinTrapMisses and four for each arrival that found one.

// int3 is the one-byte breakpoint instruction.
const int3 = 0xcc

const (
	// spinTrapCode is how many bytes of code from a trap's address on
	// tell that the code there is still the loop it was put in.
	spinTrapCode = 32
	// maxSpinTraps bounds the traps of one address space.
	maxSpinTraps = 32
	// spinTrapMisses is how many arrivals at a trap may find no spin
	// beyond four for each that found one before the trap goes.
	spinTrapMisses = 16
)

// spinTrap is one int3 hermit put in a guest address space.
type spinTrap struct {
	// code is the code from the trap's address on, to spinTrapCode bytes
	// or the end of its page, as it was before the int3: its first byte
	// is the one the int3 replaces. Other code there (a library
	// unmapped, another mapped at its address) takes the trap out.
	code []byte
	// in: the int3 is in memory (it is out while a thread is stepped).
	in bool
	// loop holds the instructions of the cycle found there: leaving them
	// ends an examination at the trap.
	loop map[uint64]bool
	// hits counts the arrivals examined, waits those that found a spin.
	hits, waits int
}

// spinTraps are the traps of one address space.
type spinTraps struct {
	at map[uint64]*spinTrap
	// gone holds the addresses whose trap was taken out: none goes back.
	gone map[uint64]bool
}

// SpinTrapTracer is implemented by tracers that tell where a spin trap
// may go.
type SpinTrapTracer interface {
	// FileCode reports whether addr is in a private mapping of a file,
	// executable and not writable, in tid's address space.
	FileCode(tid int, addr uint64) bool
}

// addSpinTrap notes a trap at at, the canonical point of the pure cycle
// loop that t, stopped there, was found spinning in. It goes into memory
// when the examination ends (armSpinTraps).
func (e *Engine) addSpinTrap(t *thread, at uint64, loop map[uint64]bool) {
	mm := t.proc.mm
	if e.cfg.NoSpinTraps || mm.traps != nil && (mm.traps.at[at] != nil || mm.traps.gone[at] || len(mm.traps.at) >= maxSpinTraps) {
		return
	}
	ct, ok := e.t.(SpinTrapTracer)
	if !ok || e.tracedMM(mm) || !ct.FileCode(t.tid, at) {
		return
	}
	code := make([]byte, min(spinTrapCode, 4096-at%4096))
	if e.t.ReadMem(t.tid, at, code) != nil || code[0] == int3 {
		return
	}
	if mm.traps == nil {
		mm.traps = &spinTraps{at: map[uint64]*spinTrap{}, gone: map[uint64]bool{}}
	}
	mm.traps.at[at] = &spinTrap{code: code, loop: loop}
	e.result.Stats.SpinTraps++
}

// tracedMM reports whether a guest process traces a thread of a process
// in mm.
func (e *Engine) tracedMM(mm *addrSpace) bool {
	for _, t := range e.threads {
		if t.proc.mm == mm && t.pt != nil {
			return true
		}
	}
	return false
}

// trap returns the trap at at whose int3 is in memory, or nil.
func (mm *addrSpace) trap(at uint64) *spinTrap {
	if mm.traps == nil {
		return nil
	}
	if tr := mm.traps.at[at]; tr != nil && tr.in {
		return tr
	}
	return nil
}

// disarmSpinTraps takes the int3s of t's address space out of memory
// before t is stepped.
func (e *Engine) disarmSpinTraps(t *thread) {
	e.setSpinTraps(t.proc.mm, t, false)
}

// armSpinTraps puts the int3s of mm, t's address space when it was
// stepped, back into memory. A thread that has exec'd since has another
// address space: mm's int3s stay out (its vfork parent, if any, runs
// without them).
func (e *Engine) armSpinTraps(t *thread, mm *addrSpace) {
	if t.proc.mm == mm {
		e.setSpinTraps(mm, t, true)
	}
}

// setSpinTraps puts the int3s of mm in memory (in) or takes them out,
// through t if it lives, else through another thread of mm.
func (e *Engine) setSpinTraps(mm *addrSpace, t *thread, in bool) {
	ts := mm.traps
	if ts == nil {
		return
	}
	tid := e.memTid(mm, t, 0)
	for at, tr := range ts.at {
		if tr.in == in {
			continue
		}
		err := e.putTrap(tid, ts, at, tr, in)
		if err != nil {
			// The thread is gone: another may reach the memory.
			if tid = e.memTid(mm, nil, tid); tid == 0 {
				return
			}
			if err = e.putTrap(tid, ts, at, tr, in); err != nil {
				return
			}
		}
		tr.in = in
	}
}

// memTid returns a thread through which to reach mm's memory, other
// than thread not: t if it lives in mm, else another of its threads,
// else 0.
func (e *Engine) memTid(mm *addrSpace, t *thread, not int) int {
	if t != nil && t.proc.mm == mm && t.state != tsDying && t.tid != not {
		return t.tid
	}
	for _, o := range e.ordered() {
		if o.tid != not && o.proc.mm == mm && o.state != tsDying {
			return o.tid
		}
	}
	return 0
}

// putTrap puts tr's int3 at at in tid's memory (in) or takes it out, if
// the code there is still the code it was put in. Other code there (a
// library unmapped, another mapped at its address), or none, takes the
// trap out for good, with no write. An error says the thread is gone.
func (e *Engine) putTrap(tid int, ts *spinTraps, at uint64, tr *spinTrap, in bool) error {
	if tid == 0 {
		return ErrGone
	}
	cur := make([]byte, len(tr.code))
	if err := e.t.ReadMem(tid, at, cur); err != nil {
		if errors.Is(err, ErrGone) {
			return err
		}
		e.dropTrap(ts, at)
		return nil
	}
	b := tr.code[0]
	if in {
		b = int3
	}
	if cur[0] == b && bytes.Equal(cur[1:], tr.code[1:]) {
		return nil
	}
	if cur[0] != int3 && cur[0] != tr.code[0] || !bytes.Equal(cur[1:], tr.code[1:]) {
		e.dropTrap(ts, at)
		return nil
	}
	return ignoreUnlessGone(e.t.WriteMem(tid, at, []byte{b}))
}

func (e *Engine) dropTrap(ts *spinTraps, at uint64) {
	delete(ts.at, at)
	ts.gone[at] = true
}

// dropSpinTraps takes every trap out of p's address space for good (a
// guest process starts tracing it).
func (e *Engine) dropSpinTraps(p *process) {
	ts := p.mm.traps
	if ts == nil {
		return
	}
	e.setSpinTraps(p.mm, nil, false)
	for at := range ts.at {
		e.dropTrap(ts, at)
	}
}

// forkSpinTraps gives a forked child's address space the traps its
// parent's had: its memory is a copy, int3s included.
func forkSpinTraps(parent, child *addrSpace) {
	ts := parent.traps
	if ts == nil {
		return
	}
	c := &spinTraps{at: make(map[uint64]*spinTrap, len(ts.at)), gone: make(map[uint64]bool, len(ts.gone))}
	for at, tr := range ts.at {
		cp := *tr
		c.at[at] = &cp
	}
	for at := range ts.gone {
		c.gone[at] = true
	}
	child.traps = c
}

// spinTrapHit handles a SIGTRAP stop of t if it is the int3 of one of its
// address space's traps, and reports whether it was: t has come round a
// loop it, or another thread, was found spinning in.
func (e *Engine) spinTrapHit(t *thread) (bool, error) {
	if t.proc.mm.traps == nil {
		return false, nil
	}
	var r abi.Regs
	if e.t.GetRegs(t.tid, &r) != nil {
		return false, nil
	}
	tr := t.proc.mm.trap(r.Rip - 1)
	if tr == nil || !e.int3Trap(t) {
		return false, nil
	}
	r.Rip--
	if err := e.t.SetRegs(t.tid, &r); err != nil {
		return true, e.gone(t, err)
	}
	t.nativeAt = 0
	return true, e.examineAtTrap(t, r.Rip, tr, false)
}

// siKernel is the si_code of a signal the kernel sends on its own: a
// SIGTRAP from an int3, an itimer's signal.
const siKernel = 0x80

// int3Trap reports whether t's SIGTRAP came from an int3 (not a step the
// guest set up, nor a signal sent to it).
func (e *Engine) int3Trap(t *thread) bool {
	st, ok := e.t.(SiginfoTracer)
	if !ok {
		return true
	}
	info, err := st.Siginfo(t.tid)
	return err == nil && len(info) >= 12 && int32(le32(info[8:])) == siKernel
}

// examineAtTrap examines t, at trap tr at addr: woken there from a spin
// wait (wake), or arrived there while the budget's examination would be
// made (another thread waits, or a deadline). Otherwise it steps t past
// the int3. An examination that finds t spinning leaves it waiting;
// otherwise t goes on, stepped past the int3 if it stands on one.
func (e *Engine) examineAtTrap(t *thread, addr uint64, tr *spinTrap, wake bool) error {
	mm := t.proc.mm
	res, stop, err := examRuns, Stop{}, error(nil)
	if !wake {
		// An arrival through the int3 (a wake is none).
		tr.hits++
	}
	if e.running == t && (wake || e.spinExamWanted()) {
		res, stop, err = e.examine(t, spinNoLoopRecheck, tr.loop, 1)
		if err == nil && res == examSpin && !wake {
			tr.waits++
			e.result.Stats.SpinTrapHits++
		}
		if e.cfg.Debug != nil {
			e.cfg.Debug("spin trap tid=%d at %#x wake=%v: result %d (%s) stop %+v err %v", t.tid, addr, wake, res, t.note(), stop, err)
		}
	}
	if ts := mm.traps; ts != nil && tr.hits-tr.waits > spinTrapMisses+4*tr.waits && ts.at[addr] == tr {
		// Mostly no spin here (a lock taken at once, or no other
		// thread to wait for): the trap costs more than it saves.
		if tr.in {
			_ = e.putTrap(e.memTid(mm, t, 0), ts, addr, tr, false)
		}
		e.dropTrap(ts, addr)
	}
	if err != nil {
		return e.gone(t, err)
	}
	if done, err := e.examined(t, res, stop); done {
		return err
	}
	return e.resumePastTrap(t)
}

// resumePastTrap resumes t, stepped past the int3 of a trap if it stands
// on one.
func (e *Engine) resumePastTrap(t *thread) error {
	if ts := t.proc.mm.traps; ts != nil {
		var r abi.Regs
		if err := e.t.GetRegs(t.tid, &r); err != nil {
			return e.gone(t, err)
		}
		if t.proc.mm.trap(r.Rip) != nil {
			mm := t.proc.mm
			e.disarmSpinTraps(t)
			stop, trapped, err := e.stepGuest(t, nil, &r)
			e.armSpinTraps(t, mm)
			if err != nil {
				return e.gone(t, err)
			}
			if !trapped {
				return e.handleStop(stop)
			}
		}
	}
	if err := e.resumeLooked(t, t.contMode(), 0); err != nil {
		return e.gone(t, err)
	}
	return nil
}
