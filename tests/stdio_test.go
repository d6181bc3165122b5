package tests

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestReplayStdinKind: replay gives the program a stdin of the recorded
// kind, so calls it runs for real there (lseek) answer as they did.
func TestReplayStdinKind(t *testing.T) {
	hermit := testenv.Hermit(t)
	py := testenv.Require(t, "python3")
	script := `import os, sys
try:
    os.lseek(0, 0, os.SEEK_CUR); print("seekable")
except OSError as e:
    print("not seekable", e.errno)
print(sys.stdin.readline().strip())
`
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.RunWith(t, testenv.Opts{Timeout: time.Minute, Stdin: []byte("the line\n")}, hermit, "record", "-o", dir, "--", py, "-c", script)
	want := "not seekable 29\nthe line\n" // stdin is a pipe: ESPIPE
	if rec.Exit != 0 || string(rec.Stdout) != want {
		t.Fatalf("record: exit %d, stdout %q, want %q\n%s", rec.Exit, rec.Stdout, want, rec.Stderr)
	}
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rep.Exit != 0 || string(rep.Stdout) != want {
		t.Fatalf("replay: exit %d, stdout %q, want %q\n%s", rep.Exit, rep.Stdout, want, rep.Stderr)
	}
}

// TestReplayInterruptedWaits: a signal interrupts a wait on stdin: a read
// that then restarts (SA_RESTART), and a ppoll whose own mask lets the
// signal in. Replay interrupts them at the same point, without the stdin,
// and they go on the same way.
func TestReplayInterruptedWaits(t *testing.T) {
	hermit := testenv.Hermit(t)
	for _, c := range []struct{ guest, want string }{
		{"alarm_read.c", "alarm\nread 5: data\n"},
		{"ppoll_signal.c", "alarm\nppoll -1\nppoll 1 read 5: data\n"},
	} {
		t.Run(c.guest, func(t *testing.T) {
			t.Parallel()
			bin := testenv.BuildC(t, c.guest)
			dir := filepath.Join(t.TempDir(), "trace")
			cmd := exec.Command(hermit, "record", "-o", dir, "--", bin)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The alarm (1 s of virtual time) fires after hermit has
			// waited 1 s of real time for stdin; the line comes later.
			time.Sleep(2500 * time.Millisecond)
			stdin.Write([]byte("data\n"))
			stdin.Close()
			if err := cmd.Wait(); err != nil || out.String() != c.want {
				t.Fatalf("record: %v, stdout %q, want %q\n%s", err, out.String(), c.want, errb.String())
			}
			rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
			if rep.Exit != 0 || string(rep.Stdout) != c.want {
				t.Fatalf("replay: exit %d, stdout %q, want %q\n%s", rep.Exit, rep.Stdout, c.want, rep.Stderr)
			}
		})
	}
}
