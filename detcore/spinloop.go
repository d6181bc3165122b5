package detcore

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"

	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/arch/x86/x86asm"
)

// The pure half of spin detection (spin.go drives the thread): what one
// single-stepped instruction touches, and where a sequence of observed
// states closes into a cycle that nothing but another thread can end.
//
// The model. A thread observed at states s0, s1, ... (general and vector
// registers before each instruction) whose state sk equals an earlier si
// is in a cycle of period k-i. If no instruction of that cycle changed
// the bytes it touched, memory is where it was too, so the thread would
// run the same cycle forever: it waits for another thread (or a signal
// handler) to change one of those bytes. Its state at any point of the
// cycle does not depend on when it was looked at, so stopping it at a
// canonical point of the cycle is deterministic. So is a cycle that
// writes memory but puts every byte back by its end (a lock taken and let
// go each round): its memory, too, is the same at every round's start.

// memRange is memory one instruction reads or writes.
type memRange struct {
	addr uint64
	size int
}

// spinObs is one observed state of a stepped thread.
type spinObs struct {
	regs abi.Regs
	ext  []byte // vector registers (XSAVE layout), nil when unknown
	hash uint64
	// acc is what the instruction at regs.Rip touches; known says acc is
	// all of it. before and after are the bytes of acc around the step.
	acc           []memRange
	known         bool
	before, after []byte
	// writeOnly: the instruction only writes acc (writeOnly).
	writeOnly bool
}

// stateHash hashes the parts of an observation that must repeat.
func stateHash(r *abi.Regs, ext []byte) uint64 {
	h := fnv.New64a()
	_ = binary.Write(h, binary.LittleEndian, r)
	h.Write(ext)
	return h.Sum64()
}

// sameState reports whether two observations are the same thread state.
func sameState(a, b *spinObs) bool {
	return a.hash == b.hash && a.regs == b.regs && bytes.Equal(a.ext, b.ext)
}

// rfFlag is EFLAGS.RF, which the CPU sets and clears around debug
// exceptions; it says nothing about the program.
const rfFlag = 1 << 16

// cycleStart returns the index of the earlier observation that o repeats,
// or -1. seen maps state hashes to indices of obs.
func cycleStart(obs []spinObs, seen map[uint64][]int, o *spinObs) int {
	for _, i := range seen[o.hash] {
		if sameState(&obs[i], o) {
			return i
		}
	}
	return -1
}

// pureCycle reports whether every instruction of cycle is understood and
// left the bytes it touched as they were.
func pureCycle(cycle []spinObs) bool {
	for i := range cycle {
		if !cycle[i].known || cycle[i].after == nil || !bytes.Equal(cycle[i].before, cycle[i].after) {
			return false
		}
	}
	return true
}

// restoringCycle reports whether every instruction of cycle is understood
// and each byte the cycle reads before it writes it (its inputs) is, at
// the cycle's end, what it was at its start: the cycle may write memory
// (a lock taken and let go, return addresses on its stack) but it reads
// the same inputs every round, so from its first state it runs the same
// round again, writing the same values, for ever, unless another thread
// changes an input. A pure cycle is one.
func restoringCycle(cycle []spinObs) bool {
	start, end := map[uint64]byte{}, map[uint64]byte{}
	written := map[uint64]bool{}
	for i := range cycle {
		o := &cycle[i]
		if !o.known || o.after == nil {
			return false
		}
		off := 0
		for _, m := range o.acc {
			for j := 0; j < m.size; j++ {
				a := m.addr + uint64(j)
				if _, ok := start[a]; !ok && !written[a] {
					if o.writeOnly {
						written[a] = true
					} else {
						start[a] = o.before[off+j]
					}
				}
				end[a] = o.after[off+j]
			}
			off += m.size
		}
	}
	for a, v := range start {
		if end[a] != v {
			return false
		}
	}
	return true
}

// unrestored follows the cycles an examination closes whose memory does
// not come back. Once the registers repeat, every later step closes one
// too, of the same period, until the thread does something else. A loop
// whose body calls one function from two places comes back to the same
// registers early, with another return address on its stack, and leaves
// that cycle within a round; a loop that counts in memory stays in its
// cycle: full says a whole round of one period repeated so.
type unrestored struct {
	start, end, run int
	full            bool
}

// add notes that the state at obs index end repeated the one at start.
func (u *unrestored) add(start, end int) {
	if u.run > 0 && start == u.start+1 && end == u.end+1 {
		u.run++
	} else {
		u.run = 1
	}
	u.start, u.end = start, end
	if u.run >= end-start {
		u.full = true
	}
}

