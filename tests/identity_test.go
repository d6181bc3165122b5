package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// epoch2030 is the --epoch the identity tests move the guest's dates to.
const epoch2030 = "2030-01-01T00:00:00Z"

// hermitRepeat runs `hermit run FLAGS -- ARGV` n times, fails t unless every
// run exits 0 and all print the same stdout and stderr, and returns run 1.
// A run that differs is an error, not fatal, so that the caller's further
// checks still report what else is wrong.
func hermitRepeat(t *testing.T, n int, flags, argv []string) testenv.Result {
	t.Helper()
	first := hermitRun(t, flags, argv)
	if first.Exit != 0 {
		t.Fatalf("hermit run %v: %s", flags, describe(first))
	}
	for i := 2; i <= n; i++ {
		r := hermitRun(t, flags, argv)
		if d := firstDiff(first.Stdout, r.Stdout); d != "" {
			t.Errorf("hermit run %v, run %d: stdout differs from run 1 at %s", flags, i, d)
		}
		if d := firstDiff(first.Stderr, r.Stderr); d != "" {
			t.Errorf("hermit run %v, run %d: stderr differs from run 1 at %s", flags, i, d)
		}
		if r.Exit != first.Exit {
			t.Errorf("hermit run %v, run %d: exit %d, run 1 exited %d", flags, i, r.Exit, first.Exit)
		}
	}
	if t.Failed() {
		t.Logf("hermit run %v, run 1:\n%s", flags, first.Stdout)
	}
	return first
}

// TestIdentityStable: Python and Go programs that print what their runtime
// takes from the environment (clocks, auto-seeded randomness, hash seeds,
// map order, object addresses, a goroutine race) vary natively and print
// the same under hermit on every run, with hermit's clock and pid.
func TestIdentityStable(t *testing.T) {
	cases := []struct {
		name string
		argv argvFunc
		want []string // hermit's stdout must contain each
	}{
		{
			name: "python uuid time random urandom hash id",
			argv: pyGuest("identity.py"),
			want: []string{"time.time: 1767225600.", "time.monotonic: 120."},
		},
		{
			name: "go time rand crypto map goroutines",
			argv: goGuest("gorand"),
			want: []string{"pid: 2\n", "time.Now: 2026-01-01 00:00:00."},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			nativeVaries(t, argv)
			r := hermitRepeat(t, hermitRuns, nil, argv)
			for _, w := range c.want {
				if !bytes.Contains(r.Stdout, []byte(w)) {
					t.Errorf("stdout lacks %q:\n%s", w, r.Stdout)
				}
			}
		})
	}
}

// identLine is one line of the identity.c guest: "CLASS LABEL: VALUE".
type identLine struct {
	class, label, value string
}

// parseIdentLines splits the identity guest's output into its lines.
func parseIdentLines(t *testing.T, out []byte) []identLine {
	t.Helper()
	var lines []identLine
	for _, s := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		class, rest, ok1 := strings.Cut(s, " ")
		label, value, ok2 := strings.Cut(rest, ": ")
		if !ok1 || !ok2 {
			t.Fatalf("malformed line %q in\n%s", s, out)
		}
		lines = append(lines, identLine{class, label, value})
	}
	return lines
}

// identRule judges a line of another run against the same line of the
// default run; it returns "" if other is as it should be, else why not.
type identRule func(base, other identLine) string

func identSame(base, other identLine) string {
	if other.value != base.value {
		return "changed, want unchanged"
	}
	return ""
}

func identDiffers(base, other identLine) string {
	if other.value == base.value {
		return "unchanged, want changed"
	}
	return ""
}

// identShifted wants a "SECONDS[.FRACTION]" value moved by exactly d,
// fraction unchanged.
func identShifted(d time.Duration) identRule {
	return func(base, other identLine) string {
		bsec, bf, _ := strings.Cut(base.value, ".")
		osec, of, _ := strings.Cut(other.value, ".")
		b, err1 := strconv.ParseInt(bsec, 10, 64)
		o, err2 := strconv.ParseInt(osec, 10, 64)
		if err1 != nil || err2 != nil {
			return "not SECONDS[.FRACTION]"
		}
		if want := int64(d / time.Second); o-b != want || of != bf {
			return fmt.Sprintf("moved by %d s and fraction %q to %q, want %d s and the same fraction", o-b, bf, of, want)
		}
		return ""
	}
}

