package debuginfo

import (
	"errors"
	"math/rand"
	"testing"
)

// ehEntry frames body as a 32-bit CFI entry.
func ehEntry(body []byte) []byte {
	for (len(body)+4)%8 != 0 {
		body = append(body, cfaNop)
	}
	return append(le.AppendUint32(nil, uint32(len(body))), body...)
}

// testCIE is an x86-64 CIE as gcc writes it: "zR", code 1, data -8, RA 16,
// FDE pointers pcrel|sdata4, initial CFA rsp+8 and RA at CFA-8.
func testCIE(initial ...byte) []byte {
	body := []byte{0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b}
	if initial == nil {
		initial = []byte{cfaDefCFA, 7, 8, cfaOffset | 16, 1}
	}
	return ehEntry(append(body, initial...))
}

// testEHFrame builds a .eh_frame at secAddr with one CIE and one FDE for
// [begin, begin+size) with the given instructions.
func testEHFrame(secAddr, begin, size uint64, insns ...byte) []byte {
	cie := testCIE()
	fdeStart := uint64(len(cie))
	body := le.AppendUint32(nil, uint32(fdeStart+4)) // CIE pointer: back to offset 0
	pcField := secAddr + fdeStart + 8
	body = le.AppendUint32(body, uint32(int32(begin-pcField)))
	body = le.AppendUint32(body, uint32(size))
	body = append(body, 0) // augmentation data length
	body = append(body, insns...)
	return append(append(cie, ehEntry(body)...), 0, 0, 0, 0)
}

// prologueInsns describe push %rbp; mov %rsp,%rbp; … ; a remembered
// state around an epilogue at 24, restored at 25.
var prologueInsns = []byte{
	cfaAdvanceLoc | 1, cfaDefCFAOffset, 16, cfaOffset | 6, 2,
	cfaAdvanceLoc | 3, cfaDefCFARegister, 6,
	cfaAdvanceLoc1, 20, cfaRememberState, cfaDefCFA, 7, 8,
	cfaAdvanceLoc | 1, cfaRestoreState,
}

// TestCFIRows interprets hand-built CIE/FDE bytes at several PCs.
func TestCFIRows(t *testing.T) {
	const sec, begin = 0x2000, 0x1000
	fdes, err := parseCFI(testEHFrame(sec, begin, 0x40, prologueInsns...), sec, true)
	if err != nil || len(fdes) != 1 {
		t.Fatalf("parseCFI: %d FDEs, %v", len(fdes), err)
	}
	f := fdes[0]
	if f.begin != begin || f.end != begin+0x40 {
		t.Fatalf("FDE [%#x,%#x)", f.begin, f.end)
	}
	cases := []struct {
		pc     uint64
		cfaReg uint64
		cfaOff int64
		rbp    rule
	}{
		{begin, 7, 8, rule{}},
		{begin + 1, 7, 16, rule{kind: ruleOffset, off: -16}},
		{begin + 3, 7, 16, rule{kind: ruleOffset, off: -16}},
		{begin + 4, 6, 16, rule{kind: ruleOffset, off: -16}},
		{begin + 23, 6, 16, rule{kind: ruleOffset, off: -16}},
		{begin + 24, 7, 8, rule{kind: ruleOffset, off: -16}},
		{begin + 25, 6, 16, rule{kind: ruleOffset, off: -16}},
		{begin + 0x3f, 6, 16, rule{kind: ruleOffset, off: -16}},
	}
	for _, c := range cases {
		r, err := rowAt(&f, c.pc)
		if err != nil {
			t.Errorf("pc %#x: %v", c.pc, err)
			continue
		}
		if r.cfaReg != c.cfaReg || r.cfaOff != c.cfaOff || r.cfaExpr != nil {
			t.Errorf("pc %#x: CFA r%d%+d, want r%d%+d", c.pc, r.cfaReg, r.cfaOff, c.cfaReg, c.cfaOff)
		}
		if r.regs[regRBP].kind != c.rbp.kind || r.regs[regRBP].off != c.rbp.off {
			t.Errorf("pc %#x: rbp rule %+v, want %+v", c.pc, r.regs[regRBP], c.rbp)
		}
		if ra := r.regs[regRA]; ra.kind != ruleOffset || ra.off != -8 {
			t.Errorf("pc %#x: RA rule %+v", c.pc, ra)
		}
	}

	// Apply the row after the prologue to a small stack.
	r, _ := rowAt(&f, begin+8)
	var regs regset
	regs.set(regRSP, 0x7f00)
	regs.set(regRBP, 0x8000)
	regs.set(3, 0x33)
	regs.set(0, 0xaa)
	stack := make([]byte, 16)
	le.PutUint64(stack[0:], 0x9000) // saved rbp
	le.PutUint64(stack[8:], 0x4242) // return address
	next, cfa, err := r.apply(&regs, regionsMem(region{0x8000, stack}))
	if err != nil {
		t.Fatal(err)
	}
	if cfa != 0x8010 || next.val[regRA] != 0x4242 || next.val[regRSP] != 0x8010 || next.val[regRBP] != 0x9000 {
		t.Errorf("caller: cfa %#x rip %#x rsp %#x rbp %#x", cfa, next.val[regRA], next.val[regRSP], next.val[regRBP])
	}
	if !next.known[3] || next.val[3] != 0x33 || next.known[0] {
		t.Errorf("callee-saved rbx %v/%#x, caller-saved rax known %v", next.known[3], next.val[3], next.known[0])
	}
}

