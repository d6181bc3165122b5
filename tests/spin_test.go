package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

var (
	digestLineRE = regexp.MustCompile(`(?m)^  schedule digest: [0-9a-f]{16}$`)
	spinWaitsRE  = regexp.MustCompile(`(?m)^  spin (?:waits|yields): [1-9][0-9]* `)
	eventStopsRE = regexp.MustCompile(`(?m)^  event stops: (\d+)$`)
	spinExamsRE  = regexp.MustCompile(`(?m)^  spin examinations: (\d+) \(.*; (\d+) by hops, of which (\d+) went on to single steps\)$`)
	spinTrapsRE  = regexp.MustCompile(`(?m)^  spin traps: [1-9][0-9]* \(int3s at loops threads spun in; [1-9][0-9]* later spins`)
)

// TestSpinWaits: threads that wait by spinning on memory, with no
// syscall and no pause in the loop, finish under hermit without a PMU,
// repeat byte for byte over 5 runs (stdout and schedule digest), with no
// nondeterministic point, and record and replay identically. Spin
// detection stops each spinner at its loop's head, a point that does
// not depend on when hermit looked, until another thread (or a signal
// handler) changes what it reads. The int3 hermit then puts at that
// loop (a spin trap) finds the next spin there at once: a run without
// traps (--no-spin-traps) has the same schedule and output.
func TestSpinWaits(t *testing.T) {
	cases := []struct {
		name string
		argv argvFunc
		env  []string
		want string
		// noSpin: the loop has deterministic points of its own, so no
		// spin wait is needed: trapped rdtsc instructions.
		noSpin bool
		// traps: later spins are found at the trap of an earlier one.
		traps bool
	}{
		{"flag set after a computation", cGuest("spins.c", "flag"), nil, "flag: seen, sink ", false, false},
		{"busy wait for alarm's SIGALRM", cGuest("spins.c", "alarm"), nil, "alarm: caught\n", false, false},
		{"spinlock on atomic exchange, 4 threads", cGuest("spins.c", "spinlock"), nil, "spinlock: counter 500 (want 500)\n", false, true},
		{"yield by spinning, 20 handoffs", cGuest("spins.c", "pingpong"), nil, "pingpong: 20 handoffs\n", false, true},
		// The child's memory is a copy of its parent's, trap included.
		{"waits in a forked child", cGuest("spins.c", "forked"), nil, "forked: child exited 0, parent waited 6 times\n", false, true},
		// The setter sleeps: only virtual time moving on to the sleep's
		// end lets it run.
		{"setter asleep", cGuest("spin.c", "sleep", "pure"), nil, "flag seen\n", false, false},
		{"go, GOMAXPROCS=1", goGuest("gospin"), []string{"GOMAXPROCS=1"}, "gospin: GOMAXPROCS 1, sum 332833500\n", false, false},
		{"go, GOMAXPROCS=2", goGuest("gospin"), []string{"GOMAXPROCS=2"}, "gospin: GOMAXPROCS 2, sum 332833500\n", false, false},
		// The thread the spinner waits for is blocked in a read the
		// spinner's own write ended: nothing but an examination finds
		// that it can run.
		{"waiting for a reader the spinner woke", cGuest("spins.c", "piped"), nil, "piped: seen\n", false, false},
		// The spinner takes and lets go of a lock every round (as Go's
		// runtime does): it lets the setter run at its loop's head
		// rather than wait for memory, which holds the lock there.
		{"waiting under a lock", cGuest("spins.c", "locked"), nil, "locked: seen\n", false, false},
		// Its registers come back halfway round (another return
		// address on the stack): only the whole round is a cycle.
		{"waiting under a lock, in a function called twice a round", cGuest("spins.c", "locked2"), nil, "locked2: seen\n", false, false},
		// Each round walks a list under the lock: the walk's head comes
		// round six times a round, with other registers each time; the
		// round is the cycle.
		{"waiting under a lock, walking a list each round", cGuest("spins.c", "listwalk"), nil, "listwalk: seen, 0 dead\n", false, false},
		// Stepped, its pushfq pushes the trap flag, which its popfq
		// would set once it ran free (a JVM died of the SIGTRAP).
		{"saving and restoring its flags in the loop", cGuest("spins.c", "pushf"), nil, "pushf: seen\n", false, false},
		// The thread with less work is first looked at while it
		// computes, then spins: it is looked at again as it runs on,
		// not left to the watchdog's arbitrary preemption.
		{"barrier after unequal shares of work", cGuest("spins.c", "barrier"), nil, "barrier: 8 rounds\n", false, true},
		// Each trapped rdtsc is an instruction hermit answers: every 32
		// of them make a scheduling point.
		{"reading rdtsc while waiting", cGuest("spins.c", "rdtsc"), nil, "rdtsc: seen, 0 backwards\n", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.noSpin {
				testenv.RequireTSCTrap(t)
			}
			argv := c.argv(t)
			opts := testenv.Opts{Timeout: runTimeout, Env: c.env}
			var first testenv.Result
			for i := 0; i < 5; i++ {
				r := testenv.RunWith(t, opts, testenv.Hermit(t), hermitArgs([]string{"--summary"}, argv)...)
				if r.Exit != 0 || !bytes.Contains(r.Stdout, []byte(c.want)) {
					t.Fatalf("run %d: want exit 0 and %q; %s", i, c.want, describe(r))
				}
				if bytes.Contains(r.Stderr, []byte("warning")) || !bytes.Contains(r.Stderr, []byte("nondeterministic points: 0\n")) {
					t.Fatalf("run %d: a spin wait should be deterministic, with no warning:\n%s", i, r.Stderr)
				}
				if !c.noSpin && !spinWaitsRE.Match(r.Stderr) {
					t.Fatalf("run %d: the summary counts no spin wait:\n%s", i, r.Stderr)
				}
				if c.traps && !spinTrapsRE.Match(r.Stderr) {
					t.Fatalf("run %d: the summary counts no spin found at a spin trap:\n%s", i, r.Stderr)
				}
				if i == 0 {
					first = r
					continue
				}
				if d := firstDiff(first.Stdout, r.Stdout); d != "" {
					t.Fatalf("run %d: stdout differs from run 0 at %s", i, d)
				}
				if a, b := digestLineRE.Find(first.Stderr), digestLineRE.Find(r.Stderr); a == nil || !bytes.Equal(a, b) {
					t.Fatalf("run %d: schedule digest %q, run 0's %q", i, b, a)
				}
			}
			// Without traps, every spin is found after its budget, at
			// the same point.
			r := testenv.RunWith(t, opts, testenv.Hermit(t), hermitArgs([]string{"--summary", "--no-spin-traps"}, argv)...)
			if r.Exit != 0 || bytes.Contains(r.Stderr, []byte("spin traps:")) {
				t.Fatalf("--no-spin-traps: want exit 0 and no spin trap; %s", describe(r))
			}
			if d := firstDiff(first.Stdout, r.Stdout); d != "" {
				t.Fatalf("--no-spin-traps: stdout differs from the run with traps at %s", d)
			}
			if a, b := digestLineRE.Find(first.Stderr), digestLineRE.Find(r.Stderr); a == nil || !bytes.Equal(a, b) {
				t.Fatalf("--no-spin-traps: schedule digest %q, with traps %q", b, a)
			}
			dir := filepath.Join(t.TempDir(), "trace")
			ropts := hermitOpts(t, nil)
			ropts.Env = append(ropts.Env, c.env...)
			rec := testenv.RunWith(t, ropts, testenv.Hermit(t), append([]string{"record", "--summary", "-o", dir, "--"}, argv...)...)
			if rec.Exit != 0 {
				t.Fatalf("hermit record: %s", describe(rec))
			}
			if a, b := digestLineRE.Find(first.Stderr), digestLineRE.Find(rec.Stderr); !bytes.Equal(a, b) {
				t.Errorf("record's schedule digest %q, run's %q", b, a)
			}
			rec.Stderr = hermitLinesOut(rec.Stderr)
			sameRun(t, "replay", rec, replay(t, dir))
		})
	}
}

