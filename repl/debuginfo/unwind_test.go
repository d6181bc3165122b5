package debuginfo

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// frameNames lists the function names of frames.
func frameNames(fs []Frame) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Func)
	}
	return out
}

// hasSubsequence reports whether want appears in got in order (not
// necessarily adjacent) starting at got[0] == want[0].
func hasSubsequence(got, want []string) bool {
	if len(want) == 0 {
		return true
	}
	if len(got) == 0 || got[0] != want[0] {
		return false
	}
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestBacktraceC unwinds the stacks the C fixture dumped from c(), in
// each build variant, and checks c→b→a→main, the lines against
// addr2line, and that the walk ends by itself at _start.
func TestBacktraceC(t *testing.T) {
	for _, variant := range []string{"O0-pie", "O2-pie", "O0-nopie", "O2-nopie", "static", "debugframe", "nocfi"} {
		t.Run(variant, func(t *testing.T) {
			bin, d, s := dumpSpace(t, variant, "plain")
			frames := s.Backtrace(d.regs, regionsMem(d.stack), 64)
			names := frameNames(frames)
			if len(names) < 4 || !slices.Equal(names[:4], []string{"c", "b", "a", "main"}) {
				t.Fatalf("frames %q, want c, b, a, main first", names)
			}
			if len(frames) >= 64 {
				t.Errorf("walk did not stop: %d frames %q", len(frames), names)
			}
			if last := names[len(names)-1]; last != "_start" {
				t.Errorf("outermost frame %q, want _start (all: %q)", last, names)
			}
			for i, f := range frames[:4] {
				if f.Module != bin {
					t.Errorf("frame %d module %q, want %q", i, f.Module, bin)
				}
				if f.CFA <= d.regs.All[regRSP] {
					t.Errorf("frame %d CFA %#x not above rsp %#x", i, f.CFA, d.regs.All[regRSP])
				}
			}
			if variant == "nocfi" {
				for i, f := range frames[:3] {
					if f.via != "fp" {
						t.Errorf("frame %d (%s) unwound by %s, want fp", i, f.Func, f.via)
					}
				}
				return // no DWARF: no lines
			}
			if frames[0].via != "cfi" {
				t.Errorf("frame 0 unwound by %s, want cfi", frames[0].via)
			}
			if variant == "debugframe" {
				mod, _, _ := s.moduleAt(frames[0].PC, nil)
				if len(mod.cfiFor().debug) == 0 {
					t.Errorf("%s has no .debug_frame FDEs", bin)
				}
			}
			checkLines(t, s, bin, frames[:4])
		})
	}
}

// checkLines compares the frames' lines with addr2line on the PC (innermost)
// or PC-1 (callers).
func checkLines(t *testing.T, s *Space, bin string, frames []Frame) {
	t.Helper()
	a2l, err := exec.LookPath("addr2line")
	if err != nil {
		t.Log("no addr2line: lines unchecked")
		return
	}
	args := []string{"-e", bin}
	for i, f := range frames {
		mod, _, _ := s.moduleAt(f.PC, nil)
		pc := f.PC - mod.bias
		if i > 0 {
			pc--
		}
		args = append(args, fmt.Sprintf("%#x", pc))
	}
	out, err := exec.Command(a2l, args...).Output()
	if err != nil {
		t.Fatalf("addr2line: %v", err)
	}
	for i, l := range lines(out) {
		if i >= len(frames) {
			break
		}
		l, _, _ = strings.Cut(l, " ")
		file, line, _ := strings.Cut(l, ":")
		want, _ := strconv.Atoi(line)
		if got := frames[i]; got.Line != want || got.File != file {
			t.Errorf("frame %d (%s): %s:%d, addr2line says %s:%d", i, got.Func, got.File, got.Line, file, want)
		}
	}
}

// TestBacktraceSignal unwinds from a SIGUSR1 handler through glibc's
// signal trampoline (a CFA expression and 'S' augmentation) back to main.
func TestBacktraceSignal(t *testing.T) {
	for _, variant := range []string{"O0-pie", "O2-nopie", "static"} {
		t.Run(variant, func(t *testing.T) {
			_, d, s := dumpSpace(t, variant, "signal")
			frames := s.Backtrace(d.regs, regionsMem(d.stack), 64)
			names := frameNames(frames)
			if !hasSubsequence(names, []string{"handler", "c", "b", "a", "main"}) {
				t.Fatalf("frames %q, want handler … c, b, a, main", names)
			}
			i := slices.Index(names, "c")
			if i < 2 {
				t.Fatalf("no frame between handler and c: %q", names)
			}
			if names[1] != "<signal handler called>" && names[1] != "__restore_rt" {
				t.Errorf("frame 1 %q, want the signal trampoline", names[1])
			}
			// The frame of c was interrupted, not calling: its PC is exact,
			// so its line comes from the PC itself (the kill call's line).
			if frames[i].Line == 0 || !strings.HasSuffix(frames[i].File, "prog.c") {
				t.Errorf("frame c at %s:%d", frames[i].File, frames[i].Line)
			}
		})
	}
}

// TestBacktraceFramePointers unwinds the -O0 build with CFI disabled: the
// rbp chain alone must find c→b→a→main.
func TestBacktraceFramePointers(t *testing.T) {
	bin := cFixture(t, "O0-pie")
	d := runCDump(t, bin, "plain")
	s := NewSpace(ParseMaps(d.maps), hostOpen)
	s.noCFI = true
	frames := s.Backtrace(d.regs, regionsMem(d.stack), 64)
	names := frameNames(frames)
	if len(names) < 4 || !slices.Equal(names[:4], []string{"c", "b", "a", "main"}) {
		t.Fatalf("frames %q, want c, b, a, main first", names)
	}
	if len(frames) >= 64 {
		t.Errorf("walk did not stop: %q", names)
	}
}

// TestBacktraceGo unwinds the Go fixture's stack with .debug_frame and
// then with frame pointers only, comparing with runtime.Callers.
func TestBacktraceGo(t *testing.T) {
	bin := goFixture(t)
	d := runGoDump(t, bin)
	want := d.oracle
	if len(want) > 5 {
		want = want[:5] // main.c, main.b, main.a, main.main, runtime.main
	}
	if len(want) < 4 || want[0] != "main.c" {
		t.Fatalf("oracle %q", d.oracle)
	}
	for _, noCFI := range []bool{false, true} {
		t.Run(fmt.Sprintf("noCFI=%v", noCFI), func(t *testing.T) {
			s := NewSpace(ParseMaps(d.maps), hostOpen)
			s.noCFI = noCFI
			frames := s.Backtrace(d.regs, regionsMem(d.stack), 64)
			names := frameNames(frames)
			if len(names) < len(want) || !slices.Equal(names[:len(want)], want) {
				t.Fatalf("frames %q, runtime.Callers says %q", names, d.oracle)
			}
			if len(frames) >= 64 {
				t.Errorf("walk did not stop: %q", names)
			}
			if !noCFI && frames[0].via != "cfi" {
				t.Errorf("frame 0 unwound by %s, want cfi", frames[0].via)
			}
			if !strings.HasSuffix(frames[1].File, "main.go") || frames[1].Line == 0 {
				t.Errorf("frame main.b at %s:%d", frames[1].File, frames[1].Line)
			}
		})
	}
}

// TestBacktraceStops checks that garbage never makes the walk loop or run
// past max: a stack that points at itself, and empty memory.
func TestBacktraceStops(t *testing.T) {
	bin := cFixture(t, "O0-nopie")
	syms := nmSymbols(t, bin)
	s := NewSpace(fakeMaps(t, bin, 0), hostOpen)
	const sp = 0x7ff0000
	// rbp points at itself, the return address points into c.
	stack := make([]byte, 64)
	le.PutUint64(stack[0:], sp)
	le.PutUint64(stack[8:], syms["c"]+8)
	mem := regionsMem(region{sp, stack})
	s.noCFI = true
	regs := Regs{Rip: syms["c"] + 8, Rsp: sp, Rbp: sp}
	if fs := s.Backtrace(regs, mem, 100); len(fs) > 3 {
		t.Errorf("self-loop gave %d frames: %q", len(fs), frameNames(fs))
	}
	s.noCFI = false
	if fs := s.Backtrace(regs, mem, 100); len(fs) > 3 {
		t.Errorf("self-loop with CFI gave %d frames: %q", len(fs), frameNames(fs))
	}
	if fs := s.Backtrace(regs, regionsMem(), 100); len(fs) != 1 || fs[0].Func != "c" {
		t.Errorf("no memory: frames %q, want just c", frameNames(fs))
	}
	if fs := s.Backtrace(Regs{}, mem, 100); len(fs) != 0 {
		t.Errorf("rip 0: %d frames", len(fs))
	}
	if fs := s.Backtrace(regs, mem, 1); len(fs) != 1 {
		t.Errorf("max 1: %d frames", len(fs))
	}
}
