package detcore

import (
	"fmt"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/arch/x86/x86asm"
)

// Hops: the cheap first look of an examination (spin.go). Stepping a
// thread costs a stop per instruction (some 50 µs where the tracer and
// the guest share a CPU that a hypervisor runs), and a thread that
// computes is stepped until one instruction has come spinRounds times
// with other registers each time: up to spinSteps steps, tens of
// milliseconds, each time the watchdog looks at a compiler, say, while
// another process waits to run.
//
// A pure spin comes back to each instruction of its loop with every
// register as it was. So the examination first puts an int3 where the
// watchdog stopped the thread and lets it run on its own code; at each
// arrival there the general registers are compared with the earlier
// arrivals':
//
//   - the same as at an earlier arrival: a cycle may close there, and the
//     thread is stepped from there, as an examination did before hops;
//   - spinRounds arrivals, each with other registers: it counts or
//     computes (stepping would have found the same at spinRounds visits
//     of that instruction), and it runs on without the int3;
//   - any other stop (a syscall, a signal, the watchdog's next look, an
//     exit): the int3 goes, and the stop is handled as it would have been.
//
// The thread runs on its own code, as without the look: the schedule
// does not change, only the cost of telling a computing thread from a
// spinning one (TestSpinWaits compares runs with --no-spin-traps, which
// makes no hops). A spin whose loop the thread had not entered when it
// was stopped is found at the watchdog's next look, as one longer than
// spinSteps always was. Hops go only where spin traps may (file-backed
// code, no guest tracer) and not with --no-spin-traps.

// spinHop is the int3 of an examination by hops in an address space.
type spinHop struct {
	// t is the thread examined; at, where it was stopped, holds the
	// int3, in place of orig.
	t    *thread
	at   uint64
	orig byte
	// seen holds the hashes of the general registers at each arrival.
	seen map[uint64]bool
	// prevNote is t's spinNote before the look: what an earlier
	// examination found, which a look that ends without a verdict (the
	// watchdog's preemption came first) leaves in place.
	prevNote func() string
}

// startHop begins an examination of running thread t, stopped by the
// watchdog, by hops, and reports whether it did (the thread is then to
// run on with the int3 in).
func (e *Engine) startHop(t *thread) bool {
	ct, ok := e.t.(SpinTrapTracer)
	if _, ok2 := e.t.(SiginfoTracer); !ok || !ok2 || e.cfg.NoSpinTraps || t.proc.mm.hop != nil {
		return false
	}
	var r abi.Regs
	if e.t.GetRegs(t.tid, &r) != nil || int64(r.OrigRax) >= 0 && restarting(int64(r.Rax)) {
		// Stepping tells it was asleep in a syscall.
		return false
	}
	mm := t.proc.mm
	if mm.traps != nil && mm.traps.at[r.Rip] != nil || e.tracedMM(mm) || !ct.FileCode(t.tid, r.Rip) {
		return false
	}
	code := e.readCode(t, r.Rip)
	if len(code) == 0 || code[0] == int3 {
		return false
	}
	if inst, err := x86asm.Decode(code, 64); err != nil || insnEnd(inst.Op) {
		// Stepping ends at once there.
		return false
	}
	if e.t.WriteMem(t.tid, r.Rip, []byte{int3}) != nil {
		return false
	}
	// It stands on the int3: its first arrival is at once.
	mm.hop = &spinHop{t: t, at: r.Rip, orig: code[0], seen: map[uint64]bool{}, prevNote: t.spinNote}
	e.result.Stats.SpinHops++
	st, _ := e.t.(SpinTracer)
	tid, at := t.tid, r.Rip
	t.spinNote = func() string {
		return fmt.Sprintf("it did not come back to %s, where it was stopped, with the registers it had there", where(st, tid, at))
	}
	return true
}

// hopHash hashes the general registers of an arrival, r, without the
// flags the CPU and the steps set.
func hopHash(r *abi.Regs) uint64 {
	c := *r
	c.Eflags &^= rfFlag | tfFlag
	return stateHash(&c, nil)
}