// TestSpinTrapGoes: a spin trap whose arrivals find no spin goes: after
// one spin on a lock, the main thread alone takes it 20,000 times, each
// through the trap's instruction. Kept, the trap would cost two stops a
// time (a trap and a step past it); the run has a few dozen in all.
func TestSpinTrapGoes(t *testing.T) {
	t.Parallel()
	r := hermitRun(t, []string{"--summary"}, cGuest("spins.c", "uncontended")(t))
	if r.Exit != 0 || string(r.Stdout) != "uncontended: 20000 times\n" || !spinWaitsRE.Match(r.Stderr) {
		t.Fatalf("want exit 0, the count and a spin wait; %s", describe(r))
	}
	m := stopsLineRE.FindSubmatch(r.Stderr)
	if m == nil {
		t.Fatalf("no ptrace stops in the summary:\n%s", r.Stderr)
	}
	if n, _ := strconv.Atoi(string(m[1])); n > 2000 {
		t.Errorf("%d ptrace stops for 20,000 arrivals at a trap that finds no spin after the first: the trap stayed", n)
	}
}

// TestSpinTrapsReplayAcross: a recording made without spin traps replays
// with them (and one made with them, in TestSpinWaits): the schedule is
// the same either way.
func TestSpinTrapsReplayAcross(t *testing.T) {
	t.Parallel()
	argv := cGuest("spins.c", "pingpong")(t)
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), append([]string{"record", "--no-spin-traps", "-o", dir, "--"}, argv...)...)
	if rec.Exit != 0 || string(rec.Stdout) != "pingpong: 20 handoffs\n" {
		t.Fatalf("hermit record --no-spin-traps: %s", describe(rec))
	}
	rec.Stderr = hermitLinesOut(rec.Stderr)
	sameRun(t, "replay", rec, replay(t, dir))
}

