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

	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestProgramErrors checks the exit status and the one-line error for a
// program hermit cannot start.
func TestProgramErrors(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		prog string
		exit int
	}{
		{"missing absolute path", filepath.Join(dir, "no-such-program"), 127},
		{"missing in PATH", "hermit-test-no-such-program", 127},
		{"not executable", notExec, 126},
		{"directory", dir, 126},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := hermitRun(t, nil, []string{c.prog})
			if r.Exit != c.exit {
				t.Errorf("exit %d, want %d", r.Exit, c.exit)
			}
			if len(r.Stdout) != 0 {
				t.Errorf("stdout %q, want empty", r.Stdout)
			}
			msg := string(r.Stderr)
			if !strings.HasSuffix(msg, "\n") || strings.Count(msg, "\n") != 1 || len(strings.TrimSpace(msg)) == 0 {
				t.Errorf("stderr %q, want one line", msg)
			}
			if !strings.Contains(msg, filepath.Base(c.prog)) {
				t.Errorf("stderr %q does not name the program %q", msg, c.prog)
			}
		})
	}
}

// TestPassthrough checks that the guest's stdin, stdout, stderr, arguments
// and exit status reach the user unchanged.
func TestPassthrough(t *testing.T) {
	cases := []struct {
		name           string
		argv           argvFunc
		stdin          string
		stdout, stderr string
		exit           int
	}{
		{"stdin to stdout", tool("cat"), "hello\nworld\n", "hello\nworld\n", "", 0},
		{"stdout stderr exit status", tool("sh", "-c", "echo out; echo err >&2; exit 42"), "", "out\n", "err\n", 42},
		{"arguments", tool("printf", "%s|", "a b", "", "c"), "", "a b||c|", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testenv.Opts{Timeout: runTimeout, Stdin: []byte(c.stdin)}
			r := testenv.RunWith(t, o, testenv.Hermit(t), hermitArgs(nil, c.argv(t))...)
			if string(r.Stdout) != c.stdout || string(r.Stderr) != c.stderr || r.Exit != c.exit {
				t.Errorf("got %s\nwant exit %d, stdout %q, stderr %q", describe(r), c.exit, c.stdout, c.stderr)
			}
		})
	}
}

// summaryRE matches the whole --summary block; the guests used with it
// write nothing else on stderr, and exec one program, which reads the
// clock through hermit's clock page.
var summaryRE = regexp.MustCompile(`\Ahermit summary:
  threads: (\d+)
  processes: (\d+)
  syscalls intercepted: (\d+)
  ptrace stops: (\d+)
  syscall stops: (\d+)
  event stops: (\d+)
  scheduler turns: (\d+)
  nondeterministic points: (\d+)
(?:  counted syscalls: \d+ \(.*; (\d+) ptrace stops\)
)?(?:  ready descriptors polled again: \d+
)?  clock reads: \d+ in the guest without a stop, \d+ trapped \(programs: 1 read hermit's clock page, 0 only the trapped syscalls\)
(?:  fast calls: \d+ writes and \d+ reads of files and pipes, \d+ futex wakes, without a stop \(\d+ libc sites patched\)
)?  schedule digest: ([0-9a-f]{16})
  rdtsc: (?:virtualized \(\d+ answered from the virtual clock: \d+ trapped, \d+ read hermit's clock page; sites patched \d+ times\)|the host's counter \(this machine cannot trap rdtsc: .*\))
  cpuid: the host's values \(.*\)
\z`)

// TestSummary checks the --summary block, its thread and process counts, and
// that deterministic reruns give the same figures and schedule digest.
func TestSummary(t *testing.T) {
	cases := []struct {
		name               string
		argv               argvFunc
		threads, processes string
	}{
		{"8 threads", cGuest("racy_counter.c"), "9", "1"},
		{"20 children", cGuest("fork_pipe.c"), "21", "21"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			var first []string
			for i := 1; i <= 3; i++ {
				r := hermitRun(t, []string{"--summary"}, argv)
				m := summaryRE.FindStringSubmatch(string(r.Stderr))
				if r.Exit != 0 || m == nil {
					t.Fatalf("run %d: want exit 0 and the summary block on stderr, got %s", i, describe(r))
				}
				if i == 1 {
					first = m
					checkSummaryCounts(t, m, c.threads, c.processes)
					continue
				}
				if d := firstDiff([]byte(first[0]), []byte(m[0])); d != "" {
					t.Errorf("run %d: summary differs from run 1 at %s", i, d)
				}
			}
		})
	}
}

