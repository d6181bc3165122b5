package tests

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestFastFutexWakes: FUTEX_WAKE_PRIVATE calls answered in the guest
// (detcore/fastfutex.go) wake the same threads, and return the same
// counts, as natively; the output is the same on every run and in record
// and replay; a thread that wakes another and then spins for it is
// preempted, and one that wakes another and then makes only calls hermit
// lets through counts them, as after a trapped wake (its next syscall
// stops: syscall user dispatch), so the other runs within a timeslice;
// a forked child's wake of its copy of a word wakes none of its
// parent's waiters; and a handoff between two threads takes half the
// stops it takes with --no-fast-io.
// stopCountsRE matches --summary's counts of ptrace stops.
var stopCountsRE = regexp.MustCompile(`(?m)^  (ptrace|syscall|event) stops: \d+\n`)

func TestFastFutexWakes(t *testing.T) {
	cases := []struct {
		name string
		argv argvFunc
		want string // the whole output, or "" where it differs natively (a regexp then)
		fast int    // at least this many wakes without a stop
	}{
		{"condvar", cGuest("futex_wakes.c", "condvar", "1000"), "", 500},
		{"untraced", cGuest("futex_wakes.c", "untraced"), "", 1},
		{"spin", cGuest("futex_wakes.c", "spin"), "spin: round 1 answered\nspin: round 2 answered\nspin: round 3 answered\nspin: round 4 answered\nspin: round 5 answered\nok\n", 3},
		{"fork", cGuest("futex_wakes.c", "fork"), "fork: the child's wake woke 0\nfork: the parent's wake woke 1\nok\n", 3},
		{"counts", cGuest("futex_wakes.c", "counts"), "counts: woke 2 of 2 asked\ncounts: woke 1 of 5 asked\ncounts: woke 0 on a word nobody waits on\nok\n", 1},
		{"handoff", cGuest("handoff.c", "2000"), "2000 handoffs\n", 3900},
	}
	res := map[string]*regexp.Regexp{
		"condvar":  regexp.MustCompile(`\Acondvar: 4000 items, order [0-9a-f]{16}\nok\n\z`),
		"untraced": regexp.MustCompile(`\Auntraced: the woken thread ran at call \d+\nok\n\z`),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			good := func(out []byte) bool {
				if c.want == "" {
					return res[c.name].Match(out)
				}
				return string(out) == c.want
			}
			if nat := native(t, argv); nat.Exit != 0 || !good(nat.Stdout) {
				t.Fatalf("native run: want %q; %s", c.want, describe(nat))
			}
			var first []byte
			var stops int
			for i := 0; i < 3; i++ {
				r := hermitRun(t, []string{"--summary"}, argv)
				if r.Exit != 0 || !good(r.Stdout) {
					t.Fatalf("run %d: want %q; %s", i+1, c.want, describe(r))
				}
				m := fastLineRE.FindSubmatch(r.Stderr)
				if m == nil {
					t.Fatalf("run %d: no fast calls in the summary:\n%s", i+1, r.Stderr)
				}
				if n, _ := strconv.Atoi(string(m[3])); n < c.fast {
					t.Errorf("run %d: %d futex wakes without a stop, want at least %d", i+1, n, c.fast)
				}
				out := append(r.Stdout, r.Stderr...)
				if c.name == "spin" {
					// How many steps the watchdog's look at the spinner
					// takes depends on where its stop finds it.
					out = stopCountsRE.ReplaceAll(out, nil)
				}
				if i == 0 {
					first = out
					stops = summaryCount(t, stopsLineRE, r.Stderr)
					continue
				}
				if d := firstDiff(first, out); d != "" {
					t.Errorf("run %d: output or summary differs from run 1's at %s", i+1, d)
				}
			}
			if c.name == "untraced" {
				// The caller counts its calls from the wake on, as
				// after a trapped one, so the woken thread runs within
				// a timeslice of them, not after all 20000.
				var n int
				if _, err := fmt.Sscanf(string(first), "untraced: the woken thread ran at call %d", &n); err != nil || n > 1000 {
					t.Errorf("the woken thread ran at call %d (%v), want within the first 1000: the caller's calls were not counted", n, err)
				}
			}
			if c.name == "handoff" {
				// 2000 round trips: about 4000 stops with the wakes in
				// the guest (the two threads' waits), 6000 without: the
				// 4000 wakes, and the waits of one thread only (a
				// trapped wake that wakes the other ends the waker's
				// turn, and the other hands the turn back before the
				// waker waits).
				slow := hermitRun(t, []string{"--summary", "--no-fast-io"}, argv)
				if slow.Exit != 0 || !good(slow.Stdout) {
					t.Fatalf("--no-fast-io: %s", describe(slow))
				}
				if s := summaryCount(t, stopsLineRE, slow.Stderr); stops > s-1900 {
					t.Errorf("%d ptrace stops with the wakes in the guest, %d with --no-fast-io; want at least 1900 fewer", stops, s)
				}
			}
			rec := recordReplay(t, nil, argv)
			if d := firstDiff(first[:strings.Index(string(first), "hermit summary:")], rec.Stdout); d != "" {
				t.Errorf("record: stdout differs from run's at %s", d)
			}
		})
	}
}

