package ptrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"golang.org/x/arch/x86/x86asm"
)

// tscStub decides and makes the stub of the site at pc, as TSCSite does
// without a Tracer's shapes.
func tscStub(pc uint64, window []byte, copyAt uint64) (int, func(at uint64) []byte, bool) {
	return tscStubOf(tscShapeOf(window), pc, window, copyAt)
}

// disasm decodes b, at address at, into one instruction a line.
func disasm(t *testing.T, b []byte, at uint64) []string {
	t.Helper()
	var out []string
	for off := 0; off < len(b); {
		in, err := x86asm.Decode(b[off:], 64)
		if err != nil {
			t.Fatalf("stub at %#x+%d does not decode: %v (% x)", at, off, err, b)
		}
		out = append(out, x86asm.IntelSyntax(in, at+uint64(off), nil))
		off += in.Len
	}
	return out
}

func TestTSCStub(t *testing.T) {
	const pc = 0x7ffff7fc0000 + 0x1b7ab
	const at = fioBase + fioSlowOff + 0x40
	// window lays out code at the site's place in a window of nops.
	window := func(code []byte, before ...byte) []byte {
		w := bytes.Repeat([]byte{0x90}, detcore.TSCSiteBefore+detcore.TSCSiteAfter)
		copy(w[detcore.TSCSiteBefore-len(before):], before)
		copy(w[detcore.TSCSiteBefore:], code)
		return w
	}
	call := func(entry uint64) string { return fmt.Sprintf("call %#x", fioFast+entry) }
	cases := []struct {
		name   string
		code   []byte
		before []byte // just before it
		n      int
		want   []string // the stub's instructions, without its jmp back
	}{
		{
			// glibc 2.36's ld.so: the andb's operand is rip-relative, so
			// the stub's copy reaches the same byte.
			name: "rdtsc, rip-relative andb",
			code: []byte{0x0f, 0x31, 0x80, 0x25, 0x52, 0x86, 0x01, 0x00, 0xdf},
			n:    9,
			want: []string{"lea rsp, ptr [rsp-0x80]", call(fioTSC), "rdtsc", fmt.Sprintf("and byte ptr [rip+%#x], 0xdf", pc+9+0x18652-(at+19))},
		},
		{
			name: "rdtsc, shl",
			code: []byte{0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20},
			n:    6,
			want: []string{"lea rsp, ptr [rsp-0x80]", call(fioTSC), "rdtsc", "shl rdx, 0x20"},
		},
		{
			name: "rdtscp, two moves",
			code: []byte{0x0f, 0x01, 0xf9, 0x41, 0x89, 0x09, 0x48, 0xc1, 0xe2, 0x20},
			n:    6,
			want: []string{"lea rsp, ptr [rsp-0x80]", call(fioTSCP), "rdtscp", "mov dword ptr [r9], ecx"},
		},
		{
			name: "rdtsc, xor, mov",
			code: []byte{0x0f, 0x31, 0x31, 0xc9, 0x49, 0x89, 0xc1},
			n:    7,
			want: []string{"lea rsp, ptr [rsp-0x80]", call(fioTSC), "rdtsc", "xor ecx, ecx", "mov r9, rax"},
		},
		{name: "rdtsc, jmp", code: []byte{0x0f, 0x31, 0xeb, 0x00, 0x90, 0x90}},
		{name: "rdtsc, jne", code: []byte{0x0f, 0x31, 0x75, 0x10, 0x90, 0x90}},
		{name: "rdtsc, call", code: []byte{0x0f, 0x31, 0xe8, 0, 0, 0, 0}},
		{name: "rdtsc, ret", code: []byte{0x0f, 0x31, 0xc3, 0x90, 0x90}},
		{name: "rdtsc, rdtsc", code: []byte{0x0f, 0x31, 0x0f, 0x31, 0x90}},
		{name: "rdtsc, syscall", code: []byte{0x0f, 0x31, 0x0f, 0x05, 0x90}},
		{name: "rdtsc, lea of rip-relative", code: []byte{0x0f, 0x31, 0x48, 0x8d, 0x05, 0, 0, 0, 0}, n: 9,
			want: []string{"lea rsp, ptr [rsp-0x80]", call(fioTSC), "rdtsc", fmt.Sprintf("lea rax, ptr [rip+%#x]", pc+9-(at+19))}},
		{name: "no rdtsc", code: []byte{0x0f, 0x05, 0x90, 0x90, 0x90, 0x90}},
		// Go's runtime.cputicks: its other path jumps to the shl.
		{name: "a jmp after it into the moved shl", code: []byte{
			0x0f, 0x01, 0xf9, 0x48, 0xc1, 0xe2, 0x20, 0x48, 0x01, 0xd0, 0x48, 0x89, 0x44, 0x24, 0x08, 0xc3,
			0x0f, 0xae, 0xf0, 0x0f, 0xae, 0xe8, 0x0f, 0x31, 0xeb, 0xe9}},
		{name: "a jmp far after it into the moved shl", code: append(append([]byte{0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20, 0xc3},
			bytes.Repeat([]byte{0x90}, 50)...), 0xe9, 0xc7, 0xff, 0xff, 0xff)}, // to +2
		{name: "a jcc before it into the moved shl", before: []byte{0x75, 0x04}, code: []byte{0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20}},
		{name: "a jcc before it to it", before: []byte{0x75, 0x00}, code: []byte{0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20}, n: 6,
			want: []string{"lea rsp, ptr [rsp-0x80]", call(fioTSC), "rdtsc", "shl rdx, 0x20"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, build, ok := tscStub(pc, window(c.code, c.before...), fioFast)
			if ok != (c.want != nil) || n != c.n {
				t.Fatalf("tscStub: %d bytes, ok %v; want %d, %v", n, ok, c.n, c.want != nil)
			}
			if !ok {
				return
			}
			got := disasm(t, build(at), at)
			if len(got) != len(c.want) {
				t.Fatalf("stub:\n%q\nwant\n%q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("stub instruction %d: %q, want %q", i, got[i], c.want[i])
				}
			}
		})
	}
	// The andb's target is the same from the stub as from the site.
	andb := window([]byte{0x0f, 0x31, 0x80, 0x25, 0x52, 0x86, 0x01, 0x00, 0xdf})
	_, build, _ := tscStub(pc, andb, fioFast)
	b := build(at)
	target := int64(at) + int64(len(b)) + int64(int32(binary.LittleEndian.Uint32(b[14:])))
	if want := int64(pc) + 9 + 0x18652; target != want {
		t.Errorf("the moved andb reaches %#x, want %#x", target, want)
	}
	// Out of reach: nothing.
	if _, build, _ := tscStub(pc, andb, fioFast); build(0x1000) != nil {
		t.Error("a stub whose moved operand is out of reach was made")
	}
}

