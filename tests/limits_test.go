package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestWatchdogPreemptsSpinner: a thread spinning without syscalls while
// another waits to run must not hang hermit silently. The watchdog preempts
// it, names it, and says the run may not repeat.
func TestWatchdogPreemptsSpinner(t *testing.T) {
	t.Parallel()
	argv := cGuest("spin.c")(t)
	start := time.Now()
	r := hermitRun(t, []string{"--watchdog", "300ms", "--summary"}, argv)
	if r.Exit != 0 || !strings.Contains(string(r.Stdout), "flag seen") {
		t.Fatalf("want exit 0 and \"flag seen\", got %s", describe(r))
	}
	warn := regexp.MustCompile(`hermit: warning: thread \d+ ran for 300ms without a syscall \(ip 0x[0-9a-f]+\)`)
	if !warn.Match(r.Stderr) {
		t.Errorf("stderr lacks the watchdog warning naming the thread and its ip:\n%s", r.Stderr)
	}
	if !regexp.MustCompile(`nondeterministic points: [1-9]`).Match(r.Stderr) {
		t.Errorf("summary does not count the preemption as nondeterministic:\n%s", r.Stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v; the watchdog should fire after 300ms", d)
	}
}

// TestExternalInputArrivesLate: a guest blocked reading a pipe from outside
// the container must not deadlock; the wait is reported as nondeterministic.
func TestExternalInputArrivesLate(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	cat := testenv.Require(t, "cat")
	script := `(sleep 0.3; echo late input) | "$0" run --summary -- "$1"`
	r := testenv.Run(t, runTimeout, sh, "-c", script, testenv.Hermit(t), cat)
	if r.Exit != 0 || string(r.Stdout) != "late input\n" {
		t.Fatalf("want exit 0 and the late input echoed, got %s", describe(r))
	}
	if !regexp.MustCompile(`nondeterministic points: [1-9]`).Match(r.Stderr) {
		t.Errorf("summary does not report the external wait as nondeterministic:\n%s", r.Stderr)
	}
}

// TestUnsupportedSyscallNamed: a syscall hermit cannot make deterministic
// fails with ENOSYS and the user is told which one.
func TestUnsupportedSyscallNamed(t *testing.T) {
	t.Parallel()
	py := testenv.Require(t, "python3")
	prog := `import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); print(libc.syscall(425, 8, None), os.strerror(ctypes.get_errno()))`
	r := hermitRun(t, nil, []string{py, "-c", prog})
	if r.Exit != 0 || string(r.Stdout) != "-1 Function not implemented\n" {
		t.Fatalf("want io_uring_setup to fail with ENOSYS, got %s", describe(r))
	}
	if !strings.Contains(string(r.Stderr), "unsupported syscall io_uring_setup") {
		t.Errorf("stderr does not name the unsupported syscall:\n%s", r.Stderr)
	}
}

// TestSleepIsVirtual: sleeping costs no wall time, and the guest's clock
// moves by exactly the time slept.
func TestSleepIsVirtual(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	start := time.Now()
	r := hermitRun(t, nil, []string{sh, "-c", "date +%s; sleep 5; date +%s"})
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("sleep 5 took %v of wall time", d)
	}
	f := strings.Fields(string(r.Stdout))
	if r.Exit != 0 || len(f) != 2 {
		t.Fatalf("want two dates, got %s", describe(r))
	}
	var a, b int
	if _, err := fmt.Sscan(f[0]+" "+f[1], &a, &b); err != nil || b-a != 5 {
		t.Errorf("dates %q: want 5 s apart", r.Stdout)
	}
}