// writeOnly reports whether inst only writes the memory it touches (what
// was there before is none of its input): a call or push of a register
// or constant, a move to memory.
func writeOnly(inst *x86asm.Inst) bool {
	switch inst.Op {
	case x86asm.CALL, x86asm.PUSH:
		// Of a register or a constant; through memory it reads too.
		_, isMem := inst.Args[0].(x86asm.Mem)
		return !isMem
	case x86asm.MOV, x86asm.MOVQ, x86asm.MOVD, x86asm.MOVAPS, x86asm.MOVUPS, x86asm.MOVAPD,
		x86asm.MOVUPD, x86asm.MOVDQA, x86asm.MOVDQU, x86asm.MOVSD_XMM, x86asm.MOVSS, x86asm.MOVNTI,
		x86asm.VMOVDQA, x86asm.VMOVDQU, x86asm.VMOVAPS, x86asm.VMOVUPS:
		_, toMem := inst.Args[0].(x86asm.Mem)
		return toMem
	}
	return false
}

// canonical returns the index in cycle of its canonical state: the lowest
// instruction pointer, ties broken by the rest of the registers, so that
// the choice depends on the set of states alone, not on where the cycle
// was entered.
func canonical(cycle []spinObs) int {
	best := 0
	for i := 1; i < len(cycle); i++ {
		if lessState(&cycle[i], &cycle[best]) {
			best = i
		}
	}
	return best
}

func lessState(a, b *spinObs) bool {
	if a.regs.Rip != b.regs.Rip {
		return a.regs.Rip < b.regs.Rip
	}
	var ab, bb bytes.Buffer
	_ = binary.Write(&ab, binary.LittleEndian, &a.regs)
	_ = binary.Write(&bb, binary.LittleEndian, &b.regs)
	if c := bytes.Compare(ab.Bytes(), bb.Bytes()); c != 0 {
		return c < 0
	}
	return bytes.Compare(a.ext, b.ext) < 0
}

