package tests

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// clockLineRE is --summary's line about clock reads.
var clockLineRE = regexp.MustCompile(`(?m)^  clock reads: (\d+) in the guest without a stop, (\d+) trapped \(programs: (\d+) read hermit's clock page, (\d+) only the trapped syscalls\)$`)

// TestClockPage: programs that read every clock in loops, through the vDSO
// (answered in the guest from hermit's clock page, without a stop) and
// through the syscall, in threads, across a sleep, a fork and an exec,
// see no clock go back, print the same bytes on every run, and record and
// replay identically; the summary counts the reads the page answered.
func TestClockPage(t *testing.T) {
	cases := []struct {
		name     string
		argv     argvFunc
		want     string
		programs int // that read the page
	}{
		{"C", cGuest("clocks.c"), ": ok\n", 2},
		{"Go", goGuest("goclocks"), "goclocks: ok\n", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			if nat := native(t, argv); nat.Exit != 0 || !strings.HasSuffix(string(nat.Stdout), c.want) {
				t.Fatalf("native run: want %q at the end; %s", c.want, describe(nat))
			}
			runsAlike(t, argv, c.want, func(run int, r testenv.Result) {
				m := clockLineRE.FindStringSubmatch(string(r.Stderr))
				if m == nil {
					t.Fatalf("run %d: no clock line in the summary:\n%s", run, r.Stderr)
				}
				if n, _ := strconv.Atoi(m[1]); n < 1000 || m[3] != strconv.Itoa(c.programs) || m[4] != "0" {
					t.Errorf("run %d: %s; want many reads answered in the guest, by %d programs", run, m[0], c.programs)
				}
			})
		})
	}
}

// runsAlike runs argv 5 times with `hermit run --summary`, each ending
// with want and checked by check, and each printing what the first did;
// then a recording and its replay print it too.
func runsAlike(t *testing.T, argv []string, want string, check func(run int, r testenv.Result)) {
	t.Helper()
	var first testenv.Result
	for i := 0; i < 5; i++ {
		r := hermitRun(t, []string{"--summary"}, argv)
		if r.Exit != 0 || !strings.HasSuffix(string(r.Stdout), want) {
			t.Fatalf("run %d: want %q at the end; %s", i+1, want, describe(r))
		}
		check(i+1, r)
		if i == 0 {
			first = r
			continue
		}
		sameRun(t, "run "+strconv.Itoa(i+1), first, r)
	}
	rec := recordReplay(t, nil, argv)
	if d := firstDiff(first.Stdout, rec.Stdout); d != "" {
		t.Errorf("record: stdout differs from run's at %s", d)
	}
}

// TestChildTimesHidden: the CPU times the kernel puts in a SIGCHLD's
// siginfo (the host's measure of the child) read 0, as wait4's rusage
// does: natively they count the child's ticks.
func TestChildTimesHidden(t *testing.T) {
	t.Parallel()
	argv := cGuest("child_times.c")(t)
	if nat := native(t, argv); nat.Exit != 0 || strings.Contains(string(nat.Stdout), "SIGCHLD: code 1, status 0, utime 0,") {
		t.Fatalf("native run: want the child's user time in the SIGCHLD; %s", describe(nat))
	}
	want := "SIGCHLD: code 1, status 0, utime 0, stime 0\nwaitid: code 1, status 0, utime 0, stime 0\n"
	r := hermitRun(t, nil, argv)
	if r.Exit != 0 || string(r.Stdout) != want {
		t.Fatalf("hermit run: want %q; %s", want, describe(r))
	}
	if rec := recordReplay(t, nil, argv); string(rec.Stdout) != want {
		t.Errorf("hermit record: want %q; %s", want, describe(rec))
	}
}

// TestSetClockRefused: clock_settime and settimeofday fail with EPERM,
// after the kernel's own checks, and the guest's clock goes on as before.
// As root they would otherwise set the host's clock to the guest's time
// (the host's time is passed, so that a hermit that let them through sets
// it to about what it is).
func TestSetClockRefused(t *testing.T) {
	t.Parallel()
	argv := cGuest("settime.c", strconv.FormatInt(time.Now().Unix(), 10))(t)
	want := `clock_settime REALTIME       -1 EPERM
clock_settime MONOTONIC      -1 EINVAL
clock_settime bad pointer    -1 EFAULT
clock_settime bad nsec       -1 EINVAL
settimeofday                 -1 EPERM
settimeofday bad usec        -1 EINVAL
settimeofday NULL NULL       -1 EPERM
clock moved on as before
`
	r := hermitRun(t, nil, argv)
	if r.Exit != 0 || string(r.Stdout) != want {
		t.Fatalf("hermit run: want\n%s%s", want, describe(r))
	}
	if rec := recordReplay(t, nil, argv); string(rec.Stdout) != want {
		t.Errorf("hermit record: want\n%s%s", want, describe(rec))
	}
}

// TestCPUTimeClocks: the CPU-time clocks, getrusage and times count the
// virtual time the process and its threads run, not the time they sleep
// (they read the virtual clock itself, so a sleep moved them).
func TestCPUTimeClocks(t *testing.T) {
	t.Parallel()
	checkCompat(t, []compatCase{
		{"sleep, a thread, a fork", cGuest("cputime.c"), `across a 1 s sleep: monotonic moved 1 s, process still, thread still
a thread worked: process moved, the main thread less
getrusage and times within the process's clock: yes
a forked child starts below its parent
`},
		// Timers on those clocks: the old hermit fired them on the
		// virtual wall clock, 100 SIGPROFs across the sleep.
		{"timers on CPU-time clocks", cGuest("cputimers.c"), `across a 1 s sleep: 0 SIGPROF, 0 SIGVTALRM, 0 timer signals
still armed: ITIMER_PROF yes, the thread's timer yes
running: each fired at least twice: yes
SIGPROF's si_code: SI_KERNEL
`},
	})
}
