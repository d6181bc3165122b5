package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// runTimeout bounds every single command a test runs, so a hang fails the
// test instead of stalling the suite.
const runTimeout = 60 * time.Second

// argvFunc builds (if needed) a guest and returns its command line.
type argvFunc func(t *testing.T) []string

// cGuest is a C guest from tests/guests.
func cGuest(src string, args ...string) argvFunc {
	return func(t *testing.T) []string {
		return append([]string{testenv.BuildC(t, src)}, args...)
	}
}

// goGuest is a Go guest in its own directory under tests/guests.
func goGuest(dir string, args ...string) argvFunc {
	return func(t *testing.T) []string {
		return append([]string{testenv.BuildGo(t, dir)}, args...)
	}
}

// pyGuest is a Python script from tests/guests, run by python3.
func pyGuest(script string) argvFunc {
	return func(t *testing.T) []string {
		return []string{testenv.Require(t, "python3"), filepath.Join(testenv.GuestsDir(t), script)}
	}
}

// tool is an installed program with arguments.
func tool(name string, args ...string) argvFunc {
	return func(t *testing.T) []string {
		return append([]string{testenv.Require(t, name)}, args...)
	}
}

// native runs argv directly.
func native(t *testing.T, argv []string) testenv.Result {
	t.Helper()
	return testenv.Run(t, runTimeout, argv[0], argv[1:]...)
}

// hermitRun runs `hermit run FLAGS -- ARGV`.
func hermitRun(t *testing.T, flags, argv []string) testenv.Result {
	t.Helper()
	return testenv.RunWith(t, testenv.Opts{Timeout: runTimeout}, testenv.Hermit(t), hermitArgs(flags, argv)...)
}

func hermitArgs(flags, argv []string) []string {
	args := append([]string{"run"}, flags...)
	return append(append(args, "--"), argv...)
}

// firstDiff describes the first line where a and b differ, or "" if equal.
func firstDiff(a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	la, lb := bytes.SplitAfter(a, []byte("\n")), bytes.SplitAfter(b, []byte("\n"))
	for i := 0; ; i++ {
		var x, y []byte
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if !bytes.Equal(x, y) {
			return fmt.Sprintf("line %d: %q vs %q", i+1, x, y)
		}
	}
}

// describe formats a result for a failure message.
func describe(r testenv.Result) string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Exit, r.Stdout, r.Stderr)
}

// scheduleDiff tells where the schedule logs (--schedule-log) of two runs
// whose digests differ part: the first turn that differs, or, if every
// turn is the same thread at the same call, that a call's result differs
// (the digest hashes those too).
func scheduleDiff(a, b string) string {
	x, errA := os.ReadFile(a)
	y, errB := os.ReadFile(b)
	if errA != nil || errB != nil {
		return fmt.Sprintf("no schedule logs to compare (%v, %v)", errA, errB)
	}
	if d := firstDiff(x, y); d != "" {
		return "their schedule logs (turn, thread, call, code, result) first differ at " + d
	}
	return fmt.Sprintf("their schedule logs are the same for all %d turns, so a call's result differs", bytes.Count(x, []byte("\n")))
}
