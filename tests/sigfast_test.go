package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestOutsideSignalLeavesHermitCode: a signal sent from outside the guest
// while a thread runs hermit's code in the guest (the fast page's futex
// wakes, the clock code in the vDSO) is delivered once hermit has
// stepped the thread out of that code, so its handler, which makes the
// same calls, never finds the page's words half written. The guest's
// handler counts the signals that interrupted it inside that code: 0
// under hermit. Realtime signals sent close together are each delivered,
// as they queue natively: one that came while hermit stepped the thread
// out for the one before was lost (about a third of 200).
func TestOutsideSignalLeavesHermitCode(t *testing.T) {
	t.Run("SIGUSR1", func(t *testing.T) {
		outsideSignals(t, cGuest("sigfast.c", "100")(t), "100 signals, 0 inside hermit's code\n", func(pid int) {
			// Until it has had enough.
			for syscall.Kill(pid, syscall.SIGUSR1) == nil {
				time.Sleep(2 * time.Millisecond)
			}
		})
	})
	t.Run("realtime", func(t *testing.T) {
		const sigrtmin = 34 // glibc's
		outsideSignals(t, cGuest("sigfast.c", "200", "rt")(t), "200 signals, 0 inside hermit's code\n", func(pid int) {
			for i := 0; i < 200; i++ {
				_ = syscall.Kill(pid, sigrtmin)
				time.Sleep(500 * time.Microsecond)
			}
			// Delivered after every SIGRTMIN pending: the end.
			_ = syscall.Kill(pid, sigrtmin+1)
		})
	})
}

// TestWaitForSignalIsNoDeadlock: a program whose only thread waits on a
// pipe of its own that its SIGUSR1 handler writes (a daemon waiting for
// a signal) is not a deadlock: past the 2 s after which hermit reports
// one, a SIGUSR1 from outside ends the wait (hermit reported the
// deadlock, exit 125).
func TestWaitForSignalIsNoDeadlock(t *testing.T) {
	t.Parallel()
	outsideSignals(t, cGuest("selfpipe.c")(t), "woken by SIGUSR1\n", func(pid int) {
		time.Sleep(3 * time.Second)
		_ = syscall.Kill(pid, syscall.SIGUSR1)
	})
}

// outsideSignals runs argv under hermit, and once it prints "ready" calls
// send with its host pid; then its output must be want.
func outsideSignals(t *testing.T, argv []string, want string, send func(pid int)) {
	cmd, out, stderr := startHermitRun(t, argv, nil)
	done := make(chan error, 1)
	var rest bytes.Buffer
	go func() {
		r := bufio.NewReader(out)
		line, err := r.ReadString('\n')
		if err != nil || line != "ready\n" {
			done <- err
			return
		}
		// The guest's handler is set: signal it from outside, as a
		// user or a test harness would.
		if pid := guestPid(argv); pid > 0 {
			send(pid)
		}
		_, err = rest.ReadFrom(r)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("reading the guest's output: %v", err)
		}
	case <-time.After(runTimeout):
		_ = cmd.Process.Kill()
		t.Fatalf("no end after %v; stderr:\n%s", runTimeout, stderr.String())
	}
	if err := cmd.Wait(); err != nil || rest.String() != want {
		t.Fatalf("hermit run: %v; stdout after ready %q, want %q; stderr:\n%s", err, rest.String(), want, stderr.String())
	}
}

