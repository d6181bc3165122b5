package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/tests/testenv"
)

const (
	// hermitRuns is how many consecutive `hermit run`s must agree.
	hermitRuns = 5
	// nativeTries is how many native runs may pass before two differ.
	nativeTries = 10
)

// shellJobs starts four background jobs, each a shell printing its own pid.
const shellJobs = `for i in 1 2 3 4; do sh -c "echo job $i pid \$\$" & done; wait; echo all jobs done`

// TestDeterminism runs racy guests natively, where their output varies
// between runs, and under hermit, where it must be byte-identical.
func TestDeterminism(t *testing.T) {
	cases := []struct {
		name  string
		argv  argvFunc
		flags []string // extra `hermit run` flags
	}{
		{name: "pthreads racy counter", argv: cGuest("racy_counter.c")},
		{name: "pthreads racy counter seed 7", argv: cGuest("racy_counter.c"), flags: []string{"--seed", "7"}},
		{name: "mutex condvar producer consumer", argv: cGuest("prodcons.c")},
		{name: "20 forked children on one pipe", argv: cGuest("fork_pipe.c")},
		{name: "sh background jobs", argv: tool("sh", "-c", shellJobs)},
		{name: "go goroutines channels select", argv: goGuest("goroutines")},
		{name: "python threading", argv: pyGuest("threads.py")},
		{name: "adjtimex reads the virtual clock", argv: cGuest("adjtime.c")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			nat := nativeVaries(t, argv)

			first := hermitRun(t, c.flags, argv)
			if first.Exit != nat.Exit {
				t.Fatalf("hermit run: exit %d, want %d as natively\n%s", first.Exit, nat.Exit, describe(first))
			}
			// The schedule may differ from any native one, but the guest
			// prints the same number of lines in every schedule.
			if got, want := bytes.Count(first.Stdout, []byte("\n")), bytes.Count(nat.Stdout, []byte("\n")); got != want {
				t.Fatalf("hermit run: %d stdout lines, want %d as natively\n%s", got, want, describe(first))
			}
			for i := 2; i <= hermitRuns; i++ {
				r := hermitRun(t, c.flags, argv)
				if d := firstDiff(first.Stdout, r.Stdout); d != "" {
					t.Fatalf("hermit run %d: stdout differs from run 1 at %s\nrun 1:\n%s\nrun %d:\n%s", i, d, first.Stdout, i, r.Stdout)
				}
				if d := firstDiff(first.Stderr, r.Stderr); d != "" {
					t.Fatalf("hermit run %d: stderr differs from run 1 at %s", i, d)
				}
				if r.Exit != first.Exit {
					t.Fatalf("hermit run %d: exit %d, run 1 exited %d", i, r.Exit, first.Exit)
				}
			}
		})
	}
}

// nativeVaries runs argv natively until two runs print different stdout,
// failing if nativeTries runs all agree (the guest would then prove nothing
// about hermit). Every native run must exit 0. It returns the first run.
func nativeVaries(t *testing.T, argv []string) testenv.Result {
	t.Helper()
	first := native(t, argv)
	if first.Exit != 0 {
		t.Fatalf("native run: %s", describe(first))
	}
	for i := 2; i <= nativeTries; i++ {
		r := native(t, argv)
		if r.Exit != 0 {
			t.Fatalf("native run %d: %s", i, describe(r))
		}
		if !bytes.Equal(r.Stdout, first.Stdout) {
			return first
		}
	}
	t.Fatalf("native output identical in %d runs; the guest is not racy:\n%s", nativeTries, first.Stdout)
	return first
}

