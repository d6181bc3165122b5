package tests

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestRecordIsRun: `hermit record` runs a program exactly as `hermit run`
// with the same flags: the calls record intercepts only to log them are no
// scheduling points, so the schedule digest, stdout and stderr are run's,
// under an unusual seed and timeslice too; and the replay shows the same,
// with the same digest in its --summary.
func TestRecordIsRun(t *testing.T) {
	cases := []struct {
		name string
		argv argvFunc
	}{
		{"pthreads racy counter", cGuest("racy_counter.c")},
		// run finds the opens that wait; record stops at every open.
		{"FIFO opens", cGuest("fifo_open.c")},
		// Counted calls (detcore/count.go) are scheduling points in both.
		{"a loop on untraced calls", cGuest("untraced_loops.c", "threads")},
		{"go goroutines and timers", goGuest("gotimers")},
		{"python threading", pyGuest("threads.py")},
		// A wake left in the page (detcore/fastfutex.go) is made at the
		// next stop a run has too, not at a call only record stops at.
		{"futex wakes beside recorded calls", cGuest("futex_wakes.c", "journal", "200")},
		// hermit looks at the writer for a spin when real time says;
		// the look must change nothing of what it does.
		{"fast writes beside a sleeper", func(t *testing.T) []string {
			return cGuest("fast_writes.c", "sleeper", "300000", t.TempDir())(t)
		}},
		// record stops at the access before the vfork, run does not:
		// the turn at the vfork's return is the same in both.
		{"vfork after a call record stops at", cGuest("vfork_exec.c", "access")},
		{"shell pipeline", tool("sh", "-c", "seq 1 200 | sort -r | head -3; "+shellJobs)},
		// A signal pending as a counted call is resumed comes after the
		// call, whether the stop before it was record's (mmap) or not.
		{"signals sent during counted calls", cGuest("sigcount.c")},
		// The same after a socket call, which record runs to its exit and
		// replay answers from the journal: the replay must not take a turn
		// more than the recording.
		{"signals sent during counted calls after socket calls", cGuest("sigcount.c", "socket")},
		// Replay answers writes to sockets from the recording: the
		// kernel's SIGPIPE with a recorded EPIPE is hermit's to send.
		{"SIGPIPE from writes to closed pipes and sockets", cGuest("sigpipe.c")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			for _, flags := range [][]string{{"--summary"}, {"--summary", "--seed", "14", "--timeslice", "1"}} {
				run := hermitRun(t, flags, argv)
				dir := filepath.Join(t.TempDir(), "trace")
				args := append(append(append([]string{"record", "-o", dir}, flags...), "--"), argv...)
				rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), args...)
				dr, dc := digestRE.FindSubmatch(run.Stderr), digestRE.FindSubmatch(rec.Stderr)
				switch {
				case dr == nil || dc == nil:
					t.Fatalf("%v: no schedule digest in run's or record's summary:\nrun: %s\nrecord: %s", flags, run.Stderr, rec.Stderr)
				case string(dr[1]) != string(dc[1]):
					t.Errorf("%v: run's schedule digest %s, record's %s", flags, dr[1], dc[1])
				}
				if d := firstDiff(run.Stdout, rec.Stdout); d != "" || run.Exit != rec.Exit {
					t.Errorf("%v: record's stdout differs from run's at %s (exit %d vs %d)", flags, d, rec.Exit, run.Exit)
				}
				if d := firstDiff(hermitLinesOut(run.Stderr), hermitLinesOut(rec.Stderr)); d != "" {
					t.Errorf("%v: record's stderr differs from run's at %s", flags, d)
				}
				rep := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "replay", "--autopilot", "--summary", dir)
				if dp := digestRE.FindSubmatch(rep.Stderr); dp == nil || string(dp[1]) != string(dc[1]) {
					t.Errorf("%v: replay --summary's schedule digest is not the recording's %s:\n%s", flags, dc[1], rep.Stderr)
				}
				rec.Stderr = hermitLinesOut(rec.Stderr)
				rep.Stderr = hermitLinesOut(rep.Stderr)
				sameRun(t, "replay", rec, rep)
			}
		})
	}
}

// hermitOwnRE matches the lines hermit writes itself: "hermit: ..." and
// the --summary block.
var hermitOwnRE = regexp.MustCompile(`(?m)^(hermit[ :].*|  [a-z ()/-]+: .*)\n`)

// hermitLinesOut drops hermit's own lines from stderr, leaving the guest's.
func hermitLinesOut(stderr []byte) []byte { return hermitOwnRE.ReplaceAll(stderr, nil) }

// TestFailingSeedRecorded: the workflow users come for. A seed under which
// an order violation crashes `hermit run` crashes it on every run, crashes
// `hermit record` with the same flags, and its replay crashes the same way.
func TestFailingSeedRecorded(t *testing.T) {
	t.Parallel()
	argv := cGuest("order_violation.c")(t)
	if r := hermitRun(t, nil, argv); r.Exit != 0 || string(r.Stdout) != "limit 42, ok\n" {
		t.Fatalf("the default schedule should publish first; got %s", describe(r))
	}
	var flags []string
	var fail testenv.Result
	for seed := 1; seed <= 20 && flags == nil; seed++ {
		f := []string{"--timeslice", "1", "--seed", strconv.Itoa(seed)}
		if r := hermitRun(t, f, argv); r.Exit != 0 {
			flags, fail = f, r
		}
	}
	if flags == nil {
		t.Fatal("no seed in 1..20 made the worker read the pointer before main published it")
	}
	if fail.Exit != 128+11 {
		t.Fatalf("%v: want a SIGSEGV (exit 139), got %s", flags, describe(fail))
	}
	for i := 0; i < 2; i++ {
		sameRun(t, fmt.Sprintf("%v run %d", flags, i+2), fail, hermitRun(t, flags, argv))
	}
	dir := filepath.Join(t.TempDir(), "trace")
	args := append(append(append([]string{"record", "-o", dir}, flags...), "--"), argv...)
	rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), args...)
	rec.Stderr = hermitLinesOut(rec.Stderr)
	sameRun(t, fmt.Sprintf("%v record", flags), fail, rec)
	sameRun(t, "replay", rec, replay(t, dir))
}