// TestOutsideSignalInterruptsRead: a SIGINT from outside (a user's
// Ctrl-C) interrupts a read of stdin, a pipe that stays open and empty,
// made through libc's read site once hermit has patched it (the read then
// waits in hermit's slow path in the guest). The handler runs and the
// read ends with EINTR, as natively; hermit made the read again, the
// signal lost, and the program waited for ever. The signal is sent again
// until the read ends: one that comes before the read begins only runs
// the handler, natively too. A SIGINT sent to hermit alone (kill(1) from
// a script; hermit in a process group of its own, as a background job
// is) is passed on to the guest: hermit ignored it, and ran on. Under
// hermit record, the replay sees the signal end the read too (it stopped
// there, diverged: the signal was not in the trace); the signal is sent
// once the read waits (300 ms after "ready"), since one that comes while
// the thread runs does not replay.
func TestOutsideSignalInterruptsRead(t *testing.T) {
	toGuest := func(_ *exec.Cmd, argv []string) int { return guestPid(argv) }
	toHermit := func(cmd *exec.Cmd, argv []string) int {
		if guestPid(argv) == 0 {
			return 0
		}
		return cmd.Process.Pid
	}
	// hermit's launcher, the guest's parent (pid 1 of its namespace):
	// the kernel gave it only the signals it handles, and it handled none.
	toLauncher := func(_ *exec.Cmd, argv []string) int {
		pid := guestPid(argv)
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if pid == 0 || err != nil {
			return 0
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 {
			return 0
		}
		ppid, _ := strconv.Atoi(f[1])
		return ppid
	}
	interrupted := regexp.MustCompile(`\A(read|poll) stdin: -1 \(Interrupted system call\), handler ran [1-9]\d* times\n\z`)
	signalfd := regexp.MustCompile(`\Athe wait returned 1; read 128 bytes: signal 2\n\z`)
	for _, c := range []struct {
		name   string
		target func(cmd *exec.Cmd, argv []string) int
		record bool
		guest  argvFunc
		want   *regexp.Regexp
	}{
		{"to the guest", toGuest, false, cGuest("pipe_signal.c", "stdin"), interrupted},
		{"to hermit", toHermit, false, cGuest("pipe_signal.c", "stdin"), interrupted},
		{"recorded, to the guest", toGuest, true, cGuest("pipe_signal.c", "stdin"), interrupted},
		{"recorded, to hermit", toHermit, true, cGuest("pipe_signal.c", "stdin"), interrupted},
		{"to the launcher", toLauncher, false, cGuest("pipe_signal.c", "stdin"), interrupted},
		{"recorded, to the launcher", toLauncher, true, cGuest("pipe_signal.c", "stdin"), interrupted},
		// A poll with a timeout: hermit waited for it whole (20 s here;
		// 10 at most) before it looked for signals.
		{"poll with a timeout", toGuest, false, cGuest("pipe_signal.c", "poll"), interrupted},
		{"recorded, poll with a timeout", toGuest, true, cGuest("pipe_signal.c", "poll"), interrupted},
		// An epoll_wait of a signalfd (PostgreSQL's latches): hermit's
		// poll of the epoll took the signalfd off its ready list, and
		// the guest's epoll_wait slept for ever with the signal pending.
		{"epoll of a signalfd", toGuest, false, cGuest("signalfd_wait.c", "outside"), signalfd},
		{"recorded, epoll of a signalfd", toGuest, true, cGuest("signalfd_wait.c", "outside"), signalfd},
		// One SIGINT to a Go server idle in its netpoller: the thread in
		// epoll_pwait took it, and the main thread, woken in a futex
		// wait by the same signal, waited in the kernel for ever; the
		// first signal was lost (and a recording of the second hung in
		// replay).
		{"once, a Go server", toGuest, false, goGuest("gosigidle"), goInterrupted},
		{"recorded, once, a Go server", toGuest, true, goGuest("gosigidle"), goInterrupted},
		// The same in C, where it comes 1 time in 4: the thread that took
		// the signal woke, from its handler, the thread waiting for it,
		// which the signal had woken too but which had not run yet; the
		// wake passed it over, and it waited again for ever.
		{"once, woken by the handler", toGuest, false, cGuest("sigwake_race.c"), goInterrupted},
		{"recorded, once, woken by the handler", toGuest, true, cGuest("sigwake_race.c"), goInterrupted},
	} {
		t.Run(c.name, func(t *testing.T) {
			argv := c.guest(t)
			runs := 1
			if c.want == goInterrupted && !c.record {
				runs = 8 // it is a race
			}
			for i := 0; i < runs && !t.Failed(); i++ {
				interruptRead(t, c.target, c.record, argv, c.want)
			}
		})
	}
}

// goInterrupted is what gosigidle prints once its SIGINT came.
var goInterrupted = regexp.MustCompile(`\Agot interrupt\n\z`)

func interruptRead(t *testing.T, target func(cmd *exec.Cmd, argv []string) int, record bool, argv []string, want *regexp.Regexp) {
	// A guest that waits for one signal gets one: a second would hide
	// the first's loss.
	once := want == goInterrupted
	var stdin io.WriteCloser // open, never written: the read waits
	args := hermitArgs(nil, argv)
	dir := filepath.Join(t.TempDir(), "trace")
	if record {
		args = append([]string{"record", "-o", dir, "--"}, argv...)
	}
	hermit := exec.Command(testenv.Hermit(t), args...)
	hermit.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd, out, stderr := startCmd(t, hermit, &stdin)
	defer stdin.Close()
	lines := make(chan string, 2)
	go func() {
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- line
		}
	}()
	deadline := time.After(runTimeout)
	if first := <-lines; first != "ready\n" {
		t.Fatalf("first line %q, want ready; stderr:\n%s", first, stderr.String())
	}
	if record {
		// A signal replays where it ends a wait, the read's; one that
		// came while the thread ran (before the read) would not.
		time.Sleep(300 * time.Millisecond)
	}
	pid := target(cmd, argv)
	if pid == 0 {
		t.Fatal("no guest process to signal")
	}
	got := ""
	for tick, sent := time.NewTicker(100*time.Millisecond), false; got == ""; {
		if !once || !sent {
			_ = syscall.Kill(pid, syscall.SIGINT)
			sent = true
		}
		select {
		case l, ok := <-lines:
			got = l
			if !ok {
				got = "the output ended"
			}
		case <-tick.C:
		case <-deadline:
			got = fmt.Sprintf("no output %v after SIGINTs", runTimeout)
		}
	}
	if !want.MatchString(got) {
		t.Errorf("after SIGINT: %q, want %s; stderr:\n%s", got, want, stderr.String())
	}
	if !record {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hermit record: %v; stderr:\n%s", err, stderr.String())
	}
	if r := replay(t, dir); r.Exit != 0 || string(r.Stdout) != "ready\n"+got {
		t.Errorf("replay: want exit 0 and the recording's output %q; %s", "ready\n"+got, describe(r))
	}
}

