package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestWatchdogPreemptsSpinner: a thread that counts in a loop without
// syscalls while another waits to run, or sleeps, is no pure spin that
// hermit can stop deterministically (TestSpinWaits has those), but it
// must not hang hermit silently. The watchdog preempts it, names it, and
// says the run may not repeat.
func TestWatchdogPreemptsSpinner(t *testing.T) {
	for _, c := range []struct{ name, arg string }{
		{"setter ready", ""},
		// The setter sleeps: no thread waits to run, and only moving
		// virtual time to the sleep's end lets it.
		{"setter asleep", "sleep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := cGuest("spin.c", c.arg)(t)
			if c.arg == "" {
				argv = argv[:1]
			}
			start := time.Now()
			r := hermitRun(t, []string{"--watchdog", "300ms", "--summary"}, argv)
			if r.Exit != 0 || !strings.Contains(string(r.Stdout), "flag seen") {
				t.Fatalf("want exit 0 and \"flag seen\", got %s", describe(r))
			}
			warn := regexp.MustCompile(`hermit: warning: thread \d+ ran for 300ms without a syscall \(ip 0x[0-9a-f]+[ )]`)
			if !warn.Match(r.Stderr) {
				t.Errorf("stderr lacks the watchdog warning naming the thread and its ip:\n%s", r.Stderr)
			}
			if !regexp.MustCompile(`nondeterministic points: [1-9]\d* \(.*\d+ watchdog preemptions\)`).Match(r.Stderr) {
				t.Errorf("summary does not count the preemption as nondeterministic, by name:\n%s", r.Stderr)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v; the watchdog should fire after 300ms", d)
			}
			if c.arg == "" {
				return
			}
			// Its replay does not hang either: it preempts the spinner
			// where the recording did, after as much CPU time, which may
			// be another point of its loop (TestRecordedPreemptionReplays),
			// and ends as recorded or says where it diverged.
			dir := filepath.Join(t.TempDir(), "trace")
			rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), append([]string{"record", "--watchdog", "300ms", "-o", dir, "--"}, argv...)...)
			if rec.Exit != 0 {
				t.Fatalf("hermit record: %s", describe(rec))
			}
			rep := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "replay", "--autopilot", dir)
			if rep.Exit == 0 && string(rep.Stdout) != string(rec.Stdout) || rep.Exit != 0 && !strings.Contains(string(rep.Stderr), "replay diverged") {
				t.Errorf("replay: want the recorded output or a divergence; %s", describe(rep))
			}
		})
	}
}

// TestRecordedPreemptionReplays: a thread that computes without syscalls
// while another sleeps is preempted by the watchdog at a point no run
// repeats, and virtual time moves to the sleep's end there. The recording
// keeps each preemption, and the replay makes it after as much CPU time:
// it ends as recorded, with the recording's schedule digest, where it
// used to diverge (its own watchdog waited 10 s).
func TestRecordedPreemptionReplays(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildC(t, "spins.c")
	rounds := boundedRounds(t, bin, 600*time.Millisecond)
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "record", "--summary", "--watchdog", "150ms", "-o", dir, "--", bin, "bounded", rounds)
	dc := digestRE.FindSubmatch(rec.Stderr)
	if rec.Exit != 0 || string(rec.Stdout) != "bounded: "+rounds+" rounds\n" || dc == nil {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	if !regexp.MustCompile(`\([1-9]\d* watchdog preemptions\)`).Match(rec.Stderr) {
		t.Fatalf("the recording's watchdog preempted nothing: the replay would prove nothing; %s", describe(rec))
	}
	dump := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "trace", "dump", dir)
	if !regexp.MustCompile(`(?m)^#\d+ 2 preempted by the watchdog after \d+\.\d{9}s of CPU$`).Match(dump.Stdout) {
		t.Errorf("trace dump shows no preemption of thread 2; %s", describe(dump))
	}
	rep := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "replay", "--autopilot", "--summary", dir)
	if dp := digestRE.FindSubmatch(rep.Stderr); rep.Exit != 0 || string(rep.Stdout) != string(rec.Stdout) || dp == nil || string(dp[1]) != string(dc[1]) {
		t.Errorf("replay: want the recording's output, status and schedule digest %s; %s", dc[1], describe(rep))
	}
	if bytes.Contains(rep.Stderr, []byte("hermit: warning")) {
		t.Errorf("the replay warns of a preemption it repeats from the recording; %s", describe(rep))
	}
}