func checkSummaryCounts(t *testing.T, m []string, threads, processes string) {
	t.Helper()
	if m[1] != threads || m[2] != processes {
		t.Errorf("summary: threads %s, processes %s; want %s, %s", m[1], m[2], threads, processes)
	}
	for i, name := range map[int]string{3: "syscalls intercepted", 4: "ptrace stops", 5: "syscall stops", 7: "scheduler turns"} {
		if m[i] == "0" {
			t.Errorf("summary: %s is 0", name)
		}
	}
	// Each intercepted syscall costs exactly one stop at its seccomp stop;
	// the rest are count mode's (detcore/count.go), which the summary
	// counts apart.
	if virt := strings.Contains(m[0], "  rdtsc: virtualized"); virt != ptrace.TSCTraps() {
		t.Errorf("summary: rdtsc virtualized %v, but the machine traps rdtsc: %v", virt, ptrace.TSCTraps())
	}
	countStops, _ := strconv.Atoi(m[9])
	if stops, _ := strconv.Atoi(m[5]); strconv.Itoa(stops-countStops) != m[3] {
		t.Errorf("summary: %s syscall stops, %d of them count mode's, for %s intercepted syscalls; want one each", m[5], countStops, m[3])
	}
}

// TestVerify checks --verify: a deterministic guest passes with one copy of
// its output and its own status; a guest reading an input that changes
// between the two runs fails with status 125.
func TestVerify(t *testing.T) {
	t.Run("deterministic guest", func(t *testing.T) {
		argv := cGuest("racy_counter.c")(t)
		plain := hermitRun(t, nil, argv)
		r := hermitRun(t, []string{"--verify"}, argv)
		if r.Exit != 0 || !bytes.Equal(r.Stdout, plain.Stdout) {
			t.Errorf("want exit 0 and the stdout of one plain run:\n%s\ngot %s", plain.Stdout, describe(r))
		}
	})
	t.Run("status and single copy of output", func(t *testing.T) {
		r := hermitRun(t, []string{"--verify"}, tool("sh", "-c", "echo out; echo err >&2; exit 3")(t))
		if r.Exit != 3 || string(r.Stdout) != "out\n" || string(r.Stderr) != "err\n" {
			t.Errorf("want exit 3, stdout \"out\\n\", stderr \"err\\n\"; got %s", describe(r))
		}
	})
	t.Run("input changes between runs", func(t *testing.T) {
		// --tmp=host: the test's temporary directory is under /tmp, and the
		// guest must change it for real.
		f := filepath.Join(t.TempDir(), "count")
		r := hermitRun(t, []string{"--verify", "--tmp=host"}, tool("sh", "-c", "echo x >> "+f+"; wc -l < "+f)(t))
		if r.Exit != 125 || len(r.Stderr) == 0 {
			t.Errorf("want exit 125 and the difference on stderr, got %s", describe(r))
		}
		data, err := os.ReadFile(f)
		if err != nil || string(data) != "x\nx\n" {
			t.Errorf("input file %q, %v; want the guest to have run twice", data, err)
		}
	})
}

// TestListIntercepted checks --list-intercepted and that strace accepts the
// list with each name marked optional ("?name": strace 6.1 does not know
// the newest futex calls), as the benchmark harness passes it.
func TestListIntercepted(t *testing.T) {
	r := testenv.Run(t, runTimeout, testenv.Hermit(t), "run", "--list-intercepted")
	list := strings.TrimSuffix(string(r.Stdout), "\n")
	if r.Exit != 0 || strings.Contains(list, "\n") {
		t.Fatalf("want exit 0 and one line, got %s", describe(r))
	}
	nameRE := regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		if !nameRE.MatchString(name) || seen[name] {
			t.Errorf("bad or repeated syscall name %q in %q", name, list)
		}
		seen[name] = true
	}
	for _, name := range []string{"futex", "exit_group", "wait4", "read", "write"} {
		if !seen[name] {
			t.Errorf("list %q lacks %s", list, name)
		}
	}

	t.Run("strace accepts it", func(t *testing.T) {
		strace := testenv.Require(t, "strace")
		optional := "?" + strings.ReplaceAll(list, ",", ",?")
		s := testenv.Run(t, runTimeout, strace, "-f", "--seccomp-bpf", "-e", "trace="+optional, "-o", "/dev/null", "/bin/true")
		if s.Exit != 0 {
			t.Errorf("strace rejected the list: %s", describe(s))
		}
	})
}

