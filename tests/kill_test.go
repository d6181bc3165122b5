package tests

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestKillIsDeterministic: a SIGKILL sent to a child that hermit holds
// stopped takes effect at once in the host; the run (schedule digest
// included) must not depend on when the host reaps it. The guest kills a
// sleeping child on a context timeout, then runs four commands at once.
func TestKillIsDeterministic(t *testing.T) {
	hermit := testenv.Hermit(t)
	bin := testenv.BuildGo(t, "gokill")
	digest := regexp.MustCompile(`schedule digest: [0-9a-f]+`)
	var first testenv.Result
	for i := 0; i < 5; i++ {
		r := testenv.Run(t, time.Minute, hermit, "run", "--summary", "--", bin)
		if r.Exit != 0 || !bytes.HasPrefix(r.Stdout, []byte("sleep: signal: killed\njob 0\n")) {
			t.Fatalf("run %d: exit %d, stdout %q\n%s", i, r.Exit, r.Stdout, r.Stderr)
		}
		if i == 0 {
			first = r
			continue
		}
		if !bytes.Equal(r.Stdout, first.Stdout) || !bytes.Equal(digest.Find(r.Stderr), digest.Find(first.Stderr)) {
			t.Fatalf("run %d differs from run 0:\n%s%s\nvs\n%s%s", i, r.Stdout, digest.Find(r.Stderr), first.Stdout, digest.Find(first.Stderr))
		}
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.Run(t, time.Minute, hermit, "record", "-o", dir, "--", bin)
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rec.Exit != 0 || rep.Exit != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
		t.Fatalf("record exit %d, replay exit %d:\n%s\nvs\n%s\n%s", rec.Exit, rep.Exit, rec.Stdout, rep.Stdout, rep.Stderr)
	}
}

// TestRecordReplayCPUID: with --virtualize-cpuid the recorded cpuid
// answers (RDRAND hidden, APIC ids fixed), and the guest's own turning
// cpuid off and on, are what replay gives, and the trace says to
// virtualize it.
func TestRecordReplayCPUID(t *testing.T) {
	hermit := testenv.Hermit(t)
	bin := testenv.BuildC(t, "cpuid.c")
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.Run(t, time.Minute, hermit, "record", "--virtualize-cpuid", "-o", dir, "--", bin, "own")
	if rec.Exit == 2 && bytes.Contains(rec.Stderr, []byte("no CPUID faulting")) {
		testenv.Skip(t, "this machine has no CPUID faulting: "+string(bytes.TrimSpace(rec.Stderr)))
	}
	want := cpuidVirtualized
	if rec.Exit != 0 || string(rec.Stdout) != want {
		t.Fatalf("record: exit %d, stdout %q, want %q\n%s", rec.Exit, rec.Stdout, want, rec.Stderr)
	}
	dump := testenv.Run(t, time.Minute, hermit, "trace", "dump", dir)
	if !bytes.Contains(dump.Stdout, []byte("host:cpuid(")) {
		t.Errorf("the trace holds no cpuid answers:\n%s", dump.Stdout)
	}
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rep.Exit != 0 || string(rep.Stdout) != want {
		t.Fatalf("replay: exit %d, stdout %q\n%s", rep.Exit, rep.Stdout, rep.Stderr)
	}
}

// recordYieldLoop records yield_loop making n events (sched_yield), so
// that replaying it takes a while, and returns the trace's directory.
func recordYieldLoop(t *testing.T, n string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	if rec := record(t, dir, nil, []string{testenv.BuildC(t, "yield_loop.c"), n}); rec.Exit != 0 {
		t.Fatalf("record yield_loop: %s", describe(rec))
	}
	return dir
}

