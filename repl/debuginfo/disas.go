package debuginfo

import (
	"debug/elf"
	"fmt"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// Inst is one disassembled instruction.
type Inst struct {
	Addr  uint64
	Bytes []byte
	Text  string // GNU/AT&T syntax as gdb prints it: "call   0x401126 <add>"; "(bad)" if undecodable
}

// Caps on disassembly.
const (
	maxInsts    = 4096
	maxInstLen  = 15
	maxCodeRead = maxInsts * maxInstLen
)

// Disassemble decodes n instructions (1 if n <= 0, at most 4096) from pc.
// Code is read through mem; where mem stops short, the bytes come from the
// module's file. An undecodable byte becomes a one-byte "(bad)". The REPL
// should hand a mem that shows the original bytes under breakpoints.
// Relative branch targets are annotated with <sym+off>, RIP-relative
// operands with a "# 0xaddr <sym>" comment, as gdb does.
func (s *Space) Disassemble(mem Mem, pc uint64, n int) []Inst {
	if n <= 0 {
		n = 1
	}
	if n > maxInsts {
		n = maxInsts
	}
	code := s.readCode(mem, pc, n*maxInstLen)
	var out []Inst
	off := 0
	for len(out) < n && off < len(code) {
		addr := pc + uint64(off)
		inst, err := decode(code[off:])
		if err != nil || inst.Len == 0 {
			out = append(out, Inst{Addr: addr, Bytes: code[off : off+1], Text: "(bad)"})
			off++
			continue
		}
		out = append(out, Inst{Addr: addr, Bytes: code[off : off+inst.Len], Text: s.gnuText(inst, addr, mem)})
		off += inst.Len
	}
	return out
}

// decode decodes one instruction; x86asm can panic on some byte
// sequences (AVX prefixes at the end of the input), which becomes an error.
func decode(b []byte) (inst x86asm.Inst, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("x86asm: %v", p)
		}
	}()
	return x86asm.Decode(b, 64)
}

// readCode reads up to size bytes of code at addr from mem, completing a
// short read from the file that maps addr.
func (s *Space) readCode(mem Mem, addr uint64, size int) []byte {
	if size > maxCodeRead {
		size = maxCodeRead
	}
	buf := make([]byte, size)
	got := 0
	if mem != nil {
		got, _ = mem(addr, buf)
		if got < 0 || got > size {
			got = 0
		}
	}
	if got < size {
		got += copy(buf[got:], s.fileBytes(addr+uint64(got), size-got))
	}
	return buf[:got]
}

// fileBytes reads up to n bytes at run-time address addr from the file of
// the module mapped there, as the loader set them up: a segment's bytes past
// its file size read as zero.
func (s *Space) fileBytes(addr uint64, n int) []byte {
	mod, _, _ := s.moduleAt(addr, nil)
	if mod == nil || n <= 0 {
		return nil
	}
	link := addr - mod.bias
	for _, p := range mod.f.Progs {
		if p.Type != elf.PT_LOAD || link < p.Vaddr || link-p.Vaddr >= p.Memsz {
			continue
		}
		if rest := p.Memsz - (link - p.Vaddr); uint64(n) > rest {
			n = int(rest)
		}
		b := make([]byte, n)
		if off := link - p.Vaddr; off < p.Filesz {
			p.ReadAt(b[:min(uint64(n), p.Filesz-off)], int64(off))
		}
		return b
	}
	return nil
}

// gnuText formats inst in AT&T syntax with gdb's column layout and annotations.
func (s *Space) gnuText(inst x86asm.Inst, addr uint64, mem Mem) string {
	ripZero := false
	for i, a := range inst.Args {
		if m, ok := a.(x86asm.Mem); ok {
			// x86asm keeps a disp32 zero-extended; in 64-bit mode it is signed.
			if m.Disp >= 1<<31 && m.Disp < 1<<32 {
				m.Disp = int64(int32(m.Disp))
				inst.Args[i] = m
			}
			ripZero = ripZero || (m.Base == x86asm.RIP && m.Disp == 0)
		}
	}
	text := x86asm.GNUSyntax(inst, addr, nil)
	if ripZero {
		text = strings.Replace(text, "(%rip)", "0x0(%rip)", 1)
	}
	if inst.Op == x86asm.NOP {
		// Padding "66 2e 0f 1f 84 00 …": binutils writes the prefix and the zero displacement.
		for _, w := range []string{"nopw", "nopl"} {
			if rest, ok := strings.CutPrefix(text, w+" %cs:("); ok {
				text = "cs " + w + " 0x0(" + strings.TrimSuffix(rest, ")") + ",1)"
			}
		}
	}
	words := strings.Split(text, " ")
	i := 0
	for i < len(words) && !isOperand(words[i]) {
		i++
	}
	for j := range words[:i] {
		if w, ok := binutilsNames[words[j]]; ok {
			words[j] = w
		}
	}
	mnem, ops := strings.Join(words[:i], " "), strings.Join(words[i:], " ")
	if ops != "" {
		text = fmt.Sprintf("%-6s %s", mnem, ops)
	} else {
		text = mnem
	}
	next := addr + uint64(inst.Len)
	for _, a := range inst.Args {
		switch a := a.(type) {
		case x86asm.Rel:
			if name := s.symbolName(next+uint64(int64(a)), mem); name != "" {
				text += " <" + name + ">"
			}
		case x86asm.Mem:
			if a.Base == x86asm.RIP && a.Index == 0 {
				target := next + uint64(a.Disp)
				text += fmt.Sprintf("        # %#x", target)
				if name := s.symbolName(target, mem); name != "" {
					text += " <" + name + ">"
				}
			}
		}
	}
	return text
}

// binutilsNames maps x86asm's GNU mnemonics to those current binutils
// (and so gdb) print.
var binutilsNames = map[string]string{
	"callq":  "call",
	"retq":   "ret",
	"leaveq": "leave",
	"movsxd": "movslq",
	"cdqe":   "cltq",
	"cqo":    "cqto",
	"cdq":    "cltd",
	"cwde":   "cwtl",
	"cbw":    "cbtw",
	"cwd":    "cwtd",
	"pushq":  "push",
	"popq":   "pop",
	"jmpq":   "jmp",
}

// isOperand reports whether a word of GNU syntax begins the operands.
func isOperand(w string) bool {
	if w == "" {
		return false
	}
	switch w[0] {
	case '%', '$', '*', '(', '-', '.', '{':
		return true
	}
	return w[0] >= '0' && w[0] <= '9' || strings.ContainsAny(w, "(%,:")
}
