package debuginfo

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pieBase is where the tests pretend a PIE is mapped.
const pieBase = 0x555555554000

// spaceFor maps bin as the kernel would (PIE at pieBase) and returns the
// space and the bias.
func spaceFor(t *testing.T, variant string) (*Space, string, uint64) {
	t.Helper()
	bin := cFixture(t, variant)
	base := uint64(0)
	if strings.Contains(variant, "pie") && !strings.Contains(variant, "nopie") {
		base = pieBase
	}
	return NewSpace(fakeMaps(t, bin, base), hostOpen), bin, base
}

// TestSymbolAndLines checks function names against nm and lines against
// addr2line for every fourth byte of a, b, c and main.
func TestSymbolAndLines(t *testing.T) {
	a2l, err := exec.LookPath("addr2line")
	if err != nil {
		skipf(t, "no addr2line in PATH")
	}
	for _, variant := range []string{"O0-pie", "O2-pie", "O0-nopie", "O2-nopie", "static"} {
		t.Run(variant, func(t *testing.T) {
			s, bin, bias := spaceFor(t, variant)
			syms, sizes := nmSized(t, bin)
			var addrs []uint64
			var fns []string
			for _, fn := range []string{"a", "b", "c", "main", "handler"} {
				start, ok := syms[fn]
				if !ok {
					t.Fatalf("nm has no %s", fn)
				}
				loc, ok := s.Symbol(start + bias)
				if !ok || loc.Func != fn || loc.Off != 0 || loc.Module != bin {
					t.Errorf("Symbol(%s) = %+v, %v", fn, loc, ok)
				}
				for off := uint64(0); off < sizes[fn]; off += 3 {
					addrs = append(addrs, start+off)
					fns = append(fns, fn)
				}
			}
			args := []string{"-f", "-e", bin}
			for _, a := range addrs {
				args = append(args, fmt.Sprintf("%#x", a))
			}
			out, err := exec.Command(a2l, args...).Output()
			if err != nil {
				t.Fatalf("addr2line: %v", err)
			}
			ls := lines(out)
			if len(ls) != 2*len(addrs) {
				t.Fatalf("addr2line gave %d lines for %d addresses", len(ls), len(addrs))
			}
			for i, a := range addrs {
				fn, fl := ls[2*i], ls[2*i+1]
				fl, _, _ = strings.Cut(fl, " ")
				file, line, _ := strings.Cut(fl, ":")
				want, _ := strconv.Atoi(line)
				loc, _ := s.Symbol(a + bias)
				if loc.Func != fns[i] && fn == fns[i] {
					t.Errorf("%#x: func %q, want %q", a, loc.Func, fns[i])
				}
				if loc.File != file || loc.Line != want {
					t.Errorf("%#x (%s+%d): %s:%d, addr2line says %s:%d", a, fns[i], a-syms[fns[i]], loc.File, loc.Line, file, want)
				}
			}
		})
	}
}

// TestSymbolCaller: a return address is named for the call before it,
// also when it lies past the end of the calling function (a noreturn
// call is the function's last instruction, and the return address is
// the next function's first byte: bt named that one).
func TestSymbolCaller(t *testing.T) {
	s, bin, bias := spaceFor(t, "O0-nopie")
	syms, sizes := nmSized(t, bin)
	for _, fn := range []string{"a", "b", "c", "main"} {
		end := syms[fn] + sizes[fn]
		loc, ok := s.symbol(end+bias, nil, true)
		if !ok || loc.Func != fn || loc.Off != sizes[fn] {
			t.Errorf("a return address at the end of %s (%#x): %+v, %v; want %s+%d", fn, end, loc, ok, fn, sizes[fn])
		}
		if loc, _ := s.symbol(syms[fn]+bias, nil, false); loc.Func != fn || loc.Off != 0 {
			t.Errorf("%s's first instruction: %+v", fn, loc)
		}
	}
}

// TestSymbolGo checks Go function names and lines in a Go binary.
func TestSymbolGo(t *testing.T) {
	bin := goFixture(t)
	s := NewSpace(fakeMaps(t, bin, 0), hostOpen)
	syms := nmSymbols(t, bin)
	for _, fn := range []string{"main.a", "main.b", "main.c", "main.main", "runtime.main"} {
		loc, ok := s.Symbol(syms[fn] + 5)
		if !ok || loc.Func != fn || loc.Off != 5 || loc.Line == 0 || !strings.HasSuffix(loc.File, ".go") {
			t.Errorf("Symbol(%s+5) = %+v, %v", fn, loc, ok)
		}
	}
	v, err := s.Lookup("main.Counter")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Format(v, fileMem(s)); got != "7" {
		t.Errorf("main.Counter = %s, want 7", got)
	}
}

// TestSymbolMemoryOnly checks mappings without a file and unmapped PCs.
func TestSymbolMemoryOnly(t *testing.T) {
	s := NewSpace(ParseMaps("7ffd000-7ffe000 r-xp 00000000 00:00 0 [vdso]\n7ffe000-7fff000 rw-p 00000000 00:00 0 [stack]\n"), hostOpen)
	if loc, ok := s.Symbol(0x7ffd010); !ok || loc.Module != "[vdso]" || loc.Func != "" {
		t.Errorf("vdso: %+v %v", loc, ok)
	}
	if _, ok := s.Symbol(0x1000); ok {
		t.Errorf("unmapped pc reported as known")
	}
	s = NewSpace(ParseMaps("400000-401000 r-xp 00000000 00:00 0 /nonexistent/file\n"), hostOpen)
	if loc, ok := s.Symbol(0x400010); !ok || loc.Module != "/nonexistent/file" {
		t.Errorf("missing file: %+v %v", loc, ok)
	}
	if err := s.Err("/nonexistent/file"); err == nil || !strings.Contains(err.Error(), "/nonexistent/file") {
		t.Errorf("Err = %v, want one naming the file", err)
	}
}

