package tests

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestReplayHasNoSideEffects: files the program wrote when recorded (in
// its directory, in /dev/shm) are not written again on the host by its
// replay, which still reads back what it wrote.
func TestReplayHasNoSideEffects(t *testing.T) {
	hermit := testenv.Hermit(t)
	work := t.TempDir()
	shm := "/dev/shm/hermit-test-" + filepath.Base(work)
	script := `echo one > out.txt; echo two > ` + shm + `; cat out.txt ` + shm
	t.Cleanup(func() { os.Remove(shm) })
	dir := filepath.Join(t.TempDir(), "trace")
	// --tmp=host: the recording really writes the host's files.
	rec := testenv.RunWith(t, testenv.Opts{Timeout: time.Minute, Dir: work}, hermit, "record", "--tmp=host", "-o", dir, "--", "sh", "-c", script)
	if rec.Exit != 0 || string(rec.Stdout) != "one\ntwo\n" {
		t.Fatalf("record: exit %d, stdout %q\n%s", rec.Exit, rec.Stdout, rec.Stderr)
	}
	for _, p := range []string{filepath.Join(work, "out.txt"), shm} {
		if err := os.Remove(p); err != nil {
			t.Fatalf("the recording did not write %s: %v", p, err)
		}
	}
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rep.Exit != 0 || string(rep.Stdout) != "one\ntwo\n" {
		t.Fatalf("replay: exit %d, stdout %q\n%s", rep.Exit, rep.Stdout, rep.Stderr)
	}
	for _, p := range []string{filepath.Join(work, "out.txt"), shm} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("replay wrote %s on the host", p)
		}
	}
}
