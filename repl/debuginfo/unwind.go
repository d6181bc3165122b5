package debuginfo

// Regs are the registers a backtrace starts from. All is indexed by DWARF
// register number: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
// 8–15 r8–r15, 16 rip. Rip, Rsp and Rbp, when non-zero, take precedence
// over All[16], All[7] and All[6].
type Regs struct {
	Rip, Rsp, Rbp uint64
	All           [17]uint64
}

// Frame is one frame of a backtrace. PC is the frame's program counter (a
// return address for all but the innermost frame and frames interrupted by
// a signal); Location describes PC, with the line of the call for return
// addresses. CFA is the frame's canonical frame address (the caller's rsp
// after the call returns), 0 when the walk stopped at this frame unknowing.
// A signal trampoline without a symbol is named "<signal handler called>",
// as gdb shows it.
type Frame struct {
	PC, CFA uint64
	Location
	// Regs are the frame's registers in DWARF numbering, where Known
	// (bit i for Regs[i]) says the unwinder found them: all of the
	// innermost frame's; of a caller's, those the calls below it saved
	// or left alone (the callee-saved ones).
	Regs  [numRegs]uint64
	Known uint32

	via string // "cfi" or "fp": how the caller of this frame was found (tests)
}

// defaultMaxFrames caps Backtrace when max <= 0; hardMaxFrames always.
const (
	defaultMaxFrames = 256
	hardMaxFrames    = 4096
)

// Backtrace unwinds the stack from regs, innermost frame first, reading
// saved registers through mem. It uses the DWARF CFI of the module holding
// each PC (.eh_frame, then .debug_frame) and the rbp chain where no CFI
// covers a PC. The walk stops at the outermost frame (undefined return
// address, as glibc's _start marks it, or a zero PC), at a PC outside any
// executable mapping, when a (PC, CFA) pair repeats or the stack would
// shrink in a frame-pointer step, and after max frames (256 if max <= 0).
// An innermost PC of 0 or outside code (a call through a bad pointer) is
// a frame of its own, whose caller's return address is on top of the
// stack.
func (s *Space) Backtrace(regs Regs, mem Mem, max int) []Frame {
	if max <= 0 {
		max = defaultMaxFrames
	}
	if max > hardMaxFrames {
		max = hardMaxFrames
	}
	var cur regset
	for i, v := range regs.All {
		cur.set(i, v)
	}
	if regs.Rip != 0 {
		cur.set(regRA, regs.Rip)
	}
	if regs.Rsp != 0 {
		cur.set(regRSP, regs.Rsp)
	}
	if regs.Rbp != 0 {
		cur.set(regRBP, regs.Rbp)
	}
	type key struct{ pc, cfa uint64 }
	seen := map[key]bool{}
	var frames []Frame
	exact := true // the PC is not a return address
	if pc, sp := cur.val[regRA], cur.val[regRSP]; cur.known[regRA] && (pc == 0 || !s.executable(pc)) {
		// A call through a bad pointer (a NULL callback): the fault
		// came at the call's target, before it pushed anything, so the
		// return address is on top of the stack, as gdb guesses too.
		if ra, err := readU64(mem, sp); err == nil && s.executable(ra) {
			frames = append(frames, Frame{PC: pc, CFA: sp + 8})
			cur.set(regRA, ra)
			cur.set(regRSP, sp+8)
			exact = false
		}
	}
	for len(frames) < max {
		pc := cur.val[regRA]
		if !cur.known[regRA] || pc == 0 {
			break
		}
		if len(frames) > 0 && !s.executable(pc) {
			break
		}
		loc, _ := s.symbol(pc, mem, !exact)
		frames = append(frames, Frame{PC: pc, Location: loc, Regs: cur.val, Known: cur.mask()})
		f := &frames[len(frames)-1]
		next, cfa, signal, via, ok := s.step(&cur, mem, exact)
		f.CFA, f.via = cfa, via
		if signal && f.Func == "" {
			f.Func = "<signal handler called>" // the trampoline, as gdb shows it
		}
		if !ok {
			break
		}
		k := key{next.val[regRA], cfa}
		if seen[k] {
			break
		}
		seen[k] = true
		cur, exact = next, signal
	}
	return frames
}

