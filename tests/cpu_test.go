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
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestCPUView: what a program learns of its CPU without a system call
// (lsl, rdpid, cpuid's APIC id, which ld.so keeps in memory it can
// checksum) and the device and inode numbers /proc/self/maps shows for
// its mappings are the same on every run, whichever CPU hermit was
// started on: by default hermit pins every run to the same CPU (when no
// other hermit is pinned there: TestCPUSideBySide). The recording
// replays them exactly, on another CPU too.
func TestCPUView(t *testing.T) {
	// Not parallel: the other tests' hermits are pinned too.
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		testenv.Skip(t, "taskset (util-linux) is not installed")
	}
	if runtime.NumCPU() < 2 {
		testenv.Skip(t, "needs 2 CPUs to start hermit on different ones")
	}
	// The dynamic loader keeps a time-stamp counter reading in the memory
	// the guest checksums.
	testenv.RequireTSCTrap(t)
	guest := testenv.BuildC(t, "cpu_view.c")
	// A file on the private /tmp, an overlay whose device the kernel
	// numbers anew on every run.
	mapped := filepath.Join(os.TempDir(), "hermit-cpu-view-"+filepath.Base(t.TempDir()))
	if err := os.WriteFile(mapped, []byte("mapped\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(mapped) })
	all := fmt.Sprintf("0-%d", runtime.NumCPU()-1)
	// Started on CPU `on`, free to run on all of them, as from a shell.
	// The default, not the tests' HERMIT_CPU.
	opts := testenv.Opts{Timeout: recordTimeout, Env: []string{"HERMIT_CPU=", "HERMIT_TRACE_DIR=" + t.TempDir()}}
	onCPU := func(on int, args ...string) testenv.Result {
		return testenv.RunWith(t, opts, taskset, append([]string{"-c", fmt.Sprint(on), taskset, "-c", all, testenv.Hermit(t)}, args...)...)
	}
	var first testenv.Result
	for i, on := range []int{0, 1, 0, 1} {
		r := onCPU(on, "run", "--", guest, mapped)
		if r.Exit != 0 {
			t.Fatalf("hermit run started on CPU %d: %s", on, describe(r))
		}
		if i == 0 {
			first = r
			continue
		}
		if d := firstDiff(first.Stdout, r.Stdout); d != "" {
			t.Fatalf("hermit run started on CPU %d: stdout differs from the run started on CPU 0 at %s", on, d)
		}
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := onCPU(1, "record", "-o", dir, "--", guest, mapped)
	if d := firstDiff(first.Stdout, rec.Stdout); d != "" || rec.Exit != 0 {
		t.Fatalf("hermit record: stdout differs from hermit run at %s; %s", d, describe(rec))
	}
	rep := onCPU(1, "replay", "--autopilot", dir)
	rec.Stderr, rep.Stderr = guestStderr(rec.Stderr), guestStderr(rep.Stderr)
	sameRun(t, "replay", rec, rep)
}

// TestAffinity: sched_getaffinity and sched_setaffinity answer as the
// kernel of a machine with as many CPUs as --num-cpus says: errors for a
// thread that does not exist, an empty mask or a bad size, and a mask
// set is read back and inherited.
func TestAffinity(t *testing.T) {
	t.Parallel()
	if runtime.NumCPU() > 64 {
		testenv.Skip(t, "--num-cpus goes up to 64; this machine has more CPUs")
	}
	argv := cGuest("affinity.c")(t)
	nat := native(t, argv)
	if nat.Exit != 0 {
		t.Fatalf("native run: %s", describe(nat))
	}
	r := hermitRun(t, []string{"--num-cpus", fmt.Sprint(runtime.NumCPU())}, argv)
	if d := firstDiff(nat.Stdout, r.Stdout); d != "" || r.Exit != 0 {
		t.Errorf("hermit run --num-cpus %d: stdout differs from the native run's at %s; %s", runtime.NumCPU(), d, describe(r))
	}
}

// TestCPUSideBySide: by default a run pins to the lowest CPU that the
// fewest other hermits are pinned to: alone, the first CPU hermit may
// use; beside a hermit pinned there, the next one, which the program
// reads (lsl) and --summary names; once the others have ended, the first
// again. Hermits
// side by side on one CPU halve each other's speed, and the kernel can
// starve one of them there.
func TestCPUSideBySide(t *testing.T) {
	// Not parallel: the other tests' hermits are pinned too.
	cpus := ptrace.AllowedCPUs()
	if len(cpus) < 2 {
		testenv.Skip(t, "needs 2 CPUs hermit may use")
	}
	if others := hermitClaims(t); others != "" {
		testenv.Skip(t, "other hermits are running on this machine ("+others+"): which CPU is free depends on them")
	}
	guest := testenv.BuildC(t, "cpu_view.c")
	env := append(os.Environ(), "HERMIT_CPU=")
	view := func(when string, want int) {
		t.Helper()
		r := testenv.RunWith(t, testenv.Opts{Timeout: recordTimeout, Env: env}, testenv.Hermit(t), "run", "--summary", "--", guest, guest)
		m := regexp.MustCompile(`(?m)^lsl cpu (\d+)$`).FindSubmatch(r.Stdout)
		if r.Exit != 0 || m == nil {
			t.Fatalf("%s: want exit 0 and the CPU the program ran on; %s", when, describe(r))
		}
		if got, _ := strconv.Atoi(string(m[1])); got != want {
			t.Fatalf("%s: the program ran on CPU %d, want %d", when, got, want)
		}
		line := fmt.Sprintf("  cpu: pinned to %d, as other hermits were pinned to %d ", want, cpus[0])
		if moved := want != cpus[0]; moved != bytes.Contains(r.Stderr, []byte(line)) {
			t.Errorf("%s: want the summary line %q: %v; stderr:\n%s", when, line, moved, r.Stderr)
		}
	}
	view("alone", cpus[0])
	// A hermit that stays until its standard input closes.
	hold := func() (end func()) {
		h := exec.Command(testenv.Hermit(t), "run", "--", "/bin/cat")
		h.Env = env
		var in io.WriteCloser
		_, out, _ := startCmd(t, h, &in)
		t.Cleanup(func() { h.Process.Kill(); h.Wait() })
		if _, err := io.WriteString(in, "started\n"); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); line != "started\n" {
			t.Fatalf("hermit run -- cat: read %q, %v; want its echo", line, err)
		}
		return func() {
			in.Close()
			if err := h.Wait(); err != nil {
				t.Fatalf("hermit run -- cat: %v", err)
			}
		}
	}
	end := hold()
	view("beside a hermit on the first CPU", cpus[1])
	end2 := hold()
	// One hermit on each of the first two: the third CPU, or with two,
	// the first again.
	view("beside hermits on the first two CPUs", cpus[2%len(cpus)])
	end2()
	end()
	view("after those hermits ended", cpus[0])
}

// hermitClaims lists the CPU claims of running hermits (ptrace.FreeCPU's
// abstract sockets), from /proc/net/unix.
func hermitClaims(t *testing.T) string {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range strings.Fields(string(b)) {
		if strings.HasPrefix(f, "@hermit-cpu/") {
			names = append(names, f)
		}
	}
	return strings.Join(names, " ")
}