// TestCFIRules covers the remaining rule kinds and the CFA expression of
// the PLT.
func TestCFIRules(t *testing.T) {
	const sec, begin = 0x2000, 0x1000
	// DW_CFA_def_cfa_expression of glibc/binutils .plt entries:
	// rsp+8 + ((rip&15) >= 11) << 3.
	pltExpr := []byte{0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}
	insns := append([]byte{cfaDefCFAExpression, byte(len(pltExpr))}, pltExpr...)
	insns = append(insns,
		cfaRegister, 3, 12, // rbx is in r12
		cfaSameValue, 13,
		cfaValOffset, 14, 2, // r14 = CFA-16
		cfaUndefined, 15,
		cfaExpression, 5, 2, 0x77, 0, // rdi saved at [rsp]
	)
	fdes, err := parseCFI(testEHFrame(sec, begin, 0x40, insns...), sec, true)
	if err != nil || len(fdes) != 1 {
		t.Fatalf("parseCFI: %d FDEs, %v", len(fdes), err)
	}
	r, err := rowAt(&fdes[0], begin+5)
	if err != nil {
		t.Fatal(err)
	}
	mem := regionsMem(region{0x100, le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 0x55), 0x66), 0x77)})
	for _, c := range []struct{ rip, cfa uint64 }{{0x4005, 0x108}, {0x400b, 0x110}, {0x400f, 0x110}} {
		var regs regset
		regs.set(regRSP, 0x100)
		regs.set(regRA, c.rip)
		regs.set(12, 0xc12)
		regs.set(13, 0xc13)
		regs.set(15, 0xc15)
		next, cfa, err := r.apply(&regs, mem)
		if err != nil {
			t.Fatalf("rip %#x: %v", c.rip, err)
		}
		if cfa != c.cfa {
			t.Errorf("rip %#x: CFA %#x, want %#x", c.rip, cfa, c.cfa)
		}
		if next.val[3] != 0xc12 || next.val[13] != 0xc13 || next.val[14] != cfa-16 || next.known[15] || next.val[5] != 0x55 {
			t.Errorf("rip %#x: rbx %#x r13 %#x r14 %#x r15 known %v rdi %#x", c.rip, next.val[3], next.val[13], next.val[14], next.known[15], next.val[5])
		}
	}
	// An undefined return address marks the outermost frame.
	fdes, _ = parseCFI(testEHFrame(sec, begin, 0x10, cfaUndefined, 16), sec, true)
	r, _ = rowAt(&fdes[0], begin)
	var regs regset
	regs.set(regRSP, 0x100)
	if _, _, err := r.apply(&regs, mem); !errors.Is(err, errUndefinedRA) {
		t.Errorf("undefined RA: %v", err)
	}
}

