package tests

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// chaosFoundRE matches hermit chaos's report of a failing seed and the
// command that repeats it.
var chaosFoundRE = regexp.MustCompile(`(?m)^hermit chaos: seed (\d+) fails \((.*)\); (\d+) runs? in .*\n  repeat it:  hermit (run .*)$`)

// chaosFound is what hermit chaos reported.
type chaosFound struct {
	seed, why string
	runs      string
	repeat    []string // hermit's arguments that repeat the failure
}

// runChaos runs hermit chaos with flags on argv and returns its report,
// failing t unless it found a failure (exit 1).
func runChaos(t *testing.T, flags []string, argv []string) (chaosFound, testenv.Result) {
	t.Helper()
	args := append(append(append([]string{"chaos"}, flags...), "--"), argv...)
	r := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), args...)
	m := chaosFoundRE.FindStringSubmatch(string(r.Stderr))
	if r.Exit != 1 || m == nil {
		t.Fatalf("hermit %s: want exit 1 and a failing seed; %s", strings.Join(args, " "), describe(r))
	}
	// The arguments hold no spaces or quotes here.
	return chaosFound{seed: m[1], why: m[2], runs: m[3], repeat: strings.Fields(m[4])}, r
}

// TestChaosOrderViolation: the loop users come for. An order violation
// that every plain run hides is found by hermit chaos; the command it
// prints fails 5 times out of 5; the trace it records replays to the same
// crash, and gdb attached to that replay stops at the faulting read.
func TestChaosOrderViolation(t *testing.T) {
	requireDebugging(t, "gdb")
	argv := []string{testenv.BuildC(t, "order_violation.c", "-O0")}
	for i := 0; i < 3; i++ {
		if r := hermitRun(t, nil, argv); r.Exit != 0 || string(r.Stdout) != "limit 42, ok\n" {
			t.Fatalf("plain run %d: want \"limit 42, ok\"; %s", i+1, describe(r))
		}
	}
	dir := filepath.Join(t.TempDir(), "trace")
	found, r := runChaos(t, []string{"--runs", "200", "--minimize", "-o", dir}, argv)
	if found.why != "exit 139, killed by SIGSEGV" {
		t.Errorf("hermit chaos says seed %s fails with %q; want the SIGSEGV", found.seed, found.why)
	}
	// The minimal schedule still fails, and the race is named: the
	// worker (a new thread) ran before main went on.
	m := regexp.MustCompile(`(?m)^  minimal:    \d+ change point\(s\): hermit (run .*)\n  the race:   at turn \d+, thread (\d+)'s first instruction \(a new thread\) ran before thread (\d+)'s `).FindStringSubmatch(string(r.Stderr))
	if m == nil || m[2] == m[3] {
		t.Fatalf("hermit chaos --minimize does not name the racing threads:\n%s", r.Stderr)
	}
	if min := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), strings.Fields(m[1])...); min.Exit != 139 {
		t.Errorf("the minimal schedule, hermit %s: want the SIGSEGV; %s", m[1], describe(min))
	}
	if !strings.Contains(string(r.Stderr), "  trace:      "+dir+" (exit 139, killed by SIGSEGV)\n") {
		t.Fatalf("hermit chaos does not report the recorded trace %s:\n%s", dir, r.Stderr)
	}
	var first testenv.Result
	for i := 0; i < 5; i++ {
		rr := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), found.repeat...)
		if rr.Exit != 139 {
			t.Fatalf("hermit %s, run %d of 5: want the SIGSEGV (139); %s", strings.Join(found.repeat, " "), i+1, describe(rr))
		}
		if i == 0 {
			first = rr
			continue
		}
		sameRun(t, fmt.Sprintf("repeat %d", i+1), first, rr)
	}
	rep := replay(t, dir)
	if rep.Exit != 139 {
		t.Errorf("the replay of the recorded seed: want exit 139; %s", describe(rep))
	}
	s := startReplay(t, dir)
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "continue", "bt 1")
	s.wait(t)
	mustMatch(t, regexp.MustCompile(`(?m)received signal SIGSEGV, Segmentation fault\.\n(?:\[Switching to .*\]\n)?(?:0x[0-9a-f]+ in )?use_config \(\) at \S*order_violation\.c:\d+`),
		tr.out(t, "continue", 0), "continue to the crash")
	mustMatch(t, regexp.MustCompile(`#0  (?:0x[0-9a-f]+ in )?use_config \(\)`), tr.out(t, "bt 1", 0), "bt at the crash")
}