// TestUnwatchedRecordingReplays: a recording made with --watchdog=0, in
// which a thread computed with no syscall for longer than a replay's own
// watchdog waits (10 s) while another slept, replays to its end: the
// recording keeps its watchdog setting, none, and its replay preempts
// nothing either (it preempted the thread after 10 s, and diverged).
func TestUnwatchedRecordingReplays(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildC(t, "spins.c")
	rounds := boundedRounds(t, bin, 11*time.Second)
	dir := filepath.Join(t.TempDir(), "trace")
	opts := hermitOpts(t, nil)
	opts.Timeout = 2 * time.Minute
	rec := testenv.RunWith(t, opts, testenv.Hermit(t), "record", "--summary", "--watchdog=0", "-o", dir, "--", bin, "bounded", rounds)
	dc := digestRE.FindSubmatch(rec.Stderr)
	if rec.Exit != 0 || string(rec.Stdout) != "bounded: "+rounds+" rounds\n" || dc == nil {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	info := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "trace", "info", dir)
	if !regexp.MustCompile(`(?m)^flags:.* watchdog=0s( |$)`).Match(info.Stdout) {
		t.Errorf("trace info: want the flag watchdog=0s; %s", describe(info))
	}
	rep := testenv.RunWith(t, opts, testenv.Hermit(t), "replay", "--autopilot", "--summary", dir)
	if dp := digestRE.FindSubmatch(rep.Stderr); rep.Exit != 0 || string(rep.Stdout) != string(rec.Stdout) || dp == nil || string(dp[1]) != string(dc[1]) {
		t.Errorf("replay: want the recording's output, status and schedule digest %s; %s", dc[1], describe(rep))
	}
}

// boundedRounds is how many rounds of spins.c's "bounded" take about cpu
// of this machine's CPU (its CPU time: a loaded machine stretches the
// wall time), as a command-line argument.
func boundedRounds(t *testing.T, bin string, cpu time.Duration) string {
	t.Helper()
	cal := testenv.RunWith(t, testenv.Opts{Timeout: runTimeout}, bin, "bounded", "20000000")
	if cal.Exit != 0 || cal.CPU <= 0 {
		t.Fatalf("calibration: %s", describe(cal))
	}
	return strconv.FormatInt(int64(20000000*cpu/cal.CPU), 10)
}

// TestReplayChecksBytesWritten: where the recording's watchdog preempted
// a loop that counts until SIGALRM, a replay preempts it elsewhere in the
// loop and prints another count, of the same width: the write's
// arguments are the recording's, but not its bytes. The replay must say
// so and fail, never end as if it had repeated the recording.
func TestReplayChecksBytesWritten(t *testing.T) {
	t.Parallel()
	argv := cGuest("spins.c", "alarmcount", "count")(t)
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), append([]string{"record", "--watchdog", "300ms", "-o", dir, "--"}, argv...)...)
	if rec.Exit != 0 || !regexp.MustCompile(`alarmcount: \d{20} rounds\n$`).Match(rec.Stdout) {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	rep := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "replay", "--autopilot", dir)
	same := rep.Exit == 0 && string(rep.Stdout) == string(rec.Stdout)
	caught := rep.Exit == 125 && regexp.MustCompile(`replay diverged at event \d+: thread \d+: write\(0x1, 0x[0-9a-f]+, 0x28\) writes other bytes than the recording's`).Match(rep.Stderr)
	if !same && !caught {
		t.Errorf("replay: want the recorded output, or a divergence naming the write whose bytes differ; recording: %s\nreplay: %s", describe(rec), describe(rep))
	}
}

