package procrun

import (
	"errors"
	"os/exec"
	"testing"
	"time"
)

func TestRunStatus(t *testing.T) {
	cases := []struct {
		name   string
		script string
		stdout string
		stderr string
		exit   int
	}{
		{"exit code", "echo out; echo err >&2; exit 3", "out\n", "err\n", 3},
		{"killed by signal", "kill -KILL $$", "", "", 128 + 9},
		{"success", "true", "", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Run(exec.Command("/bin/sh", "-c", c.script), 10*time.Second)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if string(r.Stdout) != c.stdout || string(r.Stderr) != c.stderr || r.Exit != c.exit {
				t.Errorf("got stdout %q, stderr %q, exit %d; want %q, %q, %d", r.Stdout, r.Stderr, r.Exit, c.stdout, c.stderr, c.exit)
			}
		})
	}
}

// TestRunTimeoutKillsGroup checks that a hang ends at the timeout, also when
// a background grandchild holds stdout open.
func TestRunTimeoutKillsGroup(t *testing.T) {
	start := time.Now()
	r, err := Run(exec.Command("/bin/sh", "-c", "echo started; sleep 100 & sleep 100"), 300*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("Run returned after %v, want soon after the 300ms timeout", elapsed)
	}
	if string(r.Stdout) != "started\n" || r.Exit != 128+9 {
		t.Errorf("got stdout %q, exit %d; want the output so far and death by SIGKILL", r.Stdout, r.Exit)
	}
}

func TestRunStartError(t *testing.T) {
	if _, err := Run(exec.Command("/nonexistent/program"), time.Second); err == nil {
		t.Error("Run of a missing program: no error")
	}
}

// TestRunCPU: CPU counts the process's computing, not its sleeping.
func TestRunCPU(t *testing.T) {
	sleep, err := Run(exec.Command("/bin/sh", "-c", "sleep 0.3"), 10*time.Second)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	busy, err := Run(exec.Command("/bin/sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"), 60*time.Second)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if sleep.CPU >= 100*time.Millisecond || sleep.Duration < 300*time.Millisecond {
		t.Errorf("sleep 0.3: CPU %v in %v; want under 100ms of CPU", sleep.CPU, sleep.Duration)
	}
	if busy.CPU < 50*time.Millisecond || busy.CPU > 2*busy.Duration {
		t.Errorf("a busy loop: CPU %v in %v; want most of its time", busy.CPU, busy.Duration)
	}
}