// TestChaosFindsRaces: an atomicity violation, a lost wakeup and a Go
// program's racy map update, each hidden from plain runs, are found
// within 500 runs, by PCT (the default) and by the random heuristic; and
// the search reports the same seed whatever --jobs is.
func TestChaosFindsRaces(t *testing.T) {
	cases := []struct {
		name, ok string
		argv     argvFunc
	}{
		{"atomicity violation", "counter 20, ok\n", cGuest("atomicity.c")},
		{"lost wakeup", "woken, ok\n", cGuest("lost_wakeup.c")},
		{"go racy map", "hits 20, ok\n", goGuest("goracy")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			if r := hermitRun(t, nil, argv); r.Exit != 0 || string(r.Stdout) != c.ok {
				t.Fatalf("plain run: want %q; %s", c.ok, describe(r))
			}
			pct, _ := runChaos(t, []string{"--runs", "500", "--no-record"}, argv)
			if pct.why != "exit 1" {
				t.Errorf("pct: seed %s fails with %q, want exit 1", pct.seed, pct.why)
			}
			// The search told the guest 4 CPUs (run says 1: Go's
			// goroutines would share one thread), and so does the
			// command it prints, which fails again.
			if !slices.Contains(pct.repeat, "--num-cpus=4") {
				t.Errorf("the command that repeats the failure lacks --num-cpus=4: hermit %s", strings.Join(pct.repeat, " "))
			} else if r := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), pct.repeat...); r.Exit != 1 {
				t.Errorf("hermit %s: want the failure (exit 1); %s", strings.Join(pct.repeat, " "), describe(r))
			}
			one, _ := runChaos(t, []string{"--runs", "500", "--no-record", "--jobs", "1"}, argv)
			if one.seed != pct.seed {
				t.Errorf("--jobs 1 found seed %s, the default jobs seed %s: the search should report the lowest failing seed", one.seed, pct.seed)
			}
			runChaos(t, []string{"--runs", "500", "--no-record", "--sched-heuristic=random"}, argv)
		})
	}
}

// TestChaosSeedsStable: a chaos seed is a schedule. The same seed gives
// the same digest and output over 5 runs and under record, and the replay
// shows the same; another seed gives another schedule.
func TestChaosSeedsStable(t *testing.T) {
	argv := cGuest("racy_counter.c")(t)
	for _, h := range [][]string{{"--chaos"}, {"--sched-heuristic=random"}, {"--chaos", "--chaos-depth=5"}} {
		t.Run(strings.Join(h, " "), func(t *testing.T) {
			t.Parallel()
			flags := append([]string{"--summary", "--seed", "9"}, h...)
			var digest string
			var first testenv.Result
			for i := 0; i < 5; i++ {
				r := hermitRun(t, flags, argv)
				m := digestRE.FindSubmatch(r.Stderr)
				if r.Exit != 0 || m == nil {
					t.Fatalf("run %d: %s", i+1, describe(r))
				}
				if i == 0 {
					digest, first = string(m[1]), r
					continue
				}
				if string(m[1]) != digest {
					t.Errorf("run %d: digest %s, run 1 had %s", i+1, m[1], digest)
				}
				if d := firstDiff(first.Stdout, r.Stdout); d != "" {
					t.Errorf("run %d: stdout differs at %s", i+1, d)
				}
			}
			other := hermitRun(t, append([]string{"--summary", "--seed", "10"}, h...), argv)
			if m := digestRE.FindSubmatch(other.Stderr); m == nil || string(m[1]) == digest {
				t.Errorf("seed 10 gives the digest of seed 9 (%s): the seed does not reach the schedule", digest)
			}
			dir := filepath.Join(t.TempDir(), "trace")
			args := append(append(append([]string{"record", "-o", dir}, flags...), "--"), argv...)
			rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), args...)
			if m := digestRE.FindSubmatch(rec.Stderr); m == nil || string(m[1]) != digest {
				t.Errorf("record: digest %q, run's %s", m, digest)
			}
			if d := firstDiff(first.Stdout, rec.Stdout); d != "" {
				t.Errorf("record: stdout differs from run's at %s", d)
			}
			rec.Stderr = hermitLinesOut(rec.Stderr)
			sameRun(t, "replay", rec, replay(t, dir))
		})
	}
}

// TestChaosTimeout: with --timeout, a run still going after it counts as
// failing (a hang), and is stopped.
func TestChaosTimeout(t *testing.T) {
	t.Parallel()
	argv := tool("sh", "-c", "while :; do :; done")(t)
	found, _ := runChaos(t, []string{"--runs", "3", "--no-record", "--timeout", "1s"}, argv)
	if found.seed != "1" || found.why != "still running after --timeout 1s" {
		t.Errorf("got seed %s failing with %q; want seed 1, still running", found.seed, found.why)
	}
}