// TestReplayStoppedBySignal: ^C, or SIGTERM from a CI job's timeout, stops
// a replay where it is: hermit says so, at which event of how many, and
// exits with the signal's status, not hermit's own failure (125) with
// nothing said.
func TestReplayStoppedBySignal(t *testing.T) {
	hermit := testenv.Hermit(t)
	dir := recordYieldLoop(t, "100000")
	stopped := regexp.MustCompile(`^hermit: replay stopped by (\S+) at event (\d+) of (\d+)\n$`)
	for _, c := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGTERM, "SIGTERM"}, {syscall.SIGINT, "^C"}} {
		cmd := exec.Command(hermit, "replay", "--autopilot", dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || line != "yielding 100000 times\n" {
			cmd.Process.Kill()
			t.Fatalf("replay printed %q, %v", line, err)
		}
		cmd.Process.Signal(c.sig)
		rest, _ := io.ReadAll(stdout)
		err = cmd.Wait()
		m := stopped.FindStringSubmatch(stderr.String())
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(c.sig) || m == nil || m[1] != c.name {
			t.Fatalf("replay after %v: %v, stderr %q; want status %d and where it stopped", c.sig, err, stderr.String(), 128+int(c.sig))
		}
		if at, _ := strconv.Atoi(m[2]); at == 0 || m[2] == m[3] || len(rest) != 0 {
			t.Errorf("replay after %v stopped at event %s of %s, then printed %q; want it stopped on its way", c.sig, m[2], m[3], rest)
		}
	}
}

// TestGDBReplayStoppedBySignal: SIGTERM (a CI job's timeout) or SIGHUP
// stops a replay served to a debugger as it stops one without: hermit
// says where and exits with the signal's status, whether the debugger is
// idle or waits for a continue that runs. (hermit had ignored both while
// a debugger was attached, and a continue through many breakpoint hits
// ran on for minutes.)
func TestGDBReplayStoppedBySignal(t *testing.T) {
	requireDebugging(t, "gdb")
	gdb := testenv.Require(t, "gdb")
	dir := recordYieldLoop(t, "20000")
	stopped := regexp.MustCompile(`(?m)^hermit: replay stopped by (\S+) at event (\d+) of (\d+)$`)
	for _, c := range []struct {
		name    string
		sig     syscall.Signal
		sigName string
		cmds    []string
		busy    string // in the stub's packet log once gdb waits for a resume
	}{
		{"idle", syscall.SIGHUP, "SIGHUP", []string{"monitor when", "shell sleep 600"}, "qRcmd,"},
		{"in a continue", syscall.SIGTERM, "SIGTERM", []string{"break sched_yield", "ignore 1 100000000", "continue"}, "vCont;c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startReplay(t, dir, "--debug=rsp")
			args := []string{"-nx", "-batch", "-iex", "set debuginfod enabled off", "-iex", "set remotetimeout 60", "-ex", "target extended-remote " + s.addr}
			for _, cmd := range c.cmds {
				args = append(args, "-ex", cmd)
			}
			g := exec.Command(gdb, args...)
			g.Dir = t.TempDir()
			var out bytes.Buffer
			g.Stdout, g.Stderr = &out, &out
			g.WaitDelay = time.Second // its shell's sleep keeps the output open
			if err := g.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { g.Process.Kill(); g.Wait() }()
			for deadline := time.Now().Add(listenTimeout); !bytes.Contains(s.stderr.Bytes(), []byte("rsp <- "+c.busy)); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					s.kill()
					t.Fatalf("gdb did not get to %q; gdb:\n%s\nstub:\n%s", c.busy, out.Bytes(), s.stderr.Bytes())
				}
			}
			time.Sleep(200 * time.Millisecond) // the continue runs
			s.cmd.Process.Signal(c.sig)
			rep := s.wait(t)
			m := stopped.FindStringSubmatch(string(rep.Stderr))
			if rep.Exit != 128+int(c.sig) || m == nil || m[1] != c.sigName {
				t.Fatalf("after %v: want status %d and where the replay stopped; %s", c.sig, 128+int(c.sig), describe(rep))
			}
		})
	}
}