// TestComputeExaminedByHops: a thread that computes for a few hundred
// milliseconds while a new thread waits to run is examined by the
// watchdog; each examination tells it from a spin by hops (an int3 where
// it was stopped, and its registers compared at each arrival there), a
// couple of dozen stops, where stepping it (--no-spin-traps) takes one
// stop per instruction; output and schedule are the same either way.
func TestComputeExaminedByHops(t *testing.T) {
	t.Parallel()
	argv := cGuest("spins.c", "crunch")(t)
	type look struct {
		r                            testenv.Result
		events, exams, hops, stepped int
	}
	run := func(flags ...string) look {
		r := hermitRun(t, append([]string{"--summary"}, flags...), argv)
		if r.Exit != 0 || string(r.Stdout) != "compute: the new thread ran meanwhile: no\n" {
			t.Fatalf("hermit run %v: want exit 0 and the line; %s", flags, describe(r))
		}
		l := look{r: r}
		m := eventStopsRE.FindSubmatch(r.Stderr)
		x := spinExamsRE.FindSubmatch(r.Stderr)
		if m == nil || x == nil {
			t.Fatalf("hermit run %v: the summary lacks the event stops or the spin examinations:\n%s", flags, r.Stderr)
		}
		l.events, _ = strconv.Atoi(string(m[1]))
		l.exams, _ = strconv.Atoi(string(x[1]))
		l.hops, _ = strconv.Atoi(string(x[2]))
		l.stepped, _ = strconv.Atoi(string(x[3]))
		return l
	}
	hop, step := run(), run("--no-spin-traps")
	if hop.exams == 0 || hop.hops != hop.exams || hop.stepped != 0 {
		t.Errorf("with hops: %d examinations, %d by hops, %d stepped; want every one by hops alone", hop.exams, hop.hops, hop.stepped)
	}
	if step.hops != 0 {
		t.Errorf("--no-spin-traps: %d examinations by hops; want none", step.hops)
	}
	if hop.exams > 0 && step.exams > 0 && hop.events*step.exams*2 > step.events*hop.exams {
		t.Errorf("%d event stops for %d examinations by hops, %d for %d by steps: want less than half as many an examination",
			hop.events, hop.exams, step.events, step.exams)
	}
	if a, b := digestLineRE.Find(hop.r.Stderr), digestLineRE.Find(step.r.Stderr); a == nil || !bytes.Equal(a, b) {
		t.Errorf("schedule digest %q with hops, %q without", a, b)
	}
}

