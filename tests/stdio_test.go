package tests

import (
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