// TestDebugFrame parses a .debug_frame CIE (version 4, absolute addresses).
func TestDebugFrame(t *testing.T) {
	cie := ehEntry([]byte{0xff, 0xff, 0xff, 0xff, 4, 0, 8, 0, 1, 0x78, 16, cfaDefCFA, 7, 8, cfaOffset | 16, 1})
	body := le.AppendUint32(nil, 0) // CIE at offset 0
	body = le.AppendUint64(body, 0x401000)
	body = le.AppendUint64(body, 0x20)
	body = append(body, cfaAdvanceLoc|4, cfaDefCFAOffset, 16)
	data := append(cie, ehEntry(body)...)
	fdes, err := parseCFI(data, 0, false)
	if err != nil || len(fdes) != 1 || fdes[0].begin != 0x401000 || fdes[0].end != 0x401020 {
		t.Fatalf("fdes %+v, %v", fdes, err)
	}
	tab := &cfiTable{debug: fdes}
	f, ok := tab.find(0x401010)
	if !ok {
		t.Fatal("no FDE for 0x401010")
	}
	if r, err := rowAt(f, 0x401010); err != nil || r.cfaOff != 16 {
		t.Errorf("row %+v, %v", r, err)
	}
	if _, ok := tab.find(0x401020); ok {
		t.Errorf("FDE found past its end")
	}
}

// TestCFIMalformed feeds broken and random CFI and expressions: errors, no
// panics, no hangs.
func TestCFIMalformed(t *testing.T) {
	good := testEHFrame(0x2000, 0x1000, 0x40, prologueInsns...)
	for _, b := range [][]byte{
		nil,
		{1, 2, 3},
		{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0}, // 64-bit length past the end
		{0x10, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0}, // CIE version 9, truncated
		good[:len(good)/2],
	} {
		parseCFI(b, 0, true)
		parseCFI(b, 0, false)
	}
	fdes, _ := parseCFI(testEHFrame(0, 0x1000, 0x40, 0x3d), 0, true) // unknown opcode
	if _, err := rowAt(&fdes[0], 0x1010); err == nil {
		t.Errorf("unknown opcode accepted")
	}
	fdes, _ = parseCFI(testEHFrame(0, 0x1000, 0x40, cfaRestoreState), 0, true)
	if _, err := rowAt(&fdes[0], 0x1010); err == nil {
		t.Errorf("restore_state on an empty stack accepted")
	}
	var regs regset
	for i := range regs.val {
		regs.set(i, uint64(i)*0x100)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		b := make([]byte, rng.Intn(64))
		rng.Read(b)
		if i%2 == 0 && len(b) > 16 {
			copy(b, good[:16])
		}
		if fs, _ := parseCFI(b, 0, i%3 == 0); len(fs) > 0 {
			if r, err := rowAt(&fs[0], fs[0].begin+uint64(rng.Intn(64))); err == nil {
				r.apply(&regs, regionsMem(region{0, make([]byte, 4096)}))
			}
		}
		f := fde{begin: 0, end: 100, cie: &cie{codeAlign: 1, dataAlign: -8, initial: b[:len(b)/2]}, insns: b[len(b)/2:]}
		if r, err := rowAt(&f, uint64(rng.Intn(100))); err == nil {
			r.apply(&regs, regionsMem(region{0, make([]byte, 4096)}))
		}
		evalExpr(b, &regs, regionsMem(region{0, make([]byte, 4096)}), []uint64{8})
	}
	// A branch back to itself must end at the operation cap.
	if _, err := evalExpr([]byte{0x2f, 0xfd, 0xff}, &regs, nil, nil); err == nil {
		t.Errorf("infinite skip loop accepted")
	}
}

// FuzzCFI checks that no CFI input panics.
func FuzzCFI(f *testing.F) {
	f.Add(testEHFrame(0x2000, 0x1000, 0x40, prologueInsns...), uint16(8))
	f.Fuzz(func(t *testing.T, b []byte, pc uint16) {
		fs, _ := parseCFI(b, 0x2000, true)
		for i := range fs {
			if r, err := rowAt(&fs[i], fs[i].begin+uint64(pc)); err == nil {
				var regs regset
				regs.set(regRSP, 0x100)
				r.apply(&regs, regionsMem(region{0, make([]byte, 512)}))
			}
		}
	})
}
