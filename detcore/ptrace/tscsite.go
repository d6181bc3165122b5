package ptrace

import (
	"encoding/binary"
	"math"

	"github.com/hermitdbg/hermit/detcore"
	"golang.org/x/arch/x86/x86asm"
)

// Patched rdtsc sites (detcore/tscsite.go). A trapped rdtsc costs two
// ptrace stops' worth of work; a site the engine has seen trap gets a jmp
// rel32 to a stub of its own in the slow page instead, which calls
// fio_tsc (testdata/fastio.S) to read the time-stamp counter from the
// clock page. The jmp takes 5 bytes: the rdtsc's 2 (rdtscp's 3) and those
// of the instructions after it, which the stub makes itself before it
// jumps back.
//
// A stub is
//
//	lea rsp, [rsp - 128]    over the red zone
//	call fio_tsc            returns past the next instruction, or to it
//	rdtsc                   traps: the page could not answer
//	<the instructions the jmp replaced, rip-relative ones relocated>
//	jmp <the site's next instruction>   (stubFor adds it)
//
// Only instructions that a stub can make elsewhere are moved: no branch,
// call or return, nothing relative to rip but a memory operand, and
// nothing that traps (another rdtsc, cpuid, syscall). No jump may land
// between them: compilers emit them in one basic block with the rdtsc,
// but hand-written code may share them (Go's runtime.cputicks jumps from
// its lfence; rdtsc path to the shl after its rdtscp). So the code after
// them is decoded (detcore.TSCSiteAfter bytes) and the bytes before them
// searched (TSCSiteBefore) for a jump into them, which leaves the site
// trapping.

// tscPrefix is a stub's first instruction, lea rsp, [rsp - 128].
var tscPrefix = []byte{0x48, 0x8d, 0x64, 0x24, 0x80}

// maxMoved bounds the instructions a site's jmp replaces after its rdtsc.
const maxMoved = 3

// tscShape is how an rdtsc site is patched: the length of the instruction
// (insn) and of it and the instructions its jmp replaces (n), those
// instructions (moved), and whether it can be (ok). It depends on the code
// around the site alone, so a Tracer keeps the shapes of the code it has
// seen (tscShapes): every program of a loader has the same sites.
type tscShape struct {
	ok      bool
	insn, n int
	moved   []x86asm.Inst
}

// maxShapes bounds a Tracer's shapes.
const maxShapes = 4096

// tscShapeOf decides the shape of the site in window (as tscStubOf's).
func tscShapeOf(window []byte) tscShape {
	var s tscShape
	if len(window) != detcore.TSCSiteBefore+detcore.TSCSiteAfter {
		return s
	}
	code := window[detcore.TSCSiteBefore:]
	switch {
	case code[0] == 0x0f && code[1] == 0x31:
		s.insn = 2
	case code[0] == 0x0f && code[1] == 0x01 && code[2] == 0xf9:
		s.insn = 3
	default:
		return s
	}
	s.n = s.insn
	for s.n < 5 {
		in, err := x86asm.Decode(code[s.n:], 64)
		if err != nil || len(s.moved) == maxMoved || !movable(&in) {
			return tscShape{}
		}
		s.moved = append(s.moved, in)
		s.n += in.Len
	}
	s.ok = !jumpsInto(window, s.n)
	return s
}

// tscShape returns the shape of the site in window, from the Tracer's
// shapes if it has seen the code.
func (t *Tracer) tscShape(window []byte) tscShape {
	if s, ok := t.tscShapes[string(window)]; ok {
		return s
	}
	s := tscShapeOf(window)
	if t.tscShapes == nil {
		t.tscShapes = make(map[string]tscShape)
	}
	if len(t.tscShapes) < maxShapes {
		t.tscShapes[string(window)] = s
	}
	return s
}

