package tests

import (
	"bytes"
	"os"
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
	unshare := testenv.Require(t, "unshare")
	// The small tmpfs is mounted in a mount namespace of its own: on the
	// host's, it showed in the /proc/self/mountinfo of every guest that
	// tests running meanwhile started (Go programs read it as they start:
	// a determinism test's runs differed by its line). The cut trace is
	// copied out of it before the namespace goes.
	mnt, dir := t.TempDir(), filepath.Join(t.TempDir(), "trace")
	// 20000 lines, each a fork and exec: far more events than 1.8 MiB hold.
	script := `i=0; while [ $i -lt 20000 ]; do echo line $i; /bin/true; i=$((i+1)); done`
	const wrap = `mount -t tmpfs -o size=1800k tmpfs "$1" || exit 99
"$2" record -o "$1/trace" -- sh -c "$3"
code=$?
cp -a "$1/trace" "$4" || exit 98
exit $code`
	res := testenv.Run(t, 5*time.Minute, unshare, "--mount", "--propagation", "private", "sh", "-c", wrap, "sh", mnt, hermit, script, dir)
	if res.Exit == 99 {
		testenv.Skip(t, "cannot mount a tmpfs: "+strings.TrimSpace(string(res.Stderr)))
	}
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