// TestFastWakeThroughALook: a wake the guest's code left for hermit
// (detcore/fastfutex.go) is made at the waker's next stop that every run
// has, not at a stop of the watchdog's look at the waker computing
// meanwhile: a look comes when the watchdog looks, so its stops (the
// arrivals of an examination by hops) must change nothing. The output and
// schedule are the same with looks by hops and by single steps
// (--no-spin-traps), and from run to run (the JVM's with 2 CPUs, whose
// main thread wakes a GC thread and then zeroes memory, differed in 3 of
// 6 runs: the arrivals made the wake, and the thread's next wake went
// from a stop to the guest's code).
func TestFastWakeThroughALook(t *testing.T) {
	t.Parallel()
	argv := cGuest("futex_wakes.c", "compute")(t)
	// Both woken threads run at the waker's next stop, after it computed.
	want := regexp.MustCompile(`\Acompute: thread 0 ran at round (\d+)\ncompute: thread 1 ran at round (\d+)\nok\n\z`)
	var first []byte
	for _, flags := range [][]string{nil, nil, {"--no-spin-traps"}, {"--no-spin-traps"}} {
		r := hermitRun(t, append([]string{"--summary"}, flags...), argv)
		m := want.FindSubmatch(r.Stdout)
		x := spinExamsRE.FindSubmatch(r.Stderr)
		if r.Exit != 0 || m == nil || string(m[1]) != string(m[2]) || x == nil {
			t.Fatalf("hermit run %v: want exit 0, both threads at the last round and spin examinations in the summary; %s", flags, describe(r))
		}
		if hops, _ := strconv.Atoi(string(x[2])); (flags == nil) != (hops > 0) {
			t.Fatalf("hermit run %v: %d examinations by hops (of %s); want some without --no-spin-traps, none with it", flags, hops, x[1])
		}
		if first == nil {
			first = r.Stderr
		} else if a, b := digestLineRE.Find(first), digestLineRE.Find(r.Stderr); a == nil || !bytes.Equal(a, b) {
			t.Errorf("hermit run %v: schedule digest %q, first run's %q", flags, b, a)
		}
	}
}

// TestOwnSyscallDispatch: a program's own syscall user dispatch, in the
// main thread and in another, gets its SIGSYS and answers the blocked
// call, in every run and in a replay. hermit's fast futex code uses the
// same feature: it took the program's SIGSYS for its own, made the call
// again, and the run never ended.
func TestOwnSyscallDispatch(t *testing.T) {
	t.Parallel()
	printsEverywhere(t, cGuest("own_sud.c")(t), "main thread: trapped 1, getppid answered 4242\nsecond thread: trapped 2, getppid answered 4242\n")
}