// TestCompletion runs guests whose native output is deterministic and checks
// that under hermit they complete with the native output and exit status.
func TestCompletion(t *testing.T) {
	cases := []struct {
		name string
		argv argvFunc
		exit int    // wanted exit status, natively and under hermit
		want string // stdout must contain this, natively and under hermit
	}{
		{"100 threads create join", cGuest("thread_churn.c"), 0, "joined 100 threads, sum of squares 328350\n"},
		{"pthread barrier", cGuest("barrier.c"), 0, "4 threads passed 50 barrier rounds, 50 serial threads\n"},
		{"futex cmp requeue", cGuest("futex_requeue.c"), 0, "wake a: 7 woken\n8 waiters exited\n"},
		{"futex requeue counts the requeued", cGuest("futex_requeue_plain.c"), 0, "requeue: 4\nwake b: 3\n"},
		{"a seccomp filter of the guest's own", cGuest("seccomp_self.c"), 0, "seccomp mode before: 0\ngetppid: -1, errno 42; seccomp mode after: 2\nthread started before: 0, after: 2\nafter a TSYNC filter, thread started before: 2\n"},
		{"sleeps a signal interrupts leave the time left", cGuest("sleep_signal.c"), 0, "nanosleep: EINTR, 4 s left\nclock_nanosleep: EINTR, 4 s left\n"},
		// Through hermit's code in the guest: its slow path for the
		// reads of a patched read site.
		{"a signal interrupts a read of an empty pipe", cGuest("pipe_signal.c"), 0, "read 0: -1 (Interrupted system call), handler ran 1 times\nread 1: -1 (Interrupted system call), handler ran 2 times\n"},
		// multiprocessing's semaphores: a futex word shared with a child,
		// in a new mapping where the last one was.
		{"a shared futex mapped again at one address", cGuest("futex_remap.c"), 0, "round 1: the child woke 1\nround 1: the parent woke, the same mapping\n"},
		// Go's sysmon against a goroutine that stops the world in a
		// loop: a waker that keeps its turn past a futex wake takes the
		// scheduler's lock back before the woken thread runs.
		{"go stop-the-world in a loop", goGuest("gostw"), 0, "gostw: the main goroutine saw 100 stops of the world: true\n"},
		{"100 forks with distinct statuses", cGuest("fork_wait.c"), 0, "reaped 100 children, each status once, sum 4950\n"},
		// Sleeps beside a TCP server, in a child its parent waits for
		// with WUNTRACED (runuser starting PostgreSQL).
		{"sleeps beside a server", cGuest("sleep_beside_server.c"), 0, "slept 10 x 100 ms: 1 s or more\nthe child exited with 0\n"},
		// A signal a signalfd takes wakes a poll or epoll_wait of it
		// (PostgreSQL's latches).
		{"poll of a signalfd", cGuest("signalfd_wait.c", "p"), 0, "the wait returned 1; read 128 bytes: signal 23\nthe child exited with 0\n"},
		{"epoll of a signalfd", cGuest("signalfd_wait.c", "e"), 0, "the wait returned 1; read 128 bytes: signal 23\nthe child exited with 0\n"},
		{"exec self", cGuest("exec_self.c"), 7, "stage 2: argc 3, argv[1] stage2, same pid: yes\n"},
		{"exec from a non-leader thread", cGuest("exec_threads.c"), 3, "after exec from a thread: pid == tid: yes\n"},
		{"vfork exec", cGuest("vfork_exec.c"), 0, "child: hello from sh\nparent: child exited with 5\n"},
		{"wait waitpid waitid", cGuest("waits.c"), 0, "waitid(D): CLD_KILLED by signal 15\n"},
		// A probed wait (one hermit's tables cannot judge) that a signal
		// interrupts: EINTR, or made again, as natively (hermit made it
		// again after the handler in any case, in the kernel, where it
		// waited for ever for a child that waited for its turn).
		{"a signal ends waitpid(WUNTRACED)", cGuest("wait_signal.c", "eintr"), 0, "waitpid: -1 (Interrupted system call), 1 alarm\nthen the child exited 7\n"},
		{"a signal restarts waitid(P_PIDFD)", cGuest("wait_signal.c", "restart"), 0, "waitid(P_PIDFD): the child exited 7, 1 alarm\n"},
		{"raise SIGKILL", cGuest("die.c", "kill"), 128 + 9, "dying by kill\n"},
		{"abort SIGABRT", cGuest("die.c", "abort"), 128 + 6, "dying by abort\n"},
		{"NULL dereference SIGSEGV", cGuest("die.c", "segv"), 128 + 11, "dying by segv\n"},
		{"NULL dereference in a thread", cGuest("die.c", "thread-segv"), 128 + 11, "dying by thread-segv\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			// The native run only shows the guest is sound; under load a
			// kernel may wake a futex waiter spuriously (futex_requeue
			// then counts one waiter short), so it gets three tries.
			nat := native(t, argv)
			for try := 1; try < 3 && (nat.Exit != c.exit || !strings.Contains(string(nat.Stdout), c.want)); try++ {
				nat = native(t, argv)
			}
			if nat.Exit != c.exit || !strings.Contains(string(nat.Stdout), c.want) {
				t.Fatalf("native run (3 tries): want exit %d and stdout containing %q, got %s", c.exit, c.want, describe(nat))
			}
			got := hermitRun(t, nil, argv)
			if got.Exit != c.exit {
				t.Errorf("hermit run: exit %d, want %d", got.Exit, c.exit)
			}
			if d := firstDiff(nat.Stdout, got.Stdout); d != "" {
				t.Errorf("hermit run: stdout differs from native at %s", d)
			}
			if t.Failed() {
				t.Logf("hermit run: %s", describe(got))
			}
		})
	}
}