// hopStop handles stop st of t, in an address space with a hop's int3 in,
// and reports whether it did: an arrival at the int3. Any other stop
// takes the int3 out and is left to the caller.
func (e *Engine) hopStop(t *thread, st Stop) (bool, error) {
	mm := t.proc.mm
	h := mm.hop
	if st.Kind == StopSignal && st.Sig == abi.SIGTRAP {
		var r abi.Regs
		if e.t.GetRegs(t.tid, &r) == nil && r.Rip == h.at+1 && e.int3Trap(t) {
			r.Rip--
			if err := e.t.SetRegs(t.tid, &r); err != nil {
				e.endHop(mm, t, st)
				return true, e.gone(t, err)
			}
			return true, e.hopArrival(t, h, &r)
		}
	}
	e.endHop(mm, t, st)
	return false, nil
}

// hopArrival handles t's arrival at the int3 of hop h (rewound to it,
// registers r).
func (e *Engine) hopArrival(t *thread, h *spinHop, r *abi.Regs) error {
	mm := t.proc.mm
	k := hopHash(r)
	switch {
	case h.t != t || e.running != t:
		// Not the thread examined (it cannot run while another does;
		// this is for safety): the look ends.
		e.endHop(mm, t, Stop{})
	case h.seen[k]:
		// Back as it was: step it from here.
		e.endHop(mm, t, Stop{})
		e.result.Stats.SpinHopsStepped++
		start := time.Now()
		res, stop, err := e.examine(t, spinNoLoop, nil, spinLeftRecheck)
		e.examCost.Store(int64(time.Since(start)))
		if e.cfg.Debug != nil {
			e.cfg.Debug("spin examination tid=%d after hops: result %d (%s) stop %+v err %v", t.tid, res, t.note(), stop, err)
		}
		if err != nil {
			return e.gone(t, err)
		}
		if done, err := e.examined(t, res, stop); done {
			return err
		}
	case len(h.seen)+1 >= spinRounds:
		e.endHop(mm, t, Stop{})
		st, _ := e.t.(SpinTracer)
		t.spinNote = countingNote(st, t.tid, h.at)
		if e.cfg.Debug != nil {
			e.cfg.Debug("spin examination tid=%d by hops: it computes (%d arrivals at %#x)", t.tid, spinRounds, h.at)
		}
	default:
		// On past the int3 (out of memory meanwhile), and round again.
		h.seen[k] = true
		mm.hop = nil
		if err := e.t.WriteMem(t.tid, h.at, []byte{h.orig}); err != nil {
			return e.gone(t, err)
		}
		stop, trapped, err := e.stepGuest(t, nil, r)
		if err != nil {
			return e.gone(t, err)
		}
		if !trapped {
			return e.handleStop(stop)
		}
		if err := e.t.WriteMem(t.tid, h.at, []byte{int3}); err != nil {
			return e.gone(t, err)
		}
		mm.hop = h
	}
	if err := e.resumeLooked(t, t.contMode(), 0); err != nil {
		return e.gone(t, err)
	}
	return nil
}

// endHop takes the int3 of mm's hop out of memory, as t stopped with st:
// through t, or another thread of mm if t is gone, and out of a child
// that a fork at st copied it into. An exec leaves no memory to mend.
func (e *Engine) endHop(mm *addrSpace, t *thread, st Stop) {
	h := mm.hop
	mm.hop = nil
	if h == nil {
		return
	}
	if h.prevNote != nil {
		// Its verdict, if any, comes after this.
		h.t.spinNote = h.prevNote
	}
	if st.Kind == StopExec {
		return
	}
	tid := t.tid
	if st.Kind == StopExited || st.Kind == StopKilled {
		tid = e.memTid(mm, nil, t.tid)
	}
	if tid != 0 {
		e.unputHop(tid, h)
	}
	if st.Kind == StopClone {
		// A child that does not share the memory has the int3 too (a
		// fork the filter lets through); it has not run yet.
		e.unputHop(int(st.Msg), h)
	}
}

// unputHop puts the byte h's int3 replaced back in tid's memory if the
// int3 is still there.
func (e *Engine) unputHop(tid int, h *spinHop) {
	b := make([]byte, 1)
	if e.t.ReadMem(tid, h.at, b) == nil && b[0] == int3 {
		_ = e.t.WriteMem(tid, h.at, []byte{h.orig})
	}
}

// hopping reports whether st is a stop of a thread whose address space
// has a hop's int3 in and that may have come to it: part of an
// examination, not progress the watchdog counts.
func (e *Engine) hopping(st Stop) bool {
	if st.Kind != StopSignal || st.Sig != abi.SIGTRAP {
		return false
	}
	t := e.threads[st.Tid]
	return t != nil && t.proc.mm.hop != nil
}
