package debuginfo

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestAfterPrologue: a function breakpoint goes where gdb puts its own
// (`break FUNC`), which is the oracle here.
func TestAfterPrologue(t *testing.T) {
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		skipf(t, "no gdb in PATH to compare with")
	}
	for _, variant := range []string{"O0-nopie", "O2-nopie"} {
		bin := cFixture(t, variant)
		sp := NewSpace(fakeMaps(t, bin, 0), hostOpen)
		syms := nmSymbols(t, bin)
		for _, fn := range []string{"a", "b", "c", "main"} {
			out, err := exec.Command(gdb, "-nx", "-batch", "-ex", "break "+fn, bin).CombinedOutput()
			m := regexp.MustCompile(`Breakpoint 1 at 0x([0-9a-f]+)`).FindSubmatch(out)
			if err != nil || m == nil {
				t.Fatalf("gdb break %s: %v\n%s", fn, err, out)
			}
			want, _ := strconv.ParseUint(string(m[1]), 16, 64)
			if got := sp.AfterPrologue(syms[fn]); got != want {
				t.Errorf("%s: AfterPrologue(%s at %#x) = %#x, gdb breaks at %#x", variant, fn, syms[fn], got, want)
			}
		}
	}
	// No line table: the entry itself.
	bin := cFixture(t, "nocfi")
	sp := NewSpace(fakeMaps(t, bin, 0), hostOpen)
	if a := nmSymbols(t, bin)["a"]; sp.AfterPrologue(a) != a {
		t.Errorf("without DWARF, AfterPrologue(a) = %#x, want the entry %#x", sp.AfterPrologue(a), a)
	}
}

func TestNames(t *testing.T) {
	bin := cFixture(t, "O0-nopie")
	names := NewSpace(fakeMaps(t, bin, 0), hostOpen).Names()
	seen := map[string]int{}
	for _, n := range names {
		seen[n]++
	}
	for _, fn := range []string{"a", "b", "c", "main", "handler"} {
		if seen[fn] != 1 {
			t.Errorf("Names lists %s %d times, want once", fn, seen[fn])
		}
	}
}