// TestAdjtimexIsVirtual: adjtimex and clock_adjtime read the same virtual
// time as clock_gettime under hermit, from the virtual epoch (before, they
// ran natively and showed the host's clock).
func TestAdjtimexIsVirtual(t *testing.T) {
	r := hermitRun(t, nil, cGuest("adjtime.c")(t))
	out := string(r.Stdout)
	epoch := fmt.Sprintf("adjtimex %d.", detcore.DefaultEpoch.Unix())
	if r.Exit != 0 || !strings.Contains(out, epoch) ||
		!strings.Contains(out, "agrees with clock_gettime: yes\nclock_adjtime agrees with clock_gettime: yes\n") {
		t.Errorf("hermit run adjtime: want both reads at the virtual epoch (%q...) agreeing with clock_gettime; %s", epoch, describe(r))
	}
}

// TestPrctlHidesHermit: prctl tells the guest what it would tell an
// unconfined process, not about hermit's seccomp filter, rdtsc trap and
// no_new_privs; the guest's own settings are reported back, and its own
// PR_TSC_SIGSEGV makes its rdtsc fault, in a child it forks too.
func TestPrctlHidesHermit(t *testing.T) {
	testenv.RequireTSCTrap(t)
	r := hermitRun(t, nil, cGuest("prctl_self.c")(t))
	want := "seccomp 0, tsc 1, no_new_privs 0\nafter setting: tsc 1, no_new_privs 1\n" +
		"child: tsc 2, rdtsc faulted 1 time(s)\nPR_TSC_SIGSEGV: rdtsc faulted 1 time(s)\n"
	if nat := native(t, cGuest("prctl_self.c")(t)); nat.Exit != 0 || !strings.HasSuffix(string(nat.Stdout), "faulted 1 time(s)\n") {
		t.Fatalf("native run of prctl_self: %s", describe(nat))
	}
	if r.Exit != 0 || string(r.Stdout) != want {
		t.Errorf("hermit run prctl_self: want %q; %s", want, describe(r))
	}
}

// TestSelectTimeLeft: select, pselect6 and ppoll write the time left into their
// timeout, also when a signal interrupts them; under hermit it is the virtual time left (natively the host's
// clock decides it), so it is the same on every run, and less than the
// timeout.
func TestSelectTimeLeft(t *testing.T) {
	t.Parallel()
	r := hermitRepeat(t, 3, nil, cGuest("select_left.c")(t))
	re := regexp.MustCompile(`(?m)^(select|pselect6|ppoll): 1 ready, 1\.9[0-9]{8} s left of 2$`)
	if n := len(re.FindAll(r.Stdout, -1)); n != 3 {
		t.Errorf("want both calls ready with between 1.9 and 2 s left; %s", describe(r))
	}
	// Interrupted 20 ms in by SIGALRM: some 1.98 s left (it was the host's
	// time spent, a few microseconds: a loop that selected again with it
	// never ended).
	re = regexp.MustCompile(`(?m)^(select|pselect6|ppoll): interrupted, 1\.9[5-8][0-9]{7} s left of 2$`)
	if n := len(re.FindAll(r.Stdout, -1)); n != 3 {
		t.Errorf("want each call interrupted with about 1.98 s left; %s", describe(r))
	}
}