// startHermitRun starts `hermit run` of argv, its stdout a pipe read
// from out, its stderr kept; with stdin set, its stdin a pipe too.
func startHermitRun(t *testing.T, argv []string, stdin *io.WriteCloser) (*exec.Cmd, io.Reader, *bytes.Buffer) {
	t.Helper()
	return startCmd(t, exec.Command(testenv.Hermit(t), hermitArgs(nil, argv)...), stdin)
}

// startCmd starts cmd as startHermitRun does.
func startCmd(t *testing.T, cmd *exec.Cmd, stdin *io.WriteCloser) (*exec.Cmd, io.Reader, *bytes.Buffer) {
	t.Helper()
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	if stdin != nil {
		w, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		*stdin = w
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out, stderr
}

// guestPid finds the host pid of the process that runs argv (its argv[0]
// and arguments as given; hermit's launcher has its own name first).
func guestPid(argv []string) int {
	want := []byte(filepath.Clean(argv[0]))
	for _, a := range argv[1:] {
		want = append(append(want, 0), a...)
	}
	want = append(want, 0)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Equal(b, want) {
				return pid
			}
		}
	}
	return 0
}

// TestOutsideSignalWhileComputing: a signal from outside that reaches a
// thread as it computes is in the recording, and its replay ends the way
// the recording did.
//   - A thread that makes no call gets it where hermit preempts it, soon
//     after; the replay gives it after as much CPU time (as it repeats a
//     watchdog preemption), and the handler ends the loop there too. The
//     recording warns that the point may differ. (Before, the replay never
//     got the signal and computed for ever.)
//   - A thread that makes a call every 100 us gets it at the entry of its
//     next call, before the call, and so does the replay's: the loop ends
//     after as many calls, without a warning. (Before, a signal that came
//     between two calls was given after as much CPU time, and a replay
//     whose thread reached its next call first diverged: "expected the
//     watchdog's preemption of thread 2 got uname".) A signal that comes
//     as the thread stands at a call replays exactly in any case, so the
//     recording is made three times.
func TestOutsideSignalWhileComputing(t *testing.T) {
	t.Parallel()
	t.Run("no calls", func(t *testing.T) {
		dir, rest, stderr := recordOutsideCompute(t, cGuest("outside_compute.c")(t))
		const want = "the loop ended at SIGUSR1\n"
		if rest != want || !strings.Contains(stderr, "got SIGUSR1 from outside while it ran") {
			t.Fatalf("hermit record: stdout after ready %q; want %q and a warning; stderr:\n%s", rest, want, stderr)
		}
		if rep := replay(t, dir); rep.Exit != 0 || string(rep.Stdout) != "ready\n"+want {
			t.Errorf("replay: want exit 0 and the recording's output; %s", describe(rep))
		}
	})
	t.Run("calls", func(t *testing.T) {
		argv := cGuest("outside_compute.c", "calls")(t)
		for i := 0; i < 3; i++ {
			dir, rest, stderr := recordOutsideCompute(t, argv)
			if !regexp.MustCompile(`^the loop ended at SIGUSR1 after [0-9]+ calls\n$`).MatchString(rest) || strings.Contains(stderr, "warning") {
				t.Fatalf("hermit record: stdout after ready %q; want the calls it made, and no warning; stderr:\n%s", rest, stderr)
			}
			if rep := replay(t, dir); rep.Exit != 0 || string(rep.Stdout) != "ready\n"+rest {
				t.Fatalf("replay %d: want exit 0 and the recording's output %q; %s", i+1, rest, describe(rep))
			}
		}
	})
}