// TestProgressLoopReported: a thread that counts while it waits
// (`while (!flag) n++;`) never reaches the same state twice, so no point
// of its loop is canonical. hermit examines it, finds no spin, and its
// watchdog preempts it: the run finishes, and the warning names the
// thread, the address and the function, and says why the run may not
// repeat (what the last look found: registers that change on every round
// of steps, or no return to where a look by hops began, which follows how
// long each look took).
func TestProgressLoopReported(t *testing.T) {
	t.Parallel()
	r := hermitRun(t, []string{"--watchdog", "300ms"}, cGuest("spins.c", "counter")(t))
	if r.Exit != 0 || !bytes.Contains(r.Stdout, []byte("counter: n ")) {
		t.Fatalf("want exit 0 and the count; %s", describe(r))
	}
	warn := regexp.MustCompile(`hermit: warning: thread \d+ ran for 300ms without a syscall \(ip 0x[0-9a-f]+ \((main|spin_counter)\+0x[0-9a-f]+ in spins[^)]*\)\) ` +
		`while other threads waited to run; it is not a pure spin .*(its registers change on every round|it did not come back to 0x[0-9a-f]+ \((main|spin_counter)\+0x[0-9a-f]+ in spins[^)]*\), where it was stopped, with the registers it had there).* this run may not repeat exactly`)
	if !warn.Match(r.Stderr) {
		t.Errorf("stderr lacks the warning naming the thread, its loop and why:\n%s", r.Stderr)
	}
}

// TestWatchdogMovesTime: a Go program whose main goroutine counts
// without calls until another goroutine, on the only P, sets a flag ends
// as natively: the watchdog preempts the counter, and virtual time moves
// on by the CPU time it ran, so that sysmon, which preempts a goroutine
// that has run for 10 ms, sees that time pass after a preemption or two.
// (It moved a quantum and to sysmon's next wakeup a preemption: about 60
// preemptions with --watchdog 300ms, and with the default 2 s the
// runtime's and pprof's tests that wait so did not end in 200 s.)
func TestWatchdogMovesTime(t *testing.T) {
	t.Parallel()
	r := hermitRun(t, []string{"--watchdog", "300ms", "--summary"}, goGuest("gocount")(t))
	if r.Exit != 0 || string(r.Stdout) != "gocount: the other goroutine ran while main counted: true\n" {
		t.Fatalf("want exit 0 and the flag seen; %s", describe(r))
	}
	if !bytes.Contains(r.Stderr, []byte("hermit preempted it at an arbitrary point")) {
		t.Errorf("stderr lacks the watchdog's warning:\n%s", r.Stderr)
	}
	m := regexp.MustCompile(`nondeterministic points: \d+ \((\d+) watchdog preemptions?\)`).FindSubmatch(r.Stderr)
	if m == nil {
		t.Fatalf("no count of watchdog preemptions in the summary:\n%s", r.Stderr)
	}
	if n, _ := strconv.Atoi(string(m[1])); n > 5 {
		t.Errorf("%d watchdog preemptions before sysmon preempted the counter, want at most 5: the time the counter ran did not move the clock", n)
	}
}