// identWant are the values the default run of identity.c must print:
// hermit's fixed identity and the default epoch.
var identWant = map[string]string{
	"pid":            "2",
	"tid":            "2",
	"uname nodename": "hermit",
	"gethostname":    "hermit",
	"uname release":  "6.1.0-hermit",
	"cpus online":    "1",
	"cpus affinity":  "1",
	"cpus cpuinfo":   "1",
	"sched_getcpu":   "0",
	"getcpu vdso":    "cpu 0 node 0",
	"getcpu syscall": "cpu 0 node 0",
	"time vdso":      "1767225600",
	"time syscall":   "1767225600",
}

// TestIdentity runs tests/guests/identity.c, which prints every clock, every
// source of randomness, addresses, pids, uname and the CPUs, each line
// classed by what it may depend on. Natively its output varies; under hermit
// it is the same on every run and shows hermit's identity. --seed 2 changes
// exactly the random lines; --epoch moves the wall-clock lines by exactly
// the epoch difference, changes what is seeded from them, and nothing else.
func TestIdentity(t *testing.T) {
	t.Parallel()
	argv := cGuest("identity.c")(t)
	if !ptrace.TSCTraps() {
		// The counter's lines are the host's there: the rest is checked.
		argv = append(argv, "notsc")
	}
	nativeVaries(t, argv)
	base := parseIdentLines(t, hermitRepeat(t, hermitRuns, nil, argv).Stdout)
	t.Run("rdtsc and rdtscp", func(t *testing.T) {
		testenv.RequireTSCTrap(t)
		// Their lines are in the runs compared above and below.
		for _, label := range []string{"rdtsc", "rdtscp"} {
			if !slices.ContainsFunc(base, func(l identLine) bool { return l.label == label }) {
				t.Errorf("no %s line", label)
			}
		}
	})
	seen := map[string]bool{}
	for _, l := range base {
		if w, ok := identWant[l.label]; ok {
			seen[l.label] = true
			if l.value != w {
				t.Errorf("%s %s: %q, want %q", l.class, l.label, l.value, w)
			}
		}
	}
	for label := range identWant {
		if !seen[label] {
			t.Errorf("no line labelled %q", label)
		}
	}

	epoch, err := time.Parse(time.RFC3339, epoch2030)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		flags []string
		rules map[string]identRule // by class; every class must be listed
	}{
		{
			name:  "seed 2",
			flags: []string{"--seed", "2"},
			rules: map[string]identRule{"fixed": identSame, "wall": identSame, "walldep": identSame, "random": identDiffers},
		},
		{
			name:  "epoch 2030",
			flags: []string{"--epoch", epoch2030},
			rules: map[string]identRule{"fixed": identSame, "wall": identShifted(epoch.Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))), "walldep": identDiffers, "random": identSame},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			other := parseIdentLines(t, hermitRepeat(t, 2, c.flags, argv).Stdout)
			if len(other) != len(base) {
				t.Fatalf("%d lines, the default run printed %d", len(other), len(base))
			}
			perClass := map[string]int{}
			for i, b := range base {
				o := other[i]
				if o.class != b.class || o.label != b.label {
					t.Fatalf("line %d is %q %q, the default run's is %q %q", i+1, o.class, o.label, b.class, b.label)
				}
				rule, ok := c.rules[b.class]
				if !ok {
					t.Fatalf("line %d: unknown class %q", i+1, b.class)
				}
				perClass[b.class]++
				if why := rule(b, o); why != "" {
					t.Errorf("line %d, %s %s: %s: %q, default run %q", i+1, b.class, b.label, why, o.value, b.value)
				}
			}
			for class := range c.rules {
				if perClass[class] == 0 {
					t.Errorf("no %s lines to compare", class)
				}
			}
		})
	}
}