// TestLoopWaitingForAnotherProcess: a loop on a call hermit lets through
// (access) that waits for another process, sharing no memory with it, to
// make a file is the one wait count mode leaves to the watchdog
// (detcore/sharedmem.go): it ends as natively, with a warning that names
// the call and says the run may not repeat. Where the watchdog finds the
// thread, in access, the loop around it or access's PLT entry (no
// symbol: the program and an offset), is the host's timing.
func TestLoopWaitingForAnotherProcess(t *testing.T) {
	t.Parallel()
	r := hermitRun(t, []string{"--watchdog", "300ms", "--summary"}, cGuest("untraced_loops.c", "file")(t))
	if r.Exit != 0 || string(r.Stdout) != "file: the parent's file ended the child's loop on access\n" {
		t.Fatalf("want exit 0 and the loop's end; %s", describe(r))
	}
	warn := regexp.MustCompile(`hermit: warning: thread \d+ ran for 300ms without a syscall \(ip 0x[0-9a-f]+ \((?:access\+0x[0-9a-f]+ in libc[^)]*|(?:handshake|file_made)\+0x[0-9a-f]+ in untraced_loops|/\S+/untraced_loops\+0x[0-9a-f]+)\)\) while other threads waited to run; ` +
		`it is not a pure spin hermit can stop deterministically \(it calls access, which hermit lets run without a stop\)`)
	if !warn.Match(r.Stderr) || !bytes.Contains(r.Stderr, []byte("(1 watchdog preemptions)")) {
		t.Errorf("stderr lacks the watchdog's warning naming access, or the summary's preemption; %s", describe(r))
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
	if !regexp.MustCompile(`nondeterministic points: [1-9]\d* \(\d+ descriptors made ready from outside `).Match(r.Stderr) {
		t.Errorf("summary does not report the external wait as nondeterministic, by kind:\n%s", r.Stderr)
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

// TestPrivateTmp: of the host's /tmp the guest sees the entries its run
// names (here in an argument), not the others, so that files other
// programs make there between two runs change nothing; what it writes there
// stays in the run: the host never sees it and the next run starts clean,
// so mktemp names repeat. --tmp=overlay shows all of the host's /tmp, as
// does a run whose working directory is /tmp; --tmp=host shares it.
func TestPrivateTmp(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	dir := hostTmpDir(t, "hermit-private-tmp-")
	if err := os.WriteFile(dir+"/host.txt", []byte("from host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unnamed := filepath.Base(hostTmpDir(t, "hermit-unnamed-"))
	script := `cat "$1/host.txt"; ls "$1"; echo guest > "$1/guest.txt"; mktemp; ls -a /tmp`
	want := "from host\nhost.txt\n/tmp/tmp."
	var first string
	for i := 0; i < 2; i++ {
		r := hermitRun(t, nil, []string{sh, "-c", script, "sh", dir})
		if r.Exit != 0 || !strings.HasPrefix(string(r.Stdout), want) {
			t.Fatalf("run %d: want the host file listed alone and a mktemp name, got %s", i+1, describe(r))
		}
		listing := strings.Fields(string(r.Stdout))
		if !slices.Contains(listing, filepath.Base(dir)) || slices.Contains(listing, unnamed) {
			t.Fatalf("run %d: want /tmp to show %s (named in an argument) and not %s; %s", i+1, filepath.Base(dir), unnamed, describe(r))
		}
		if i == 0 {
			first = string(r.Stdout)
			hostTmpDir(t, "hermit-between-runs-")
		} else if string(r.Stdout) != first {
			t.Errorf("run 2 printed %q, run 1 %q: the first run's files or the host's new ones leaked into the second", r.Stdout, first)
		}
	}
	if _, err := os.Stat(dir + "/guest.txt"); !os.IsNotExist(err) {
		t.Errorf("the guest's write reached the host's /tmp (stat: %v)", err)
	}
	for _, c := range []struct {
		name  string
		flags []string
		dir   string
	}{{"overlay", []string{"--tmp=overlay"}, ""}, {"run in /tmp", nil, "/tmp"}} {
		r := testenv.RunWith(t, testenv.Opts{Timeout: runTimeout, Dir: c.dir}, testenv.Hermit(t), hermitArgs(c.flags, []string{sh, "-c", "ls -a /tmp"})...)
		if r.Exit != 0 || !slices.Contains(strings.Fields(string(r.Stdout)), unnamed) {
			t.Errorf("%s: want /tmp to show the host's %s; %s", c.name, unnamed, describe(r))
		}
	}
	r := hermitRun(t, []string{"--tmp=host"}, []string{sh, "-c", `echo guest > "$1/guest.txt"`, "sh", dir})
	if _, err := os.Stat(dir + "/guest.txt"); r.Exit != 0 || err != nil {
		t.Errorf("--tmp=host: the guest's write did not reach the host: exit %d, %v", r.Exit, err)
	}
}

// TestPrivateTmpHidesLateEntries: what another program makes in the
// host's /tmp while the run goes on does not show in the guest's either
// (the JVM lists /tmp to seed SHA1PRNG; a machine running tests makes and
// removes directories there all the time).
func TestPrivateTmpHidesLateEntries(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	var stdin io.WriteCloser
	cmd, out, stderr := startHermitRun(t, []string{sh, "-c", "echo ready; read x; ls -a /tmp"}, &stdin)
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); line != "ready\n" {
		t.Fatalf("first line %q (%v), want ready; stderr:\n%s", line, err, stderr)
	}
	late := filepath.Base(hostTmpDir(t, "hermit-late-"))
	fmt.Fprintln(stdin, "go")
	stdin.Close()
	rest, _ := io.ReadAll(r)
	// (The test's environment names a cache directory there.)
	if err := cmd.Wait(); err != nil || !strings.HasPrefix(string(rest), ".\n..\n") || slices.Contains(strings.Fields(string(rest)), late) {
		t.Errorf("want /tmp without the host's %s, made during the run; got %q, %v; stderr:\n%s", late, rest, err, stderr)
	}
}

// hostTmpDir makes a directory in the host's /tmp, removed at the end.
func hostTmpDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestPrivateTmpLikeADisk: under the private /tmp a host directory tree
// is removed by rm -rf (whose fts saw a directory's inode number change
// when the overlay copied it up, and failed), and two hard links to a
// host file have one inode number (they had two: git clone refused its
// own hard links); the host's tree is left as it was.
func TestPrivateTmpLikeADisk(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	testenv.Require(t, "stat")
	dir := hostTmpDir(t, "hermit-private-tmp-")
	if err := os.MkdirAll(dir+"/tree/a/b/c/d/e/f", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/file", []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `rm -rf "$1/tree" && echo removed; test -e "$1/tree" || echo gone; ln "$1/file" "$1/link" && [ "$(stat -c %i "$1/file")" = "$(stat -c %i "$1/link")" ] && echo one inode`
	want := "removed\ngone\none inode\n"
	if r := hermitRun(t, nil, []string{sh, "-c", script, "sh", dir}); r.Exit != 0 || string(r.Stdout) != want {
		t.Errorf("want %q; %s", want, describe(r))
	}
	if _, err := os.Stat(dir + "/tree/a/b/c/d/e/f"); err != nil {
		t.Errorf("the guest's rm -rf reached the host's /tmp: %v", err)
	}
}

// TestVirtualTimers: alarm, setitimer, timer_create, timerfd and
// clock_nanosleep(TIMER_ABSTIME) fire in virtual time: the expected counts,
// and no wall time spent waiting for them.
func TestVirtualTimers(t *testing.T) {
	t.Parallel()
	argv := cGuest("timers.c")(t)
	testenv.Hermit(t) // built (when it is) before the clock starts
	start := time.Now()
	r := hermitRun(t, nil, argv)
	want := "alarm+pause: 1\nsetitimer: 10\ntimer_create: 5\ntimerfd: 3\nabs sleep reached: 1\n"
	if r.Exit != 0 || string(r.Stdout) != want {
		t.Fatalf("want exit 0 and\n%s\ngot %s", want, describe(r))
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v of wall time; the timers' ~7 s should be virtual", d)
	}
	if r2 := hermitRun(t, nil, argv); string(r2.Stdout) != string(r.Stdout) {
		t.Errorf("second run printed %q", r2.Stdout)
	}
}

// cpuidVirtualized is what cpuid.c own prints under --virtualize-cpuid.
const cpuidVirtualized = "apic id 0 rdrand 0\nrdseed 0\ncpuinfo rdrand 0 rdseed 0\ncpuid off: get 0, faulted 1; on again: rdrand 0\n"

// TestVirtualizeCPUID: with --virtualize-cpuid, CPUID hides RDRAND and
// RDSEED and reports APIC id 0 whichever CPU the guest runs on, and
// /proc/cpuinfo's flags agree (they named both); a guest that turns cpuid
// off itself (ARCH_SET_CPUID) sees it fault and read 0 as it asked, and
// hermit's virtualization stays when it turns it on again (the call was
// the kernel's: it turned hermit's off, and cpuid read the host's).
func TestVirtualizeCPUID(t *testing.T) {
	t.Parallel()
	argv := cGuest("cpuid.c", "own")(t)
	want := cpuidVirtualized
	cpus := []string{"0"}
	if runtime.NumCPU() > 1 {
		cpus = append(cpus, "1")
	}
	for _, cpu := range cpus {
		r := hermitRun(t, []string{"--virtualize-cpuid", "--cpu", cpu}, argv)
		if r.Exit == 2 && strings.Contains(string(r.Stderr), "no CPUID faulting") {
			testenv.Skip(t, "this machine has no CPUID faulting: "+strings.TrimSpace(string(r.Stderr)))
		}
		if r.Exit != 0 || string(r.Stdout) != want {
			t.Errorf("--cpu %s: want exit 0 and %q, got %s", cpu, want, describe(r))
		}
	}
}

// TestProcSelfStable: /proc/self/stat and /proc/self/status show the same
// bytes on every run (page faults, CPU times, context switches, resident
// memory and allowed CPUs are fixed or virtual), and the reader is running.
func TestProcSelfStable(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	script := `cat /proc/self/stat /proc/self/status; cat /proc/$$/stat`
	var first []byte
	for i := 1; i <= 3; i++ {
		r := hermitRun(t, nil, []string{sh, "-c", script})
		if r.Exit != 0 || !strings.Contains(string(r.Stdout), "Cpus_allowed_list:\t0\n") ||
			!strings.Contains(string(r.Stdout), "State:\tR (running)\n") || !strings.Contains(string(r.Stdout), "SigQ:\t0/") {
			t.Fatalf("run %d: want the files with one allowed CPU, a running reader and no signals queued host-wide, got %s", i, describe(r))
		}
		if i == 1 {
			first = r.Stdout
		} else if d := firstDiff(first, r.Stdout); d != "" {
			t.Errorf("run %d differs from run 1 at %s", i, d)
		}
	}
}

// TestSystemFilesKeepMtime: installed files report their real mtimes, so
// CPython's .pyc files still match their sources and nothing is recompiled
// (the epoch in their place made every import recompile).
func TestSystemFilesKeepMtime(t *testing.T) {
	t.Parallel()
	py := testenv.Require(t, "/usr/bin/python3") // installed under /usr
	r := hermitRun(t, nil, []string{py, "-v", "-c", "import json"})
	if r.Exit != 0 || !strings.Contains(string(r.Stderr), "code object from") {
		t.Fatalf("want python3 -v to import json, got %s", describe(r))
	}
	if strings.Contains(string(r.Stderr), "bytecode is stale") {
		t.Errorf("python3 recompiled modules whose .pyc is current:\n%s", grepLines(r.Stderr, "stale"))
	}
}

// TestSystemFileMtimeByAnyName: an installed file keeps its real mtime
// whatever name the guest stats it by (tar archives /usr/include by
// relative paths and descriptors): an absolute path, a relative one, a
// descriptor (fstat), and find's fstatat on a directory descriptor all
// give the host's mtime, in a run and in the replay of its recording.
func TestSystemFileMtimeByAnyName(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	testenv.Require(t, "stat")
	testenv.Require(t, "find")
	const file = "/etc/passwd"
	st, err := os.Stat(file)
	if err != nil {
		testenv.Skip(t, "no "+file+" to stat: "+err.Error())
	}
	want := strings.Repeat(fmt.Sprintf("%d\n", st.ModTime().Unix()), 4)
	script := `stat -c %Y /etc/passwd; cd /etc && stat -c %Y passwd && stat -c %Y - < passwd && find /etc -maxdepth 1 -name passwd -printf '%Ts\n'`
	argv := []string{sh, "-c", script}
	r := hermitRun(t, nil, argv)
	if r.Exit != 0 || string(r.Stdout) != want {
		t.Fatalf("want the host's mtime of %s four times (%q); %s", file, want, describe(r))
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), append([]string{"record", "-o", dir, "--"}, argv...)...)
	if rec.Exit != 0 || string(rec.Stdout) != want {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	rec.Stderr = guestStderr(rec.Stderr)
	sameRun(t, "replay", rec, replay(t, dir))
}

func grepLines(b []byte, word string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestPythonEnvKeepsMtime: a Python installed outside /usr (pyenv, conda,
// uv, a virtual environment: a lib/python3.X directory at any depth) keeps
// its files' real mtimes by default, so an import finds its .pyc current
// and leaves it alone (hermit gave the sources the virtual epoch: every
// run recompiled them and wrote the host's .pyc again, which the next
// native run rewrote).
func TestPythonEnvKeepsMtime(t *testing.T) {
	t.Parallel()
	py := testenv.Require(t, "python3")
	// Not under /tmp: the guest's writes there go to a scratch layer.
	root, err := os.MkdirTemp("/var/tmp", "hermit-pyenv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	site := filepath.Join(root, "venv", "lib", "python3.11", "site-packages")
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(site, "hermitmod.py")
	if err := os.WriteFile(mod, []byte("VALUE = 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 5, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(mod, old, old); err != nil {
		t.Fatal(err)
	}
	env := []string{"PYTHONPATH=" + site, "PYTHONDONTWRITEBYTECODE="}
	if r := testenv.RunWith(t, testenv.Opts{Timeout: runTimeout, Env: env}, py, "-c", "import hermitmod"); r.Exit != 0 {
		t.Fatalf("native import: %s", describe(r))
	}
	pycs, _ := filepath.Glob(filepath.Join(site, "__pycache__", "hermitmod.*.pyc"))
	if len(pycs) != 1 {
		t.Fatalf("the native import left %d .pyc files for hermitmod", len(pycs))
	}
	before, err := os.ReadFile(pycs[0])
	if err != nil {
		t.Fatal(err)
	}
	r := testenv.RunWith(t, testenv.Opts{Timeout: runTimeout, Env: env}, testenv.Hermit(t), "run", "--", py, "-v", "-c", "import hermitmod; print(hermitmod.VALUE)")
	if r.Exit != 0 || string(r.Stdout) != "42\n" {
		t.Fatalf("hermit run of the import: %s", describe(r))
	}
	if strings.Contains(string(r.Stderr), "hermitmod") && strings.Contains(string(r.Stderr), "bytecode is stale") {
		t.Errorf("python3 under hermit recompiled hermitmod:\n%s", grepLines(r.Stderr, "stale"))
	}
	if after, err := os.ReadFile(pycs[0]); err != nil || string(after) != string(before) {
		t.Errorf("the hermit run rewrote the host's %s (%v)", pycs[0], err)
	}
}

// TestCPUTimeTimers: a program that computes without syscalls until its
// ITIMER_PROF or ITIMER_VIRTUAL signals came (a sampling profiler's) gets
// them: the watchdog preempts it as a timer on its CPU time comes due,
// and says so. (Its CPU time moved only at its stops, and it never ended.)
// Its recording replays to the same end.
func TestCPUTimeTimers(t *testing.T) {
	for _, c := range []struct{ arg, want string }{{"prof", "20 SIGPROF\n"}, {"virtual", "20 SIGVTALRM\n"}} {
		t.Run(c.arg, func(t *testing.T) {
			t.Parallel()
			argv := cGuest("cpu_timer.c", c.arg)(t)
			r := hermitRun(t, nil, argv)
			if r.Exit != 0 || string(r.Stdout) != c.want {
				t.Fatalf("hermit run: want %q; %s", c.want, describe(r))
			}
			if !regexp.MustCompile(`hermit: warning: thread \d+ ran without a syscall \(ip 0x[0-9a-f]+[ )].*until a timer on its CPU time came due`).Match(r.Stderr) {
				t.Errorf("stderr lacks the watchdog's warning about the timer:\n%s", r.Stderr)
			}
			dir := filepath.Join(t.TempDir(), "trace")
			rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), append([]string{"record", "-o", dir, "--"}, argv...)...)
			if rec.Exit != 0 || string(rec.Stdout) != c.want {
				t.Fatalf("hermit record: want %q; %s", c.want, describe(rec))
			}
			if rep := replay(t, dir); rep.Exit != 0 || string(rep.Stdout) != c.want {
				t.Errorf("hermit replay: want %q; %s", c.want, describe(rep))
			}
		})
	}
}