// TestAlarmCountReported: the only thread counts until its alarm's
// SIGALRM: computation moves no virtual time, so the watchdog ends the
// wait, and its warning says a timer waited (it said other threads did,
// with none there); the second it counted is its CPU time, as natively
// (it was 0: openssl speed printed infinite rates).
func TestAlarmCountReported(t *testing.T) {
	t.Parallel()
	r := hermitRun(t, []string{"--watchdog", "300ms"}, cGuest("spins.c", "alarmcount")(t))
	if r.Exit != 0 || string(r.Stdout) != "alarmcount: caught after counting: yes, most of a second of CPU time: yes\n" {
		t.Fatalf("want exit 0 and the alarm caught; %s", describe(r))
	}
	warn := regexp.MustCompile(`hermit: warning: thread \d+ ran for 300ms without a syscall \(ip 0x[0-9a-f]+ \([^)]*\)\) ` +
		`while a timer waited for virtual time to reach its deadline \(it moves at syscalls\); it is not a pure spin`)
	if !warn.Match(r.Stderr) {
		t.Errorf("stderr lacks the warning that a timer waited:\n%s", r.Stderr)
	}
}

// TestStarvationReported: a thread that computes right after starting
// another keeps it from running until its next syscall, where natively
// both would run at once; the guest, which counts on it, fails, and
// hermit says why, naming both threads, the address and what it cannot
// do without a PMU.
func TestStarvationReported(t *testing.T) {
	t.Parallel()
	r := hermitRun(t, []string{"--watchdog", "60s"}, cGuest("spins.c", "compute")(t))
	if r.Exit != 1 || !bytes.Contains(r.Stdout, []byte("compute: the new thread ran meanwhile: no\n")) {
		t.Fatalf("want exit 1, the new thread held off until the computation ends; %s", describe(r))
	}
	warn := regexp.MustCompile(`hermit: warning: the guest failed, and thread 2 had run for 20ms without a syscall \(ip 0x[0-9a-f]+ \((main|spin_compute)\+0x[0-9a-f]+ in spins[^)]*\)\) ` +
		`while thread 3, new, waited to run: natively both would run at once, .*no PMU to count instructions`)
	if !warn.Match(r.Stderr) {
		t.Errorf("stderr lacks the warning naming both threads and why:\n%s", r.Stderr)
	}
}

// TestLateTimerReported: a loop that computes between its calls, beside
// a timer it counts on to end it, sees no SIGALRM where natively it
// would (computation takes no virtual time); the guest fails, and hermit
// says why: the timer, how long it was set for, and the virtual time that
// passed (the real time is not named, so that the words repeat).
func TestLateTimerReported(t *testing.T) {
	t.Parallel()
	r := hermitRun(t, nil, cGuest("spins.c", "computealarm")(t))
	if r.Exit != 1 || string(r.Stdout) != "computealarm: SIGALRM never came\n" {
		t.Fatalf("want exit 1, the timer unexpired after 3,000 calls; %s", describe(r))
	}
	warn := regexp.MustCompile(`hermit: warning: the guest failed, and process \d+ exited with alarm/ITIMER_REAL \(SIGALRM\) armed for 100ms, unexpired: ` +
		`more real time than that had passed since it was set, but only 3.\d+ms of virtual time, .*no PMU to count instructions`)
	if !warn.Match(r.Stderr) {
		t.Errorf("stderr lacks the warning naming the timer and why:\n%s", r.Stderr)
	}
}