// TestBadFlagValues: out-of-range values and unknown flags get one line
// (pointing to --help for an unknown flag) and status 2, before anything
// runs; --help prints the usage on stdout and exits 0.
func TestBadFlagValues(t *testing.T) {
	hermit := testenv.Hermit(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--timeslice", "0", "--", "true"}, "--timeslice 0: want 1 or more"},
		{[]string{"run", "--watchdog", "-1s", "--", "true"}, "--watchdog -1s: want a duration of 0 (never) or more"},
		{[]string{"run", "--cpu", "99", "--", "true"}, "--cpu 99: this machine has CPUs 0 to"},
		{[]string{"run", "--cpu", "x", "--", "true"}, `--cpu "x": want first, auto, none or a CPU number`},
		{[]string{"run", "--bogus", "--", "true"}, "flag provided but not defined: -bogus (see hermit run --help)"},
		{[]string{"record", "--timeslice", "-3", "--", "true"}, "--timeslice -3: want 1 or more"},
		{[]string{"record", "--bogus", "--", "true"}, "(see hermit record --help)"},
		{[]string{"replay", "--cpu", "99", "--autopilot"}, "--cpu 99: this machine has CPUs 0 to"},
		{[]string{"run", "--cpu", "recorded", "--", "true"}, `--cpu "recorded": want first, auto, none or a CPU number`},
		{[]string{"replay", "--cpu", "x", "--autopilot"}, `--cpu "x": want recorded, first, auto, none or a CPU number`},
	} {
		r := testenv.Run(t, runTimeout, hermit, c.args...)
		lines := strings.Split(strings.TrimSpace(string(r.Stderr)), "\n")
		if r.Exit != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) || len(r.Stdout) > 0 {
			t.Errorf("hermit %s: want status 2 and one line with %q; %s", strings.Join(c.args, " "), c.want, describe(r))
		}
	}
	for _, cmd := range []string{"run", "record", "replay"} {
		r := testenv.Run(t, runTimeout, hermit, cmd, "--help")
		if r.Exit != 0 || !strings.HasPrefix(string(r.Stdout), "Usage: hermit "+cmd) || len(r.Stderr) > 0 {
			t.Errorf("hermit %s --help: want the usage on stdout and status 0; %s", cmd, describe(r))
		}
	}
}

// TestCountModeStops: a call hermit intercepts and answers itself costs
// one ptrace stop even while its thread counts its calls (another thread
// is ready): 1000 futex handoffs between two threads take about one stop
// per intercepted call, not two. With --no-fast-io, so that the wakes are
// trapped too (TestFastFutexWakes has them without a stop).
func TestCountModeStops(t *testing.T) {
	t.Parallel()
	r := hermitRun(t, []string{"--summary", "--no-fast-io"}, cGuest("handoff.c", "1000")(t))
	m := summaryRE.FindStringSubmatch(string(r.Stderr))
	if r.Exit != 0 || string(r.Stdout) != "1000 handoffs\n" || m == nil {
		t.Fatalf("want 1000 handoffs and the summary; %s", describe(r))
	}
	calls, _ := strconv.Atoi(m[3])
	stops, _ := strconv.Atoi(m[4])
	if calls < 2000 || stops > calls+calls/20 {
		t.Errorf("%d intercepted calls took %d ptrace stops; want about one each", calls, stops)
	}
}

// TestCountModeCosts: what count mode costs and when, per unit of work
// between 2,000 and 10,000 (the program's start has costs of its own). A
// write hermit lets run in the kernel costs two ptrace stops while its
// thread counts (an alarm is armed), not four; a Go program's writes
// cost one, as its sysmon thread's sleep makes no thread count; and a
// process's calls are not counted for another process that shares no
// memory with it (make -j2, a pipeline).
func TestCountModeCosts(t *testing.T) {
	cases := []struct {
		name string
		argv func(n int) argvFunc
		out  string
		most float64 // stops per write
	}{
		{"C writes with an alarm armed", func(n int) argvFunc { return cGuest("handoff.c", "writes", strconv.Itoa(n)) }, "%d writes\n", 2.1},
		{"Go writes beside sysmon's sleep", func(n int) argvFunc { return goGuest("gowrites", strconv.Itoa(n)) }, "gowrites: %d bytes\n", 1.1},
		// Two processes that share no memory: neither counts the
		// other's getppid calls (detcore/sharedmem.go); a write every
		// 100 calls in each is a stop.
		{"two processes apart", func(n int) argvFunc { return cGuest("untraced_loops.c", "apart", strconv.Itoa(n)) }, "apart: %d calls in each process\n", 0.05},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var stops [2]int
			ns := [2]int{2000, 10000}
			for i, k := range ns {
				r := hermitRun(t, []string{"--summary"}, c.argv(k)(t))
				m := summaryRE.FindStringSubmatch(string(r.Stderr))
				if want := fmt.Sprintf(c.out, k); r.Exit != 0 || string(r.Stdout) != want || m == nil {
					t.Fatalf("want %q and the summary; %s", want, describe(r))
				}
				stops[i], _ = strconv.Atoi(m[4])
			}
			if per := float64(stops[1]-stops[0]) / float64(ns[1]-ns[0]); per > c.most {
				t.Errorf("%d writes took %d ptrace stops, %d took %d: %.2f a write, want at most %.2f", ns[0], stops[0], ns[1], stops[1], per, c.most)
			}
		})
	}
}
