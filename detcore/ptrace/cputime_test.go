package ptrace

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCPUTimeCounts: CPUTime counts a thread's time on a CPU: it stands
// still while the thread is stopped and grows while it computes, and the
// counter hermit opened for the thread is closed once the thread is
// forgotten, so long runs do not pile up descriptors.
func TestCPUTimeCounts(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	var tr Tracer
	read := func() time.Duration {
		t.Helper()
		d, ok := tr.CPUTime(pid, pid)
		if !ok {
			t.Fatalf("CPUTime(%d) failed", pid)
		}
		return d
	}
	fds := openFds(t)
	start := read()
	if tr.clocks.off {
		t.Skipf("perf_event_open refuses a task clock here: the watchdog counts budgets in the process clock, which the kernel brings up to date only at its tick")
	}
	if got := openFds(t); got != fds+1 {
		t.Errorf("%d descriptors after the first read, want %d", got, fds+1)
	}
	time.Sleep(30 * time.Millisecond)
	ran := read()
	if ran <= start {
		t.Errorf("the computing thread's CPU time went from %v to %v in 30 ms", start, ran)
	}
	if err := cmd.Process.Signal(unix.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for i := 0; procState(pid) != 'T'; i++ {
		if i == 1000 {
			t.Fatalf("thread %d did not stop", pid)
		}
		time.Sleep(time.Millisecond)
	}
	stopped := read()
	time.Sleep(20 * time.Millisecond)
	if again := read(); again != stopped {
		t.Errorf("a stopped thread's CPU time went from %v to %v", stopped, again)
	}
	tr.forget(pid)
	if got := openFds(t); got != fds {
		t.Errorf("%d descriptors once the thread is forgotten, want %d", got, fds)
	}
}

func openFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