// recordOutsideCompute records outside_compute.c's argv, sends it SIGUSR1
// every 100 ms once it is ready until its output ends, and returns the
// trace, the output after "ready", and hermit's stderr; a record that
// does not exit 0 fails t.
func recordOutsideCompute(t *testing.T, argv []string) (dir, rest, stderr string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "trace")
	cmd, out, errBuf := startCmd(t, exec.Command(testenv.Hermit(t), append([]string{"record", "-o", dir, "--"}, argv...)...), nil)
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); line != "ready\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("first line %q (%v), want ready; stderr:\n%s", line, err, errBuf)
	}
	// The loop runs by then.
	time.Sleep(200 * time.Millisecond)
	pid := guestPid(argv)
	done := make(chan struct{})
	var b []byte
	go func() {
		defer close(done)
		b, _ = io.ReadAll(r)
	}()
	usr1Until(t, cmd, pid, done, errBuf)
	_ = cmd.Wait()
	if cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("hermit record: exit %d, want 0; stdout after ready %q; stderr:\n%s", cmd.ProcessState.ExitCode(), b, errBuf)
	}
	return dir, string(b), errBuf.String()
}

// TestReplaySaysItWritesOtherBytes: a replay whose program writes other
// bytes than its recording's to stdout redirected to a file says so and
// exits 125, as it does for a pipe. Such writes take hermit's fast path
// (no stop), so before, a replay printed other bytes there and exited 0.
// The guest computes until a SIGUSR1 from outside, then prints how many
// rounds it made: the replay gives the signal after as much CPU time, at
// a point that may differ (the recording warns), so its count may too.
func TestReplaySaysItWritesOtherBytes(t *testing.T) {
	t.Parallel()
	argv := cGuest("outside_compute.c", "rounds")(t)
	tmp := t.TempDir()
	dir, recOut, repOut := filepath.Join(tmp, "trace"), filepath.Join(tmp, "rec.out"), filepath.Join(tmp, "rep.out")
	f, err := os.Create(recOut)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(testenv.Hermit(t), append([]string{"record", "-o", dir, "--"}, argv...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = f, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	for b, _ := os.ReadFile(recOut); string(b) != "ready\n"; b, _ = os.ReadFile(recOut) {
		select {
		case <-exited:
			t.Fatalf("hermit record exited before the guest was ready; stdout %q; stderr:\n%s", b, &stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	time.Sleep(200 * time.Millisecond)
	pid := guestPid(argv)
	usr1Until(t, cmd, pid, exited, &stderr)
	rec, _ := os.ReadFile(recOut)
	if !regexp.MustCompile(`^ready\nthe loop ended at SIGUSR1 after [0-9]+ rounds\n$`).Match(rec) {
		t.Fatalf("hermit record: stdout %q, exit %d; stderr:\n%s", rec, cmd.ProcessState.ExitCode(), &stderr)
	}
	g, err := os.Create(repOut)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	rcmd := exec.Command(testenv.Hermit(t), "replay", "--autopilot", dir)
	var rerr bytes.Buffer
	rcmd.Stdout, rcmd.Stderr = g, &rerr
	_ = rcmd.Run()
	rep, _ := os.ReadFile(repOut)
	switch code := rcmd.ProcessState.ExitCode(); {
	case bytes.Equal(rep, rec):
		t.Logf("the replay printed the recording's count; exit %d", code)
		if code != 0 {
			t.Errorf("replay: the recording's output, but exit %d; stderr:\n%s", code, &rerr)
		}
	case code != 125 || !strings.Contains(rerr.String(), "wrote other bytes than the recording's"):
		t.Errorf("replay printed %q where the recording printed %q, and exited %d without saying so; stderr:\n%s", rep, rec, code, &rerr)
	}
}

// usr1Until sends pid SIGUSR1 every 100 ms until done is closed; a record
// (cmd) that has not ended after runTimeout is killed and fails t.
func usr1Until(t *testing.T, cmd *exec.Cmd, pid int, done <-chan struct{}, stderr fmt.Stringer) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(runTimeout)
	for {
		_ = syscall.Kill(pid, syscall.SIGUSR1)
		select {
		case <-tick.C:
		case <-done:
			return
		case <-timeout:
			_ = cmd.Process.Kill()
			t.Fatalf("hermit record: no end %v after SIGUSR1; stderr:\n%s", runTimeout, stderr)
		}
	}
}
