package tests

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// requireAVX skips a test on a CPU without AVX.
func requireAVX(t *testing.T) {
	t.Helper()
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^flags\s*:.*\bavx\b`).Match(info) {
		testenv.Skip(t, "this CPU has no AVX (no ymm registers)")
	}
}

// TestAVXRegisters: gdb and lldb read a ymm register whole. The stub gave
// only the FXSAVE area, so gdb said "Invalid register `ymm1'" and lldb had
// no ymm1; its upper half comes from the XSAVE area's AVX state.
func TestAVXRegisters(t *testing.T) {
	requireAVX(t)
	requireDebugging(t, "gdb")
	dir := recordC(t, "ymm.c")
	t.Run("gdb", func(t *testing.T) {
		got, r := gdbValues(t, dir, "break mark", "continue", "p $ymm1.v8_int32", "p $xmm1.v4_int32")
		if want := "{1, 2, 3, 4, 5, 6, 7, 8} {1, 2, 3, 4}"; strings.Join(got, " ") != want {
			t.Errorf("ymm1 and xmm1 at mark: want %s, got %v\n%s", want, got, describe(r))
		}
	})
	t.Run("lldb", func(t *testing.T) {
		requireDebugging(t, "lldb")
		tr, _ := lldbReplay(t, dir, "breakpoint set -n mark", "process continue", "register read -f int32 ymm1")
		mustMatch(t, regexp.MustCompile(`\A +ymm1 = \{1 2 3 4 5 6 7 8\}\n\z`),
			tr.out(t, "register read -f int32 ymm1", 0), "register read ymm1 at mark")
		if t.Failed() {
			t.Logf("lldb:\n%s", tr.text)
		}
	})
}
