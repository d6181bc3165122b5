package tests

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fastLineRE is --summary's line about fast writes; stopsLineRE its
// count of ptrace stops.
var (
	fastLineRE  = regexp.MustCompile(`(?m)^  fast calls: (\d+) writes and (\d+) reads of files and pipes, (\d+) futex wakes, without a stop \((\d+) libc sites patched\)$`)
	stopsLineRE = regexp.MustCompile(`(?m)^  ptrace stops: (\d+)$`)
)

// summaryCount returns the first number re finds in a --summary.
func summaryCount(t *testing.T, re *regexp.Regexp, stderr []byte) int {
	t.Helper()
	m := re.FindSubmatch(stderr)
	if m == nil {
		t.Fatalf("no %q in the summary:\n%s", re, stderr)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// TestFastWrites: writes and reads of regular files made from the guest
// without a ptrace stop (detcore/fastio.go) leave the same bytes and the same mtimes
// on every run, record and replay alike; they take the stops away from a
// thread that runs alone; a descriptor number that is reused for a pipe
// (dup2) or another file (close, open) is written correctly, and a
// writer that fills a pipe on it waits for its reader as before; forked
// processes and threads write to shared and own files.
func TestFastWrites(t *testing.T) {
	cases := []struct {
		mode string
		n    int
		want string // in the output
	}{
		{"plain", 2000, "plain: 20890 bytes"},
		{"reuse", 1000, "child read 262144 bytes from the pipe\n"},
		{"fork", 500, "shared: "},
		{"threads", 500, "tshared: "},
		{"pipe", 2000, "2000 round trips: sum 4567a99155cf4068\n"},
		{"signals", 200, "F_GETSIG of the read end: 0\nafter O_ASYNC a write brings signal 29 (SIGIO is 29)\n"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			argv := cGuest("fast_writes.c", c.mode, strconv.Itoa(c.n), t.TempDir())(t)
			if nat := native(t, argv); nat.Exit != 0 || !strings.Contains(string(nat.Stdout), c.want) || !strings.HasSuffix(string(nat.Stdout), "ok\n") {
				t.Fatalf("native run: want %q; %s", c.want, describe(nat))
			}
			var first []byte
			for i := 0; i < 3; i++ {
				r := hermitRun(t, []string{"--summary"}, argv)
				if r.Exit != 0 || !strings.Contains(string(r.Stdout), c.want) || !strings.HasSuffix(string(r.Stdout), "ok\n") {
					t.Fatalf("run %d: want %q; %s", i+1, c.want, describe(r))
				}
				fast := summaryCount(t, fastLineRE, r.Stderr)
				if fast < c.n-1 {
					t.Errorf("run %d: %d fast writes, want at least %d", i+1, fast, c.n-1)
				}
				if c.mode == "plain" || c.mode == "pipe" {
					if m := fastLineRE.FindSubmatch(r.Stderr); m != nil {
						if reads, _ := strconv.Atoi(string(m[2])); reads < c.n-1 {
							t.Errorf("run %d: %d fast reads, want at least %d", i+1, reads, c.n-1)
						}
					}
					if stops := summaryCount(t, stopsLineRE, r.Stderr); stops >= c.n/10 {
						t.Errorf("run %d: %d ptrace stops for %d writes and %d reads, want fewer than %d", i+1, stops, c.n, c.n, c.n/10)
					}
				}
				if i == 0 {
					first = append(r.Stdout, r.Stderr...)
					continue
				}
				if d := firstDiff(first, append(r.Stdout, r.Stderr...)); d != "" {
					t.Errorf("run %d: output or summary differs from run 1's at %s", i+1, d)
				}
			}
			if c.mode == "plain" {
				// A thread alone: the same clock, so the same mtimes, as
				// when every write stopped.
				slow := hermitRun(t, []string{"--no-fast-io"}, argv)
				if d := firstDiff(slow.Stdout, first[:strings.Index(string(first), "hermit summary:")]); d != "" || slow.Exit != 0 {
					t.Errorf("--no-fast-io: output differs at %s; %s", d, describe(slow))
				}
			}
			rec := recordReplay(t, nil, argv)
			if d := firstDiff(first[:strings.Index(string(first), "hermit summary:")], rec.Stdout); d != "" {
				t.Errorf("record: stdout differs from run's at %s", d)
			}
		})
	}
}