// readSet returns the distinct ranges a cycle touches.
func readSet(cycle []spinObs) []memRange {
	var out []memRange
	seen := map[memRange]bool{}
	for i := range cycle {
		for _, m := range cycle[i].acc {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// insnEnd says how an instruction ends an examination before it is
// stepped: it traps, enters the kernel or waits for an interrupt, so
// stepping it would take something from the guest or leave the loop.
func insnEnd(op x86asm.Op) bool {
	switch op {
	case x86asm.INT, x86asm.INTO, x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.SYSCALL, x86asm.SYSENTER,
		x86asm.HLT, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ, x86asm.SYSRET, x86asm.SYSEXIT:
		return true
	}
	return false
}

// steppableCall says whether inst, at registers r, is a syscall an
// examination steps over as an instruction: getpid or gettid, which the
// filter lets through, touch no memory and answer the same for the
// thread's life, so a loop on them (while (!flag) getpid();) can be a pure
// spin. (getppid is not: a loop waits on it for its parent's death.) Not
// while the thread counts its calls: each is a scheduling point then.
func steppableCall(inst *x86asm.Inst, r *abi.Regs) bool {
	return inst.Op == x86asm.SYSCALL && (r.Rax == abi.SYS_GETPID || r.Rax == abi.SYS_GETTID)
}

// implicitMem lists instructions that touch memory their operands do not
// name (beyond the stack, which accesses models): hermit does not model
// them, so a cycle holding one is never taken for a spin.
var implicitMem = map[x86asm.Op]bool{
	x86asm.MOVSB: true, x86asm.MOVSW: true, x86asm.MOVSD: true, x86asm.MOVSQ: true,
	x86asm.STOSB: true, x86asm.STOSW: true, x86asm.STOSD: true, x86asm.STOSQ: true,
	x86asm.LODSB: true, x86asm.LODSW: true, x86asm.LODSD: true, x86asm.LODSQ: true,
	x86asm.SCASB: true, x86asm.SCASW: true, x86asm.SCASD: true, x86asm.SCASQ: true,
	x86asm.CMPSB: true, x86asm.CMPSW: true, x86asm.CMPSD: true, x86asm.CMPSQ: true,
	x86asm.INSB: true, x86asm.INSW: true, x86asm.INSD: true,
	x86asm.OUTSB: true, x86asm.OUTSW: true, x86asm.OUTSD: true,
	x86asm.XLATB: true, x86asm.ENTER: true, x86asm.PUSHA: true, x86asm.PUSHAD: true,
	x86asm.POPA: true, x86asm.POPAD: true, x86asm.MASKMOVQ: true, x86asm.MASKMOVDQU: true,
	x86asm.XSAVE: true, x86asm.XSAVE64: true, x86asm.XSAVEOPT: true, x86asm.XSAVEOPT64: true,
	x86asm.XRSTOR: true, x86asm.XRSTOR64: true, x86asm.FXSAVE: true, x86asm.FXSAVE64: true,
	x86asm.FXRSTOR: true, x86asm.FXRSTOR64: true, x86asm.FNSAVE: true,
	x86asm.FRSTOR: true, x86asm.FLDENV: true, x86asm.FNSTENV: true, x86asm.MONITOR: true,
	x86asm.MWAIT: true, x86asm.LCALL: true, x86asm.LRET: true, x86asm.LJMP: true,
	x86asm.INT: true, x86asm.INTO: true, x86asm.CPUID: true, x86asm.RDTSC: true,
	x86asm.RDTSCP: true, x86asm.RDRAND: true, x86asm.RDPMC: true,
	x86asm.XGETBV: true, x86asm.UD0: true, x86asm.UD1: true, x86asm.UD2: true, x86asm.SYSCALL: true,
	x86asm.SYSENTER: true, x86asm.HLT: true,
}

// accesses decodes the instruction at the start of code, which r.Rip
// points to, and returns it with the memory it reads or writes. known is
// false when that cannot be told (the bytes do not decode, or the
// instruction touches memory it does not name; CPUID and RDTSC count
// there too: what they return is not in the registers compared).
func accesses(code []byte, r *abi.Regs) (inst x86asm.Inst, acc []memRange, known bool) {
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		return inst, nil, false
	}
	if steppableCall(&inst, r) {
		return inst, nil, true
	}
	if implicitMem[inst.Op] {
		return inst, nil, false
	}
	switch inst.Op {
	case x86asm.LEA, x86asm.NOP, x86asm.PAUSE, x86asm.PREFETCHNTA, x86asm.PREFETCHT0,
		x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHW:
		// Their memory operand is an address, not an access.
		return inst, nil, true
	case x86asm.PUSH, x86asm.PUSHF, x86asm.PUSHFQ, x86asm.CALL:
		acc = append(acc, memRange{r.Rsp - 8, 8})
	case x86asm.POP, x86asm.POPF, x86asm.POPFQ, x86asm.RET:
		acc = append(acc, memRange{r.Rsp, 8})
	case x86asm.LEAVE:
		acc = append(acc, memRange{r.Rbp, 8})
	}
	for _, a := range inst.Args {
		m, ok := a.(x86asm.Mem)
		if !ok {
			continue
		}
		addr, ok := effAddr(m, &inst, r)
		if !ok {
			return inst, nil, false
		}
		size := inst.MemBytes
		if size <= 0 {
			return inst, nil, false
		}
		acc = append(acc, memRange{addr, size})
	}
	return inst, acc, true
}

// effAddr computes a memory operand's linear address.
func effAddr(m x86asm.Mem, inst *x86asm.Inst, r *abi.Regs) (uint64, bool) {
	var addr uint64
	switch m.Segment {
	case 0, x86asm.CS, x86asm.DS, x86asm.ES, x86asm.SS:
	case x86asm.FS:
		addr = r.FsBase
	case x86asm.GS:
		addr = r.GsBase
	default:
		return 0, false
	}
	disp := m.Disp
	if m.Base != 0 || m.Index != 0 {
		// x86asm gives a 32-bit displacement zero-extended
		// ([rsp+0xfffff000]); the CPU sign-extends it ([rsp-0x1000], a
		// JVM's stack bang). Only an absolute address (moffs) has 64.
		disp = int64(int32(disp))
	}
	if m.Base == x86asm.RIP {
		return addr + r.Rip + uint64(inst.Len) + uint64(disp), true
	}
	var ea uint64
	if m.Base != 0 {
		v, ok := regValue(m.Base, r)
		if !ok {
			return 0, false
		}
		ea += v
	}
	if m.Index != 0 {
		v, ok := regValue(m.Index, r)
		if !ok {
			return 0, false
		}
		ea += v * uint64(m.Scale)
	}
	ea += uint64(disp)
	if inst.AddrSize == 32 {
		ea = uint64(uint32(ea))
	}
	return addr + ea, true
}

// regValue reads a 64- or 32-bit general register from r.
func regValue(reg x86asm.Reg, r *abi.Regs) (uint64, bool) {
	gprs := [16]uint64{r.Rax, r.Rcx, r.Rdx, r.Rbx, r.Rsp, r.Rbp, r.Rsi, r.Rdi,
		r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15}
	switch {
	case reg >= x86asm.RAX && reg <= x86asm.R15:
		return gprs[reg-x86asm.RAX], true
	case reg >= x86asm.EAX && reg <= x86asm.R15L:
		return uint64(uint32(gprs[reg-x86asm.EAX])), true
	}
	return 0, false
}
