package tests

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestStraceInGuest: strace, a real tracer, runs inside hermit as it runs
// natively (its ptrace is emulated): `strace -f` of a shell that forks
// and execs prints a line for every call of every process, the same
// processes start and exit as natively, and its whole output is the same
// over three runs and in replay.
func TestStraceInGuest(t *testing.T) {
	strace := testenv.Require(t, "strace")
	sh := testenv.Require(t, "sh")
	argv := []string{strace, "-f", sh, "-c", "echo a; (echo b); " + sh + " -c 'echo c'; /bin/true"}
	nat := native(t, argv)
	if nat.Exit != 0 || string(nat.Stdout) != "a\nb\nc\n" {
		t.Fatalf("native strace: want exit 0 and a, b, c; %s", describe(nat))
	}
	counts := func(stderr []byte) map[string]int {
		return map[string]int{
			"exits":    len(regexp.MustCompile(`\+\+\+ exited with 0 \+\+\+`).FindAll(stderr, -1)),
			"execs":    len(regexp.MustCompile(`execve\("`).FindAll(stderr, -1)),
			"attached": len(regexp.MustCompile(`strace: Process \d+ attached`).FindAll(stderr, -1)),
			// The call, whether strace prints it whole or, when
			// processes run at once, as "<unfinished ...>" and resumed.
			"writes": len(regexp.MustCompile(`write\(1, "[abc]\\n", 2`).FindAll(stderr, -1)),
		}
	}
	want := counts(nat.Stderr)
	if want["exits"] < 3 || want["writes"] != 3 {
		t.Fatalf("native strace output has %v; %s", want, describe(nat))
	}
	first := threeSameRuns(t, argv, "strace", func(r testenv.Result) []byte { return r.Stderr }, func(what string, r testenv.Result) {
		if r.Exit != 0 || string(r.Stdout) != "a\nb\nc\n" {
			t.Fatalf("%s: want exit 0 and a, b, c; %s", what, describe(r))
		}
		if got := counts(r.Stderr); !maps.Equal(got, want) {
			t.Fatalf("%s: strace printed %v, natively %v; %s", what, got, want, describe(r))
		}
	})
	straceRecordReplay(t, argv, first)
}

// TestStraceThreadsInGuest: `strace -f` of a Go program, whose threads
// all die together at its exit_group, prints the same bytes over three
// runs and in replay, with an exit line for every thread it saw start
// (the kernel reports such exits in an order of its own; hermit used to
// pass that order on).
func TestStraceThreadsInGuest(t *testing.T) {
	strace := testenv.Require(t, "strace")
	argv := append([]string{strace, "-f", "-q"}, goGuest("goroutines")(t)...)
	exits := regexp.MustCompile(`(?m)^\[pid +\d+\] \+\+\+ exited with 0 \+\+\+$`)
	clones := regexp.MustCompile(`clone3?\(`)
	first := threeSameRuns(t, argv, "strace", func(r testenv.Result) []byte { return r.Stderr }, func(what string, r testenv.Result) {
		n, c := len(exits.FindAll(r.Stderr, -1)), len(clones.FindAll(r.Stderr, -1))
		if r.Exit != 0 || n == 0 || n != c {
			t.Fatalf("%s: want exit 0 and an exit line for each of the %d threads started, got %d; %s", what, c, n, describe(r))
		}
	})
	straceRecordReplay(t, argv, first)
}

// straceRecordReplay records argv, an strace, whose stderr must be first
// (hermit run's), and replays it: the replay must show what it showed.
func straceRecordReplay(t *testing.T, argv []string, first []byte) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, argv)
	if d := firstDiff(first, guestStderr(rec.Stderr)); d != "" || rec.Exit != 0 {
		t.Fatalf("hermit record: strace's output differs from hermit run's at %s; %s", d, describe(rec))
	}
	rec.Stderr = guestStderr(rec.Stderr)
	rep := replay(t, dir)
	rep.Stderr = guestStderr(rep.Stderr)
	sameRun(t, "replay", rec, rep)
}

// TestGdbInGuest: gdb, a real debugger, runs inside hermit: it stops a
// guest's second thread at a breakpoint, steps it, sees its SIGSEGV, lists
// the threads and prints the backtrace, as natively; its whole output is
// the same over three runs and in replay.
func TestGdbInGuest(t *testing.T) {
	gdb := testenv.Require(t, "gdb")
	argv := []string{gdb, "-nx", "-batch", "-ex", "break segv", "-ex", "run", "-ex", "next", "-ex", "next",
		"-ex", "info threads", "-ex", "bt", "-ex", "continue", "--args", testenv.BuildC(t, "die.c"), "thread-segv"}
	want := []string{`hit Breakpoint 1(\.\d)?, segv \(\) at `, `received signal SIGSEGV, Segmentation fault`,
		`\* 2 +Thread 0x[0-9a-f]+ \(LWP \d+\) "die`, `#1  (0x[0-9a-f]+ in )?segv_thread `, `Program terminated with signal SIGSEGV`}
	check := func(what string, r testenv.Result) {
		t.Helper()
		for _, w := range want {
			if !regexp.MustCompile(w).Match(r.Stdout) {
				t.Fatalf("%s: gdb's output lacks %q; %s", what, w, describe(r))
			}
		}
	}
	check("native gdb", native(t, argv))
	first := threeSameRuns(t, argv, "gdb", func(r testenv.Result) []byte { return r.Stdout }, check)
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, argv)
	if d := firstDiff(first, rec.Stdout); d != "" {
		t.Fatalf("hermit record: gdb's output differs from hermit run's at %s; %s", d, describe(rec))
	}
	rep := replay(t, dir)
	rep.Stderr = guestStderr(rep.Stderr)
	sameRun(t, "replay", rec, rep)
}

// threeSameRuns runs argv three times under hermit run, with the
// environment record gets (its trace directory): each run must pass check
// and warn of nothing, and the tool's output (out) must be the same every
// time. It returns that output.
func threeSameRuns(t *testing.T, argv []string, tool string, out func(testenv.Result) []byte, check func(string, testenv.Result)) []byte {
	t.Helper()
	var first []byte
	for i := 1; i <= 3; i++ {
		r := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), hermitArgs(nil, argv)...)
		check(fmt.Sprintf("hermit run %d", i), r)
		if bytes.Contains(r.Stderr, []byte("hermit: warning")) {
			t.Fatalf("hermit run %d warned; %s", i, describe(r))
		}
		if i == 1 {
			first = out(r)
		} else if d := firstDiff(first, out(r)); d != "" {
			t.Fatalf("hermit run %d: %s's output differs from run 1 at %s", i, tool, d)
		}
	}
	return first
}