// TestChaosProgressInLog: a search whose stderr is a log (CI), not a
// terminal, says how far it got now and then (--progress), and nothing
// with --progress 0.
func TestChaosProgressInLog(t *testing.T) {
	t.Parallel()
	argv := tool("true")(t)
	lineRE := regexp.MustCompile(`(?m)^hermit chaos: (\d+) of 6 runs, 0 failing, [\d.]+ runs/s$`)
	for _, every := range []string{"1ns", "0"} {
		args := append([]string{"chaos", "--runs", "6", "--progress", every, "--"}, argv...)
		r := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), args...)
		if r.Exit != 0 || !strings.Contains(string(r.Stderr), "hermit chaos: no failure in 6 runs") {
			t.Fatalf("hermit %s: want exit 0 and no failure; %s", strings.Join(args, " "), describe(r))
		}
		var done []string
		for _, m := range lineRE.FindAllStringSubmatch(string(r.Stderr), -1) {
			done = append(done, m[1])
		}
		want := []string{"1", "2", "3", "4", "5", "6"}
		if every == "0" {
			want = nil
		}
		if !slices.Equal(done, want) {
			t.Errorf("hermit %s: progress lines after runs %v, want %v; stderr:\n%s", strings.Join(args, " "), done, want, r.Stderr)
		}
	}
}

// TestChaosShard: --shard K/N searches only seeds K, K+N, ...: the seed
// it reports is one of them.
func TestChaosShard(t *testing.T) {
	t.Parallel()
	argv := cGuest("order_violation.c")(t)
	found, _ := runChaos(t, []string{"--runs", "200", "--no-record", "--shard", "3/4"}, argv)
	var n int
	if _, err := fmt.Sscan(found.seed, &n); err != nil || n%4 != 3 {
		t.Errorf("--shard 3/4 reported seed %s, not one of 3, 7, 11, ...", found.seed)
	}
}

// TestChaosBadFlags: a bad value gets one line naming it and status 2.
func TestChaosBadFlags(t *testing.T) {
	t.Parallel()
	argv := cGuest("order_violation.c")(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chaos", "--runs", "0", "--"}, "--runs 0"},
		{[]string{"chaos", "--progress", "-1s", "--"}, "--progress -1s"},
		{[]string{"chaos", "--shard", "5/4", "--"}, "--shard \"5/4\""},
		{[]string{"chaos", "--until", "exit>3", "--"}, "--until \"exit>3\""},
		{[]string{"chaos", "--stdout", "(", "--"}, "--stdout \"(\""},
		{[]string{"chaos", "--seed", "3", "--"}, "--seed is hermit run's"},
		{[]string{"chaos", "--sched-heuristic=roundrobin", "--"}, "roundrobin does not"},
		{[]string{"run", "--chaos-depth", "0", "--"}, "--chaos-depth 0"},
		{[]string{"run", "--sched-heuristic", "fifo", "--"}, "unknown scheduling heuristic \"fifo\""},
		{[]string{"run", "--chaos-points", "4,x", "--chaos", "--"}, "change point \"x\""},
		{[]string{"run", "--chaos-points", "4", "--"}, "--chaos-points needs --chaos"},
		{[]string{"run", "--seed-from", "urandom", "--"}, "only source is SystemRandom"},
	} {
		r := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), append(c.args, argv...)...)
		lines := strings.Split(strings.TrimSpace(string(r.Stderr)), "\n")
		if r.Exit != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("hermit %s: want exit 2 and one line with %q; %s", strings.Join(c.args, " "), c.want, describe(r))
		}
	}
}

// TestSeedFromSystemRandom: --seed-from=SystemRandom prints the seed it
// chose, and that seed repeats the run.
func TestSeedFromSystemRandom(t *testing.T) {
	t.Parallel()
	argv := cGuest("racy_counter.c")(t)
	r := hermitRun(t, []string{"--chaos", "--seed-from=SystemRandom", "--summary"}, argv)
	m := regexp.MustCompile(`(?m)^hermit: seed (\d+) \(--seed \d+ repeats this run\)$`).FindSubmatch(r.Stderr)
	d := digestRE.FindSubmatch(r.Stderr)
	if r.Exit != 0 || m == nil || d == nil {
		t.Fatalf("want the chosen seed and a digest on stderr; %s", describe(r))
	}
	again := hermitRun(t, []string{"--chaos", "--seed", string(m[1]), "--summary"}, argv)
	if d2 := digestRE.FindSubmatch(again.Stderr); d2 == nil || string(d2[1]) != string(d[1]) || string(again.Stdout) != string(r.Stdout) {
		t.Errorf("--seed %s does not repeat the run it was printed for", m[1])
	}
}