// tscStubOf makes the stub of the rdtsc or rdtscp at pc whose shape is s,
// window being the code around it (detcore.TSCSiteBefore bytes before pc,
// TSCSiteAfter from it), for a stub in the copy of the code at copyAt. It
// returns how many bytes the site's jmp replaces and a function that makes
// the stub (without its jmp back) at a given address, nil where a moved
// instruction's operand would be out of reach; ok is false for a site
// that cannot be patched (tscShapeOf).
func tscStubOf(s tscShape, pc uint64, window []byte, copyAt uint64) (n int, build func(at uint64) []byte, ok bool) {
	if !s.ok {
		return 0, nil, false
	}
	code := window[detcore.TSCSiteBefore:]
	entry := copyAt + fioTSC
	if s.insn == 3 {
		entry = copyAt + fioTSCP
	}
	insn, moved := s.insn, s.moved
	build = func(at uint64) []byte {
		b := append([]byte(nil), tscPrefix...)
		call := at + uint64(len(b)) + 5
		b = binary.LittleEndian.AppendUint32(append(b, 0xe8), uint32(int32(int64(entry)-int64(call))))
		b = append(b, code[:insn]...)
		from := insn
		for _, in := range moved {
			start := len(b)
			b = append(b, code[from:from+in.Len]...)
			if in.PCRel == 4 {
				// The operand's address, from the instruction's new end.
				target := int64(pc) + int64(from+in.Len) + int64(int32(binary.LittleEndian.Uint32(code[from+in.PCRelOff:])))
				rel := target - int64(at+uint64(start+in.Len))
				if rel < math.MinInt32 || rel > math.MaxInt32 {
					return nil
				}
				binary.LittleEndian.PutUint32(b[start+in.PCRelOff:], uint32(int32(rel)))
			}
			from += in.Len
		}
		return b
	}
	return s.n, build, true
}

// jumpsInto reports whether the code around a site (window, as tscStubOf's)
// may jump between the n bytes its jmp replaces: a jump decoded after
// them, or the bytes of a near jmp or jcc before them (or of a short one,
// in the 130 bytes it could jump from), whose target is inside them. An
// indirect jump, or one from farther, goes unseen: compilers emit none
// there (`--no-fast-io` patches no site).
func jumpsInto(window []byte, n int) bool {
	site := detcore.TSCSiteBefore
	into := func(target int) bool { return target > site && target < site+n }
	for i := 0; i < site; i++ {
		switch b := window[i]; {
		case i >= site-130 && (b == 0xeb || b >= 0x70 && b <= 0x7f) && into(i+2+int(int8(window[i+1]))):
			return true
		case b == 0xe9 && into(i+5+int(int32(binary.LittleEndian.Uint32(window[i+1:])))):
			return true
		case b == 0x0f && window[i+1] >= 0x80 && window[i+1] <= 0x8f && into(i+6+int(int32(binary.LittleEndian.Uint32(window[i+2:])))):
			return true
		}
	}
	for at := site + n; at < len(window); {
		in, err := x86asm.Decode(window[at:], 64)
		if err != nil {
			break // not code, or cut off by the window's end
		}
		for _, a := range in.Args {
			if r, ok := a.(x86asm.Rel); ok && into(at+in.Len+int(r)) {
				return true
			}
		}
		at += in.Len
	}
	return false
}

// movable reports whether a stub can make in at another address.
func movable(in *x86asm.Inst) bool {
	switch in.Op {
	case x86asm.CALL, x86asm.JMP, x86asm.RET, x86asm.LCALL, x86asm.LJMP, x86asm.LRET,
		x86asm.IRET, x86asm.IRETD, x86asm.IRETQ, x86asm.SYSCALL, x86asm.SYSENTER, x86asm.SYSRET,
		x86asm.SYSEXIT, x86asm.INT, x86asm.INTO, x86asm.UD1, x86asm.UD2, x86asm.HLT,
		x86asm.RDTSC, x86asm.RDTSCP, x86asm.CPUID, x86asm.XABORT, x86asm.XBEGIN, x86asm.XEND,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.JRCXZ, x86asm.JECXZ, x86asm.JCXZ:
		return false
	}
	if in.PCRel != 0 && in.PCRel != 4 {
		return false
	}
	for _, a := range in.Args {
		if a == nil {
			break
		}
		switch a := a.(type) {
		case x86asm.Rel:
			return false
		case x86asm.Reg:
			if a == x86asm.RIP {
				return false
			}
		case x86asm.Mem:
			if a.Base == x86asm.RIP && in.PCRel != 4 {
				return false
			}
		}
	}
	return true
}