// TestTSCSiteReach: a site reaches the copy of the code near it, and
// its stubs, and no other; TSCSite takes the copy near an executable for
// its sites and patches them with a jmp and nops.
func TestTSCSiteReach(t *testing.T) {
	const exe = 0x555555554000
	near := uint64(exe - fioCodeSize)
	mem := make([]byte, fioSize)
	tr := &Tracer{}
	fw := tr.fastWrites(mem, near)
	code := bytes.Repeat([]byte{0x90}, detcore.TSCSiteBefore+detcore.TSCSiteAfter)
	copy(code[detcore.TSCSiteBefore:], []byte{0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20})
	for _, c := range []struct {
		pc   uint64
		copy uint64
	}{
		{0x7ffff7fc1000, fioFast},
		{exe + 0x1068, near},
		{0x400000, 0}, // neither
	} {
		at, patch, ok := fw.TSCSite(c.pc, code)
		if ok != (c.copy != 0) {
			t.Errorf("site %#x: ok %v", c.pc, ok)
			continue
		}
		if !ok {
			continue
		}
		if at != c.pc || len(patch) != 6 || patch[0] != 0xe9 || patch[5] != 0x90 {
			t.Errorf("site %#x: patch % x at %#x; want a jmp and a nop at the site", c.pc, patch, at)
			continue
		}
		stub := c.pc + 5 + uint64(int64(int32(binary.LittleEndian.Uint32(patch[1:]))))
		if stub < c.copy+fioCodeSize/2 || stub >= c.copy+fioCodeSize {
			t.Errorf("site %#x: stub at %#x, not in the slow page of the copy at %#x", c.pc, stub, c.copy)
		}
		// The stub's bytes are in the memfd, at its offset in the copy.
		off := fioCodeOff + stub - c.copy
		if !bytes.HasPrefix(mem[off:], tscPrefix) {
			t.Errorf("site %#x: the memfd has % x at the stub's place", c.pc, mem[off:off+8])
		}
		// It ends with a jmp back to the site's next instruction.
		last := disasm(t, mem[off:off+32], stub)
		if want := fmt.Sprintf("jmp %#x", c.pc+6); !slices.Contains(last, want) {
			t.Errorf("site %#x: stub %q has no %q", c.pc, last, want)
		}
	}
}
