package debuginfo

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestLineAddrs: break FILE:LINE goes where gdb puts it, for a line in
// a function body, a function's opening line (past its prologue), the
// blank line before it (moved on to the next line with code), and lines
// of other functions; and unknown files and lines past the code are
// errors.
func TestLineAddrs(t *testing.T) {
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		skipf(t, "no gdb in PATH to compare with")
	}
	lines := []int{123, 122, 121, 76, 113, 117}
	for _, variant := range []string{"O0-nopie", "O2-nopie", "O0-pie"} {
		t.Run(variant, func(t *testing.T) {
			s, bin, bias := spaceFor(t, variant)
			args := []string{"-nx", "-batch"}
			for _, l := range lines {
				args = append(args, "-ex", "break prog.c:"+strconv.Itoa(l))
			}
			out, err := exec.Command(gdb, append(args, bin)...).CombinedOutput()
			if err != nil {
				t.Fatalf("gdb: %v\n%s", err, out)
			}
			re := regexp.MustCompile(`(?m)^Breakpoint (\d+) at 0x([0-9a-f]+): file \S+, line (\d+)\.$`)
			ms := re.FindAllStringSubmatch(string(out), -1)
			if len(ms) != len(lines) {
				t.Fatalf("gdb set %d breakpoints for %d lines:\n%s", len(ms), len(lines), out)
			}
			for i, m := range ms {
				want, _ := strconv.ParseUint(m[2], 16, 64)
				got, err := s.LineAddrs("prog.c", lines[i])
				if err != nil || len(got) != 1 || got[0].Addr != want+bias {
					t.Errorf("LineAddrs(prog.c, %d) = %+v, %v; gdb: %#x (line %s)", lines[i], got, err, want+bias, m[3])
				}
			}
		})
	}
	s, _, _ := spaceFor(t, "O0-nopie")
	for _, c := range []struct {
		file string
		line int
		want string
	}{
		{"nosuch.c", 1, "no source file named nosuch.c"},
		{"prog.c", 138, "prog.c has no code at line 138 or after it"},
	} {
		if _, err := s.LineAddrs(c.file, c.line); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LineAddrs(%s, %d): got %v, want %q", c.file, c.line, err, c.want)
		}
	}
}
