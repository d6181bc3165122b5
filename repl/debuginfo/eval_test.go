package debuginfo

import (
	"errors"
	"fmt"
	"slices"
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
			checkEval(t, s, mem, map[string]string{
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
			}, map[string]string{
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
			})
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
	// A parameter gcc knows only as what the caller passed in rdx
	// (DW_OP_entry_value(DW_OP_reg1), DW_OP_stack_value): optimized out,
	// as gdb says, not a bad expression.
	var l locator
	for _, op := range []byte{opEntryValue, opGNUEntryValue} {
		if _, _, err := l.locate([]byte{op, 0x01, 0x51, 0x9f}, 8); err == nil || !strings.Contains(err.Error(), "(optimized out)") || errors.Is(err, errExpr) {
			t.Errorf("entry value %#x: %v, want optimized out", op, err)
		}
	}
}

// TestLocalsC reads the locals of the C fixture's frames from its dump:
// main calls a(3), a b(4), b c(5); c captured its registers and stack.
// At -O0 they are on the frames (DW_OP_fbreg); at -O2 parameters live in
// registers: b's x, which it needs after its call, in a callee-saved one,
// which c left alone or saved (the unwinder's registers of b's frame).
func TestLocalsC(t *testing.T) {
	for _, variant := range []string{"O0-nopie", "O0-pie", "O2-nopie"} {
		t.Run(variant, func(t *testing.T) {
			_, d, s := dumpSpace(t, variant, "plain")
			mem := regionsMem(d.stack)
			frames := s.Backtrace(d.regs, mem, 8)
			if len(frames) < 3 || frames[0].Func != "c" || frames[1].Func != "b" {
				t.Fatalf("frames %q, want c, b first", frameNames(frames))
			}
			inner := Scope{PC: frames[0].PC, CFA: frames[0].CFA, Regs: d.regs.All}
			if names := s.LocalNames(inner, mem); !slices.Equal(names, []string{"regs", "x"}) {
				t.Errorf("c's locals %q, want regs and x", names)
			}
			outer := Scope{PC: frames[1].PC - 1, CFA: frames[1].CFA, Outer: true, Regs: frames[1].Regs, Known: frames[1].Known}
			outer.Regs[regRSP] = frames[1].CFA
			if frames[1].Known&(1<<regRBP) == 0 {
				outer.Regs[regRBP] = frames[1].CFA - 16
			}
			for _, c := range []struct {
				sc         Scope
				name, want string
			}{{inner, "x", "5"}, {inner, "regs[7]", fmt.Sprint(d.regs.All[regRSP])}, {outer, "x", "4"}} {
				v, err := Eval(c.name, func(n string) (Var, error) { return s.Local(n, c.sc, mem) }, mem)
				switch {
				case err != nil:
					t.Errorf("%s: %v", c.name, err)
				default:
					if got := s.Format(v, mem); got != c.want {
						t.Errorf("%s = %s, want %s", c.name, got, c.want)
					}
				}
			}
			if _, err := s.Local("counter", inner, mem); !errors.Is(err, ErrNotFound) {
				t.Errorf("Local(counter), a global: %v, want ErrNotFound", err)
			}
		})
	}
}

// TestEvalArithmetic: conditions and print take C's integer operators,
// with C's precedence and signedness, over the fixture's globals and
// numbers; what is no integer, a division by zero and a dangling operator
// are errors that say so.
func TestEvalArithmetic(t *testing.T) {
	s, _, _ := spaceFor(t, "O0-nopie")
	mem := fileMem(s)
	checkEval(t, s, mem, map[string]string{
		"counter == 42":                "1",
		"counter != 42 || rec.p.y < 0": "1",
		"counter == 42 && rec.p.y > 0": "0",
		"rec.p.y * 3 + 1":              "-5",
		"sarr[4] % 3":                  "2",
		"-rec.neg":                     "3",
		"!counter":                     "0",
		"msg[4] == 100":                "1",
		"0x10 >> 2":                    "4",
		"(counter + 8) / 5":            "10",
		"counter & 0xf":                "10",
		"rec.ptr != 0":                 "1",
		"1 << 4 | 1":                   "17",
		"~0":                           "-1",
		"5 - 7 < 0":                    "1",
		"-1 < 1u":                      "0",
		"counter >= 42 == 1":           "1",
		"rec.p.x + rec.p.y * 2 ^ 1":    "-4",
	}, map[string]string{
		"rec.p + 1":   "is not an integer",
		"counter / 0": "division by zero",
		"counter ==":  "the expression ends early",
		"12ab":        `"12ab" is not a number`,
	})
	for expr, want := range map[string]bool{"counter == 42": true, "counter - 42": false, "rec.ptr": true} {
		v, err := Eval(expr, s.Lookup, mem)
		if err != nil {
			t.Fatalf("Eval(%q): %v", expr, err)
		}
		if got, err := Truth(v, mem); err != nil || got != want {
			t.Errorf("Truth(%s) = %v, %v; want %v", expr, got, err, want)
		}
	}
}

// checkEval checks that each expression of values prints as given, and
// that each of errs fails with an error that says what it gives.
func checkEval(t *testing.T, s *Space, mem Mem, values, errs map[string]string) {
	t.Helper()
	for expr, want := range values {
		v, err := Eval(expr, s.Lookup, mem)
		if err != nil {
			t.Errorf("Eval(%q): %v", expr, err)
			continue
		}
		if got := s.Format(v, mem); got != want {
			t.Errorf("%s = %s, want %s", expr, got, want)
		}
	}
	for expr, want := range errs {
		if _, err := Eval(expr, s.Lookup, mem); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Eval(%q): %v, want an error saying %q", expr, err, want)
		}
	}
}
