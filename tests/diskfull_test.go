package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestRecordDiskFull: when the trace's filesystem fills up, hermit record
// stops the guest, says why in one line, and leaves a trace that reads up
// to its last block.
func TestRecordDiskFull(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root to mount a small tmpfs")
	}
	hermit := testenv.Hermit(t)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1800k", "tmpfs", mnt).CombinedOutput(); err != nil {
		testenv.Skip(t, "cannot mount a tmpfs: "+strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	dir := filepath.Join(mnt, "trace")
	// 20000 lines, each a fork and exec: far more events than 1.8 MiB hold.
	script := `i=0; while [ $i -lt 20000 ]; do echo line $i; /bin/true; i=$((i+1)); done`
	res := testenv.Run(t, 5*time.Minute, hermit, "record", "-o", dir, "--", "sh", "-c", script)
	if res.Exit != 125 {
		t.Fatalf("record on a full disk: exit %d, want 125\n%s", res.Exit, res.Stderr)
	}
	if !bytes.Contains(res.Stderr, []byte("no space left on device")) || bytes.Contains(res.Stderr, []byte("panic")) {
		t.Errorf("stderr does not say the disk is full:\n%s", res.Stderr)
	}
	if n := bytes.Count(res.Stdout, []byte("\n")); n == 0 || n >= 20000 {
		t.Errorf("the guest printed %d lines; want it stopped part way", n)
	}
	info := testenv.Run(t, time.Minute, hermit, "trace", "info", dir)
	if !bytes.Contains(info.Stdout, []byte("truncated at event")) || bytes.Contains(info.Stderr, []byte("panic")) {
		t.Errorf("trace info of the cut trace:\n%s%s", info.Stdout, info.Stderr)
	}
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rep.Exit != 125 || !bytes.Contains(rep.Stderr, []byte("the trace ends at event")) || !bytes.HasPrefix(res.Stdout, rep.Stdout) || len(rep.Stdout) == 0 {
		t.Errorf("replay of the cut trace: exit %d, %d bytes of the recorded %d\n%s", rep.Exit, len(rep.Stdout), len(res.Stdout), rep.Stderr)
	}
}