// printsEverywhere checks that argv exits 0 having printed want in two
// runs under hermit, in a recording and in its replay.
func printsEverywhere(t *testing.T, argv []string, want string) {
	t.Helper()
	if r := hermitRepeat(t, 2, nil, argv); r.Exit != 0 || string(r.Stdout) != want {
		t.Errorf("hermit run: want\n%s%s", want, describe(r))
	}
	if rec := recordReplay(t, nil, argv); rec.Exit != 0 || string(rec.Stdout) != want {
		t.Errorf("hermit record: want\n%s%s", want, describe(rec))
	}
}

// TestTimerfdRearm: timerfd_settime drops the expirations not read, as
// the kernel's does: a timerfd set again without a read (BEAM's way) is
// not readable until its new deadline (epoll_wait returned at once, and
// Erlang's scheduler spun for ever); in every run, and in a replay.
func TestTimerfdRearm(t *testing.T) {
	t.Parallel()
	argv := cGuest("timerfd_rearm.c")(t)
	want := "round 0: 1 ready at 10 ms; disarmed, 0 ready\n" +
		"round 1: 1 ready at 20 ms; disarmed, 0 ready\n" +
		"round 2: 1 ready at 30 ms; disarmed, 0 ready\n"
	printsEverywhere(t, argv, want)
}

// TestRobustOwnerDies: a thread, then a process, dies holding a robust
// mutex another waits for; the waiter's lock returns EOWNERDEAD, as
// natively, in every run and in a replay. The waiter waited in hermit,
// where the kernel's wake at the owner's death did not reach it, and the
// run ended as deadlocked (exit 125).
func TestRobustOwnerDies(t *testing.T) {
	t.Parallel()
	argv := cGuest("robust.c")(t)
	want := "thread: lock returned EOWNERDEAD\nprocess: lock returned EOWNERDEAD\n"
	printsEverywhere(t, argv, want)
}

// TestTimerOverrun: a POSIX timer whose real-time signal is blocked
// expires five times before the program takes the signal: one signal is
// queued, and timer_getoverrun says 4 once it is taken, as natively, in
// every run and in a replay. Each expiration queued a signal of its own,
// and timer_getoverrun said 0.
func TestTimerOverrun(t *testing.T) {
	t.Parallel()
	argv := cGuest("timer_overrun.c")(t)
	want := "before: overrun 0\ntaken: overrun 4\nanother signal: no\n"
	printsEverywhere(t, argv, want)
}

// TestSockTimeout: a recv, an accept and a send that wait on a socket
// with SO_RCVTIMEO or SO_SNDTIMEO fail with EAGAIN once it has passed, in
// virtual time (the kernel keeps it in jiffies: a little more), the same
// in every run and in a replay. The waits had no end, and hermit ended
// the run as deadlocked.
func TestSockTimeout(t *testing.T) {
	t.Parallel()
	argv := cGuest("sock_timeout.c")(t)
	r := hermitRepeat(t, 2, nil, argv)
	m := regexp.MustCompile(`\Arecv: -1 \(EAGAIN\) after (\d+) ms\naccept: -1 \(EAGAIN\) after (\d+) ms\nsend: -1 \(EAGAIN\) after (\d+) ms\n\z`).FindStringSubmatch(string(r.Stdout))
	if r.Exit != 0 || m == nil {
		t.Fatalf("want recv, accept and send to fail with EAGAIN; %s", describe(r))
	}
	for i, want := range []int{50, 30, 20} {
		if got := atoi(t, []byte(m[i+1])); got < want || got > want+10 {
			t.Errorf("call %d waited %d ms, want its timeout, %d ms (a jiffy more at most)", i, got, want)
		}
	}
	if rec := recordReplay(t, nil, argv); string(rec.Stdout) != string(r.Stdout) {
		t.Errorf("hermit record: want %q; %s", r.Stdout, describe(rec))
	}
}