// TestSeedChangesSchedule: the racy counter's output under --seed 1 and
// --seed 2 is each the same on every run, and differs from the default
// seed's: the seed picks the interleaving.
func TestSeedChangesSchedule(t *testing.T) {
	t.Parallel()
	argv := cGuest("racy_counter.c")(t)
	const runs = 3
	def := hermitRepeat(t, runs, nil, argv)
	for _, seed := range []string{"1", "2"} {
		r := hermitRepeat(t, runs, []string{"--seed", seed}, argv)
		if d := firstDiff(def.Stdout, r.Stdout); d == "" {
			t.Errorf("--seed %s printed the same as the default seed:\n%s", seed, r.Stdout)
		} else {
			t.Logf("--seed %s differs from the default seed at %s", seed, d)
		}
	}
}

// TestSetHostname: a host name the guest sets (in its own UTS namespace)
// is what uname says from then on, as gethostname and /proc do (uname
// kept saying "hermit"). Never run natively: as root it would rename the
// host.
func TestSetHostname(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	testenv.Require(t, "hostname")
	argv := []string{sh, "-c", "hostname renamed && hostname && uname -n && cat /proc/sys/kernel/hostname"}
	want := "renamed\nrenamed\nrenamed\n"
	if r := hermitRun(t, nil, argv); r.Exit != 0 || string(r.Stdout) != want {
		t.Fatalf("hermit run: want %q; %s", want, describe(r))
	}
	if rec := recordReplay(t, nil, argv); string(rec.Stdout) != want {
		t.Errorf("hermit record: want %q; %s", want, describe(rec))
	}
}