// TestVDSO reads this test process's own vdso through Mem (from
// /proc/self/mem) and names its functions.
func TestVDSO(t *testing.T) {
	text, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		skipf(t, "no /proc/self/maps: %v", err)
	}
	f, err := os.Open("/proc/self/mem")
	if err != nil {
		skipf(t, "no /proc/self/mem: %v", err)
	}
	defer f.Close()
	mem := func(addr uint64, b []byte) (int, error) { return f.ReadAt(b, int64(addr)) }
	s := NewSpace(ParseMaps(string(text)), hostOpen)
	var vdso Mapping
	for _, m := range s.maps {
		if m.Path == "[vdso]" {
			vdso = m
		}
	}
	if vdso.Start == 0 {
		skipf(t, "no [vdso] mapping")
	}
	if loc, ok := s.Symbol(vdso.Start + 0x10); !ok || loc.Module != "[vdso]" || loc.Func != "" {
		t.Errorf("vdso pc before loading: %+v %v", loc, ok)
	}
	mod, _, _ := s.moduleAt(vdso.Start, mem)
	if mod == nil {
		t.Fatalf("vdso not loaded: %v", s.Err("[vdso]"))
	}
	mod.init()
	if len(mod.elfFuncs) == 0 {
		t.Fatal("vdso has no function symbols")
	}
	fn := mod.elfFuncs[len(mod.elfFuncs)-1]
	loc, ok := s.Symbol(fn.addr + mod.bias + 1)
	if !ok || loc.Func != fn.name || loc.Off != 1 || loc.Module != "[vdso]" {
		t.Errorf("Symbol in vdso: %+v, want %s+1", loc, fn.name)
	}
	if insts := s.Disassemble(mem, fn.addr+mod.bias, 3); len(insts) != 3 || insts[0].Text == "(bad)" {
		t.Errorf("vdso disassembly %+v", insts)
	}
}

var symOff = regexp.MustCompile(`\+0x[0-9a-f]+>`)

var objdumpLine = regexp.MustCompile(`^\s*([0-9a-f]+):\t(.*)$`)

// TestDisassemble compares instruction boundaries and mnemonics with
// objdump -d over a, b, c, main and handler, and most operand texts exactly.
func TestDisassemble(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		skipf(t, "no objdump in PATH")
	}
	for _, variant := range []string{"O0-nopie", "O2-pie"} {
		t.Run(variant, func(t *testing.T) {
			// Map the file at its link-time addresses so that objdump's
			// addresses are ours.
			bin := cFixture(t, variant)
			s, bias := NewSpace(fakeMaps(t, bin, 0), hostOpen), uint64(0)
			out, err := exec.Command(objdump, "-d", "--no-show-raw-insn", bin).Output()
			if err != nil {
				t.Fatalf("objdump: %v", err)
			}
			want := map[uint64]string{}
			for _, l := range lines(out) {
				if m := objdumpLine.FindStringSubmatch(l); m != nil {
					a, _ := strconv.ParseUint(m[1], 16, 64)
					want[a] = m[2]
				}
			}
			syms := nmSymbols(t, bin)
			total, same := 0, 0
			for _, fn := range []string{"a", "b", "c", "main", "handler"} {
				mod, _, _ := s.moduleAt(syms[fn]+bias, nil)
				_, start, _ := mod.funcAt(syms[fn])
				size := uint64(0)
				for _, f := range mod.funcs {
					if f.addr == start {
						size = f.size
					}
				}
				insts := s.Disassemble(nil, syms[fn]+bias, 1000)
				for _, in := range insts {
					link := in.Addr - bias
					if link >= start+size {
						break
					}
					w, ok := want[link]
					if !ok {
						t.Errorf("%s: %#x is not an instruction boundary for objdump (%s)", fn, link, in.Text)
						break
					}
					total++
					if mnemonic(in.Text) != mnemonic(w) {
						t.Errorf("%s %#x: %q, objdump %q", fn, link, in.Text, w)
					}
					if normalize(in.Text) == normalize(w) {
						same++
					} else {
						t.Logf("%s %#x: %q, objdump %q", fn, link, in.Text, w)
					}
				}
			}
			if total == 0 || same*100 < total*95 {
				t.Errorf("only %d of %d instructions match objdump exactly", same, total)
			}
		})
	}
}

// mnemonic returns the first word of an instruction text (objdump writes
// "bnd jmp" and "notrack jmp" with prefixes: keep those).
func mnemonic(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// normalize maps gdb-style text and objdump text to one form: no "0x" on
// branch targets, single spaces, comments' addresses unprefixed.
func normalize(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = regexp.MustCompile(`(j[a-z]+|call|jmp) 0x`).ReplaceAllString(s, "$1 ")
	s = strings.ReplaceAll(s, "# 0x", "# ")
	// objdump writes <sym+0x2a>, gdb <sym+42>.
	return symOff.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.ParseUint(m[3:len(m)-1], 16, 64)
		return fmt.Sprintf("+%d>", n)
	})
}