// TestLoopbackWarning: a run whose TCP between the guest's own sockets
// waited for the host's TCP timers says it may not repeat, and what
// would: a reply the server writes in two pieces, the second held by
// Nagle's algorithm until a delayed ACK (the exchange was nondeterministic
// at every round, and only --summary told). --network local neither waits
// nor warns, and a recording, which keeps what came, does not warn.
func TestLoopbackWarning(t *testing.T) {
	t.Parallel()
	argv := cGuest("tcp_split_reply.c")(t)
	want := "20 rounds, 20 replies whole\n"
	warning := regexp.MustCompile(`(?m)^hermit: warning: a TCP connection over loopback between the guest's own sockets is on the host's network, .*this run may not repeat exactly \(--network local .*\)$`)
	r := hermitRun(t, []string{"--summary"}, argv)
	if r.Exit != 0 || string(r.Stdout) != want || len(warning.FindAll(r.Stderr, -1)) != 1 {
		t.Errorf("hermit run: want %q and the warning once; %s", want, describe(r))
	}
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root (a network namespace) for --network local")
	}
	r = hermitRun(t, []string{"--network", "local", "--summary"}, argv)
	if r.Exit != 0 || string(r.Stdout) != want || warning.Match(r.Stderr) || !strings.Contains(string(r.Stderr), "nondeterministic points: 0\n") {
		t.Errorf("hermit run --network local: want %q, no warning and no nondeterministic point; %s", want, describe(r))
	}
	rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), append([]string{"record", "-o", filepath.Join(t.TempDir(), "trace"), "--"}, argv...)...)
	if rec.Exit != 0 || string(rec.Stdout) != want || strings.Contains(string(rec.Stderr), "loopback") {
		t.Errorf("hermit record: want %q and no warning; %s", want, describe(rec))
	}
}

// TestLocalNetwork: with --network local the guest has a network of its
// own, with only loopback, whose TCP hermit tunes to repeat. Two tests of
// Go's net/http, whose schedules on the host's network follow the
// kernel's TCP timers, give one schedule digest and one output over 5
// runs: a 1 MiB response header (a short read here or there), and a
// server that writes without end until its write timeout while its
// client reads (how much each write takes followed the host's congestion
// control, BBR here, which paces sends by real time, and the window
// the client's full buffer opened by timer). A bad value is refused in
// one line.
func TestLocalNetwork(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root (a network namespace)")
	}
	bin, dir := testenv.BuildGoTest(t, "net/http")
	for _, name := range []string{"TestTransportResponseHeaderLength", "TestServerWriteTimeout"} {
		t.Run(name, func(t *testing.T) {
			argv := []string{bin, "-test.run", "^" + name + "$", "-test.v"}
			opts := testenv.Opts{Timeout: runTimeout, Dir: dir}
			var first testenv.Result
			logs := t.TempDir()
			for i := 0; i < 5; i++ {
				log := filepath.Join(logs, strconv.Itoa(i+1))
				r := testenv.RunWith(t, opts, testenv.Hermit(t), hermitArgs([]string{"--network", "local", "--summary", "--schedule-log", log}, argv)...)
				if r.Exit != 0 || !strings.Contains(string(r.Stdout), "--- PASS: "+name) {
					t.Fatalf("run %d: want the test to pass; %s", i+1, describe(r))
				}
				if i == 0 {
					first = r
					continue
				}
				if d := firstDiff(first.Stderr, r.Stderr); d != "" {
					t.Errorf("run %d: the summary (schedule digest) differs from run 1's at %s; %s", i+1, d, scheduleDiff(filepath.Join(logs, "1"), log))
				}
				if d := firstDiff(first.Stdout, r.Stdout); d != "" {
					t.Errorf("run %d: the output differs from run 1's at %s", i+1, d)
				}
			}
		})
	}
	bad := hermitRun(t, []string{"--network", "none"}, []string{bin, "-test.run", "^$"})
	if lines := strings.Split(strings.TrimSpace(string(bad.Stderr)), "\n"); bad.Exit != 2 || len(lines) != 1 || !strings.Contains(lines[0], "--network must be host or local") {
		t.Errorf("--network none: want exit 2 and one line; %s", describe(bad))
	}
}

// TestOwnFilterCounted: a program's own seccomp filter fails getppid and
// traps uname in both its threads while they hand a condvar back and
// forth, so that hermit counts their calls; every uname is trapped, in
// every run and in a replay. Counting skipped a call at its entry, and
// hermit answered uname itself: the program's filter never ran, and no
// SIGSYS came (0 of 50).
func TestOwnFilterCounted(t *testing.T) {
	t.Parallel()
	printsEverywhere(t, cGuest("seccomp_count.c")(t), "getppid failed with EPERM 100 times of 100; uname trapped 50 times of 50\n")
}
