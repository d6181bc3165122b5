package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestCPUView: what a program learns of its CPU without a system call
// (lsl, rdpid, cpuid's APIC id, which ld.so keeps in memory it can
// checksum) and the device and inode numbers /proc/self/maps shows for
// its mappings are the same on every run, whichever CPU hermit was
// started on: by default hermit pins every run to the same CPU. The
// recording replays them exactly, on another CPU too.
func TestCPUView(t *testing.T) {
	t.Parallel()
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
