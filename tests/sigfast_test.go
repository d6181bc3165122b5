package tests

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
// under hermit.
func TestOutsideSignalLeavesHermitCode(t *testing.T) {
	const want = "100 signals, 0 inside hermit's code\n"
	argv := cGuest("sigfast.c", "100")(t)
	cmd := exec.Command(testenv.Hermit(t), hermitArgs(nil, argv)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
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
		// user or a test harness would, until it has had enough.
		pid := guestPid(argv)
		for pid > 0 && syscall.Kill(pid, syscall.SIGUSR1) == nil {
			time.Sleep(2 * time.Millisecond)
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
