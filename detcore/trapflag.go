package detcore

import (
	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/arch/x86/x86asm"
)

// tfFlag is EFLAGS.TF, which a single-step sets while the instruction
// runs.
const tfFlag = 1 << 8

// TrapFlag keeps the trap flag of a thread's single steps out of its
// program's sight, as gdb does. A stepped pushf pushes the flag, and a
// later popf of that word, once the thread ran free, would set it: the
// thread would die of a SIGTRAP (a JVM's call stub saves the flags so).
// And once the kernel has stepped a popf it takes the flag for the
// program's own (is_setting_trap_flag in arch/x86/kernel/step.c) and
// leaves it set when the thread goes on. So the flag is cleared in the
// word a stepped pushf pushed, and the flag a stepped popf loaded is put
// back before the thread next runs free. The engine keeps one for the
// steps of its examinations, the replay's debugger layer one for the
// steps a debugger asks for.
type TrapFlag struct {
	// The instruction being stepped, if it pushes or pops the flags: its
	// operand size, its thread's stack pointer before, and the flag the
	// program has (push) or the word loads (pop).
	push, pop bool
	size, rsp uint64
	tf        uint64
	// owned: a popf was stepped since the thread last ran free, and
	// ownTF is the flag it loaded.
	owned bool
	ownTF uint64
}

// Stepping notes inst, at r (tid's registers), which tid is about to
// single-step. Either may be nil: it is read.
func (f *TrapFlag) Stepping(t Tracer, tid int, inst *x86asm.Inst, r *abi.Regs) {
	f.push, f.pop, f.size = false, false, 0
	if r == nil {
		r = new(abi.Regs)
		if t.GetRegs(tid, r) != nil {
			return
		}
	}
	if inst == nil {
		in, err := x86asm.Decode(codeAt(t, tid, r.Rip), 64)
		if err != nil {
			return
		}
		inst = &in
	}
	switch inst.Op {
	case x86asm.PUSHFQ, x86asm.POPFQ:
		f.size = 8
	case x86asm.PUSHF, x86asm.POPF:
		f.size = 2
	default:
		return
	}
	f.rsp = r.Rsp
	if inst.Op == x86asm.PUSHFQ || inst.Op == x86asm.PUSHF {
		// The kernel shows the flag as the program has it (it hides the
		// one a step set), unless a popf gave it the program.
		f.push, f.tf = true, r.Eflags&tfFlag
		if f.owned {
			f.tf = f.ownTF
		}
		return
	}
	var w [2]byte
	if t.ReadMem(tid, r.Rsp, w[:]) == nil {
		f.pop, f.tf = true, uint64(w[1]&(tfFlag>>8))<<8
	}
}

// Stepped finishes the bookkeeping of the step Stepping noted, once it
// has completed (its trap). It checks that the instruction ran (the
// stack pointer moved by its size).
func (f *TrapFlag) Stepped(t Tracer, tid int) error {
	push, pop := f.push, f.pop
	f.push, f.pop = false, false
	if !push && !pop {
		return nil
	}
	var r abi.Regs
	if err := t.GetRegs(tid, &r); err != nil {
		return err
	}
	switch {
	case pop && r.Rsp == f.rsp+f.size:
		f.owned, f.ownTF = true, f.tf
	case push && r.Rsp == f.rsp-f.size && f.tf == 0:
		// The flag is in the word's second byte.
		var b [1]byte
		if t.ReadMem(tid, r.Rsp+1, b[:]) == nil && b[0]&(tfFlag>>8) != 0 {
			b[0] &^= tfFlag >> 8
			return t.WriteMem(tid, r.Rsp+1, b[:])
		}
	}
	return nil
}

// Free gives tid, about to run free (a resume that is not a step), the
// trap flag the last popf it was stepped over loaded.
func (f *TrapFlag) Free(t Tracer, tid int) error {
	f.push, f.pop = false, false
	if !f.owned {
		return nil
	}
	f.owned = false
	var r abi.Regs
	if err := t.GetRegs(tid, &r); err != nil {
		return err
	}
	if r.Eflags&tfFlag == f.ownTF {
		return nil
	}
	r.Eflags = r.Eflags&^tfFlag | f.ownTF
	return t.SetRegs(tid, &r)
}

// codeAt reads the instruction bytes at rip in tid's memory: 16, or the
// rest of the page if the next is not mapped; nil if none.
func codeAt(t Tracer, tid int, rip uint64) []byte {
	b := make([]byte, 16)
	if t.ReadMem(tid, rip, b) == nil {
		return b
	}
	if n := 4096 - rip%4096; n < 16 && t.ReadMem(tid, rip, b[:n]) == nil {
		return b[:n]
	}
	return nil
}