// executable reports whether pc lies in an executable mapping (or in a
// mapping whose permissions the maps did not give).
func (s *Space) executable(pc uint64) bool {
	m, ok := s.mappingAt(pc)
	return ok && (len(m.Perms) < 3 || m.Perms[2] == 'x')
}

// step computes the caller's registers. exact says cur's PC is not a
// return address (innermost or signal-interrupted frame); otherwise the
// CFI row is looked up at PC-1, inside the call instruction. signal
// reports that the caller's PC is exact in turn.
func (s *Space) step(cur *regset, mem Mem, exact bool) (next regset, cfa uint64, signal bool, via string, ok bool) {
	pc := cur.val[regRA]
	look := pc
	if !exact {
		look--
	}
	mod, _, _ := s.moduleAt(look, mem)
	if mod != nil && !s.noCFI {
		if f, found := mod.cfiFor().find(look - mod.bias); found {
			r, err := rowAt(f, look-mod.bias)
			if err == nil {
				next, cfa, err = r.apply(cur, mem)
				if err == nil {
					return next, cfa, f.cie.signal, "cfi", next.val[regRA] != 0
				}
				if err == errUndefinedRA {
					return next, cfa, false, "cfi", false // outermost frame
				}
			}
			// A row we could not evaluate (an unsupported expression, an
			// unreadable save slot): try the frame pointer, whose checks
			// stop the walk if rbp is not one.
		}
	}
	next, cfa, ok = s.fpStep(cur, mem, mod, exact)
	return next, cfa, false, "fp", ok
}

// fpStep unwinds one frame by the frame-pointer convention: at a
// function's first instruction the return address is at rsp, after
// "push %rbp" at rsp+8, and otherwise rbp points at the saved rbp with the
// return address above it.
func (s *Space) fpStep(cur *regset, mem Mem, mod *module, exact bool) (regset, uint64, bool) {
	pc := cur.val[regRA]
	var next regset
	for _, i := range []int{3, 12, 13, 14, 15} {
		if cur.known[i] {
			next.set(i, cur.val[i])
		}
	}
	if exact && mod != nil && cur.known[regRSP] {
		if _, start, ok := mod.funcAt(pc - mod.bias); ok {
			switch off := pc - mod.bias - start; {
			case off == 0:
				return fpFrom(next, cur, mem, cur.val[regRSP]+8, false)
			case off == 1 && s.byteAt(mem, pc-1) == 0x55: // push %rbp
				return fpFrom(next, cur, mem, cur.val[regRSP]+16, true)
			}
		}
	}
	if !cur.known[regRBP] || cur.val[regRBP] == 0 {
		return regset{}, 0, false
	}
	bp := cur.val[regRBP]
	if cur.known[regRSP] && bp < cur.val[regRSP] {
		return regset{}, 0, false // rbp is not a frame pointer here
	}
	return fpFrom(next, cur, mem, bp+16, true)
}

// fpFrom finishes a frame-pointer step with the given CFA: the return
// address is at CFA-8 and, if savedBP, the caller's rbp at CFA-16.
func fpFrom(next regset, cur *regset, mem Mem, cfa uint64, savedBP bool) (regset, uint64, bool) {
	if cur.known[regRSP] && cfa <= cur.val[regRSP] {
		return regset{}, cfa, false // the stack must grow towards its base
	}
	ra, err := readU64(mem, cfa-8)
	if err != nil || ra == 0 {
		return regset{}, cfa, false
	}
	next.set(regRA, ra)
	next.set(regRSP, cfa)
	if savedBP {
		bp, err := readU64(mem, cfa-16)
		if err != nil {
			return regset{}, cfa, false
		}
		// The caller's rbp may not be a frame pointer (its code may use
		// rbp freely); the next step's checks find out.
		next.set(regRBP, bp)
	} else if cur.known[regRBP] {
		next.set(regRBP, cur.val[regRBP])
	}
	return next, cfa, true
}

// byteAt reads one byte of code, or returns 0.
func (s *Space) byteAt(mem Mem, addr uint64) byte {
	if mem != nil {
		var b [1]byte
		if n, _ := mem(addr, b[:]); n == 1 {
			return b[0]
		}
	}
	if b := s.fileBytes(addr, 1); len(b) == 1 {
		return b[0]
	}
	return 0
}