// TestHostnameResolves: the guest's host name, "hermit", has an address,
// 127.0.1.1, in its /etc/hosts (the host's, with that line added), so that
// a program that looks its own name up finds it, as on a Debian host (the
// lookup failed: CPython's test_socket skipped, Java's getLocalHost
// throws); record and replay give the same answer.
func TestHostnameResolves(t *testing.T) {
	t.Parallel()
	getent := testenv.Require(t, "getent")
	cat := testenv.Require(t, "cat")
	host, err := os.ReadFile("/etc/hosts")
	if err != nil {
		testenv.Skip(t, "this machine has no /etc/hosts: "+err.Error())
	}
	want := "127.0.1.1       hermit\n"
	if r := hermitRun(t, nil, []string{getent, "hosts", "hermit"}); r.Exit != 0 || string(r.Stdout) != want {
		t.Fatalf("hermit run getent hosts hermit: want %q; %s", want, describe(r))
	}
	if rec := recordReplay(t, nil, []string{getent, "hosts", "hermit"}); string(rec.Stdout) != want {
		t.Errorf("hermit record: want %q; %s", want, describe(rec))
	}
	if r := hermitRun(t, nil, []string{cat, "/etc/hosts"}); !bytes.HasPrefix(r.Stdout, host) || !bytes.HasSuffix(r.Stdout, []byte("127.0.1.1\thermit\n")) {
		t.Errorf("the guest's /etc/hosts: want the host's and a line for hermit; %s", describe(r))
	}
	// Its times are the host file's, the same in every run (they were
	// when hermit started).
	stat := testenv.Require(t, "stat")
	fi, err := os.Stat("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("%d\n", fi.ModTime().Unix())
	for run := 0; run < 2; run++ {
		if r := hermitRun(t, nil, []string{stat, "-c", "%Y", "/etc/hosts"}); string(r.Stdout) != want {
			t.Errorf("run %d: the guest's /etc/hosts modified at %q, want the host file's %q; %s", run, r.Stdout, want, describe(r))
		}
		time.Sleep(1100 * time.Millisecond)
	}
}

// TestStartWritesNoTempFiles: hermit run and record make no file in the
// temporary directory, even for a moment (the directory's modification
// time would move): the files that show the guest its CPUs and
// /etc/hosts are written in memory, not on the host's disk, where a
// crowd of recently removed files made each new one slow (0.25 ms each
// on an ext4 without a journal) and a hermit killed as it started left
// them behind.
func TestStartWritesNoTempFiles(t *testing.T) {
	t.Parallel()
	cat := testenv.Require(t, "cat")
	tmp := t.TempDir()
	then := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, mode := range []string{"run", "record"} {
		if err := os.Chtimes(tmp, then, then); err != nil {
			t.Fatal(err)
		}
		args := []string{mode, "--num-cpus", "3", "--", cat, "/sys/devices/system/cpu/online"}
		if mode == "record" {
			args = append([]string{mode, "-o", filepath.Join(t.TempDir(), "trace")}, args[1:]...)
		}
		env := []string{"TMPDIR=" + tmp, "HERMIT_TRACE_DIR=" + t.TempDir()}
		r := testenv.RunWith(t, testenv.Opts{Timeout: runTimeout, Env: env}, testenv.Hermit(t), args...)
		if r.Exit != 0 || string(r.Stdout) != "0-2\n" {
			t.Fatalf("hermit %s: want the guest to see CPUs 0-2; %s", mode, describe(r))
		}
		ents, _ := os.ReadDir(tmp)
		fi, err := os.Stat(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 0 || !fi.ModTime().Equal(then) {
			t.Errorf("hermit %s changed $TMPDIR: %d entries, modified %v", mode, len(ents), fi.ModTime())
		}
	}
}

// TestNumCPUs: the guest is told it has one CPU unless --num-cpus says
// otherwise, and every way of asking agrees (the affinity mask nproc and
// Go's runtime read, the files glibc's sysconf and others read); a
// recording keeps the number for its replay; bad values are refused.
func TestNumCPUs(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	gospin := goGuest("gospin")(t)[0]
	script := `nproc; getconf _NPROCESSORS_ONLN; grep -c ^processor /proc/cpuinfo; grep -c '^cpu[0-9]' /proc/stat
cat /sys/devices/system/cpu/online; grep ^Cpus_allowed /proc/self/status; "$1"`
	want := func(n int) string {
		mask, list := "1", "0"
		if n > 1 {
			mask, list = fmt.Sprintf("%x", 1<<n-1), fmt.Sprintf("0-%d", n-1)
		}
		return strings.Repeat(fmt.Sprintf("%d\n", n), 4) + list + "\n" +
			"Cpus_allowed:\t" + mask + "\nCpus_allowed_list:\t" + list + "\n" +
			fmt.Sprintf("gospin: GOMAXPROCS %d, sum 332833500\n", n)
	}
	for _, c := range []struct {
		flags []string
		n     int
	}{{nil, 1}, {[]string{"--num-cpus", "3"}, 3}} {
		if r := hermitRun(t, c.flags, []string{sh, "-c", script, "sh", gospin}); r.Exit != 0 || string(r.Stdout) != want(c.n) {
			t.Errorf("hermit run %v: want %q, got %s", c.flags, want(c.n), describe(r))
		}
	}
	t.Run("recorded", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "trace")
		rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "record", "-o", dir, "--num-cpus", "3", "--", sh, "-c", script, "sh", gospin)
		if rec.Exit != 0 || string(rec.Stdout) != want(3) {
			t.Fatalf("hermit record --num-cpus 3: want %q, got %s", want(3), describe(rec))
		}
		if got := replay(t, dir); got.Exit != 0 || string(got.Stdout) != want(3) {
			t.Errorf("replay: want the recording's %q, got %s", want(3), describe(got))
		}
	})
	for _, bad := range []string{"0", "65", "-1"} {
		r := hermitRun(t, []string{"--num-cpus", bad}, []string{sh, "-c", "echo ran"})
		if line := "hermit run: --num-cpus " + bad + ": want 1 to 64\n"; r.Exit != 2 || string(r.Stderr) != line || len(r.Stdout) != 0 {
			t.Errorf("--num-cpus %s: want exit 2, nothing run, and %q; got %s", bad, line, describe(r))
		}
	}
}
