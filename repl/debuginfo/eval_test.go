package debuginfo

import (
	"strings"
	"testing"
)

// TestEvalGlobals evaluates print's expressions over the C fixture's
// globals, read from the file's data: fields, array elements, pointers
// followed and addresses taken, as gdb prints them.
func TestEvalGlobals(t *testing.T) {
	for _, variant := range []string{"O0-nopie", "static"} {
		t.Run(variant, func(t *testing.T) {
			s, bin, _ := spaceFor(t, variant)
			syms := nmSymbols(t, bin)
			mem := fileMem(s)
			for expr, want := range map[string]string{
				"rec.p":          "{x = 1, y = -2}",
				"rec.p.y":        "-2",
				"(rec).p.x":      "1",
				"rec.name[1]":    "98 'b'",
				"*rec.ptr":       "42",
				"rec.ptr[0]":     "42",
				"(&rec)->neg":    "-3",
				"&rec.p":         "(struct point *) 0x" + hex(syms["rec"]+8) + " <rec+8>",
				"rec.flags":      "5",
				"sarr[4]":        "5",
				"&sarr[1]":       "(int *) 0x" + hex(syms["sarr"]+4) + " <sarr+4>",
				"*msg":           "119 'w'",
				"msg[4]":         "100 'd'",
				"*&counter":      "42",
				"greeting [ 0 ]": "104 'h'",
			} {
				v, err := Eval(expr, s.Lookup, mem)
				if err != nil {
					t.Errorf("Eval(%q): %v", expr, err)
					continue
				}
				if got := s.Format(v, mem); got != want {
					t.Errorf("%s = %s, want %s", expr, got, want)
				}
			}
			for expr, want := range map[string]string{
				"sarr[5]":      "index 5 is outside sarr, of 5 elements",
				"counter.x":    "counter is not a struct",
				"*counter":     "counter is not a pointer",
				"rec.nope":     "has no field nope",
				"rec->":        "a field name must follow ->",
				"sarr[x]":      "the index must be a number",
				"(rec":         "missing )",
				"no_such_name": "no symbol",
				"&":            "the expression ends early",
				"rec.p q":      `unexpected "q"`,
			} {
				if _, err := Eval(expr, s.Lookup, mem); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Eval(%q): %v, want an error saying %q", expr, err, want)
				}
			}
		})
	}
}

// TestSplitPieces cuts location descriptions at DW_OP_piece: a Go
// string in two registers, a value on the stack, a malformed one.
func TestSplitPieces(t *testing.T) {
	two := splitPieces([]byte{0x50, opPiece, 8, 0x53, opPiece, 8})
	if len(two) != 2 || two[0].size != 8 || string(two[1].expr) != "\x53" {
		t.Errorf("rax, rbx in pieces: %+v", two)
	}
	one := splitPieces([]byte{opFbreg, 0x70})
	if len(one) != 1 || one[0].size != -1 || len(one[0].expr) != 2 {
		t.Errorf("fbreg -16: %+v", one)
	}
	if p := splitPieces([]byte{0xff}); p != nil {
		t.Errorf("an unknown operation: %+v, want nil", p)
	}
	if r, ok := regOp([]byte{opRegx, 0x11}); !ok || r != 17 {
		t.Errorf("regx 17: %d %v", r, ok)
	}
}