// TestSpinWaitInREPL: the REPL shows a thread in a spin wait as such, at
// its loop's head, while the thread it waits for makes its calls.
func TestSpinWaitInREPL(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "record", "-o", dir, "--", cGuest("spins.c", "flag")(t)[0], "flag")
	if rec.Exit != 0 {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	var script []string
	for i := 0; i < 80; i++ {
		script = append(script, "step", "info threads")
	}
	out := runREPLScript(t, dir, append(script, "quit")).Stdout
	row := regexp.MustCompile(`(?m)^  tid \d+ +pid \d+ +\S+ +spinning until memory it reads changes +0x[0-9a-f]+ (?:main|spin_flag) at \S*spins\.c:(\d+)$`)
	m := row.FindSubmatch(out)
	if m == nil {
		t.Fatalf("info threads never shows the spinning thread at a line of spins.c:\n%s", out)
	}
	src, err := os.ReadFile(filepath.Join(testenv.GuestsDir(t), "spins.c"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(string(m[1]))
	if lines := strings.Split(string(src), "\n"); n < 1 || n > len(lines) || !strings.Contains(lines[n-1], "while (!flag)") {
		t.Errorf("the spinning thread stands at spins.c:%s, not at spin_flag's loop", m[1])
	}
}

// TestWatchdogCountsCPUTime: the watchdog's budgets count the running
// thread's CPU time, not the wall clock's. A thread computes for about
// 60 ms beside a sleeping one while three busy processes share its CPU,
// so that it takes several times that in wall time, past --watchdog
// (150 ms): hermit neither preempts it nor warns, and the run has no
// nondeterministic point, as on a quiet machine. (Well under the 100 ms
// after which a thread beside none that waits to run is examined: at
// 100 ms it was, now and then.)
func TestWatchdogCountsCPUTime(t *testing.T) {
	taskset := testenv.Require(t, "taskset")
	bin := testenv.BuildC(t, "spins.c")
	// Rounds for about 60 ms of this machine's CPU (its CPU time).
	cal := testenv.RunWith(t, testenv.Opts{Timeout: runTimeout}, bin, "bounded", "20000000")
	if cal.Exit != 0 || cal.CPU <= 0 {
		t.Fatalf("calibration: %s", describe(cal))
	}
	rounds := int64(20000000 * (60 * time.Millisecond) / cal.CPU)
	cpu := strconv.Itoa(runtime.NumCPU() - 1)
	for range 3 {
		hog := exec.Command(taskset, "-c", cpu, "/bin/sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Fatalf("starting a busy process on CPU %s: %v", cpu, err)
		}
		t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	}
	const watchdog = 150 * time.Millisecond
	r := hermitRun(t, []string{"--summary", "--cpu", cpu, "--watchdog", watchdog.String()}, []string{bin, "bounded", strconv.FormatInt(rounds, 10)})
	if r.Exit != 0 || string(r.Stdout) != fmt.Sprintf("bounded: %d rounds\n", rounds) {
		t.Fatalf("want the rounds counted; %s", describe(r))
	}
	if r.Duration < watchdog {
		testenv.Skip(t, fmt.Sprintf("the busy processes did not slow the guest past --watchdog (%v in all): nothing to tell the CPU time from the wall time", r.Duration))
	}
	if bytes.Contains(r.Stderr, []byte("without a syscall")) || !bytes.Contains(r.Stderr, []byte("  nondeterministic points: 0\n")) {
		t.Errorf("%v of CPU time took %v on a loaded CPU: want no preemption and no nondeterministic point; %s", cal.CPU*time.Duration(rounds)/20000000, r.Duration, describe(r))
	}
}

// TestTimedWaitBeside: while one thread waits 5 ms on a condition
// variable, as CPython's GIL does before it asks the holder to drop it,
// the other loops on sigaction (a call hermit lets through) until asked:
// its calls move virtual time, so the wait times out after 5 ms of it,
// with the same number of calls on every run and in replay. The clock
// stood still, the watchdog ended the wait after 2 s at an arbitrary
// call, and the replay diverged.
func TestTimedWaitBeside(t *testing.T) {
	t.Parallel()
	argv := cGuest("timed_wait_busy.c")(t)
	first := hermitRun(t, []string{"--watchdog", "0"}, argv)
	m := regexp.MustCompile(`\Atimed out: yes; (\d+) calls; (\d+) us\n\z`).FindSubmatch(first.Stdout)
	if first.Exit != 0 || m == nil {
		t.Fatalf("hermit run --watchdog 0: want the wait timed out; %s", describe(first))
	}
	if us, _ := strconv.Atoi(string(m[2])); us < 5000 || us > 50000 {
		t.Errorf("the wait took %d us of virtual time, want a little over 5000", us)
	}
	rerunAndReplay(t, argv, string(first.Stdout))
}
