package tests

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestKillIsDeterministic: a SIGKILL sent to a child that hermit holds
// stopped takes effect at once in the host; the run (schedule digest
// included) must not depend on when the host reaps it. The guest kills a
// sleeping child on a context timeout, then runs four commands at once.
func TestKillIsDeterministic(t *testing.T) {
	hermit := testenv.Hermit(t)
	bin := testenv.BuildGo(t, "gokill")
	digest := regexp.MustCompile(`schedule digest: [0-9a-f]+`)
	var first testenv.Result
	for i := 0; i < 5; i++ {
		r := testenv.Run(t, time.Minute, hermit, "run", "--summary", "--", bin)
		if r.Exit != 0 || !bytes.HasPrefix(r.Stdout, []byte("sleep: signal: killed\njob 0\n")) {
			t.Fatalf("run %d: exit %d, stdout %q\n%s", i, r.Exit, r.Stdout, r.Stderr)
		}
		if i == 0 {
			first = r
			continue
		}
		if !bytes.Equal(r.Stdout, first.Stdout) || !bytes.Equal(digest.Find(r.Stderr), digest.Find(first.Stderr)) {
			t.Fatalf("run %d differs from run 0:\n%s%s\nvs\n%s%s", i, r.Stdout, digest.Find(r.Stderr), first.Stdout, digest.Find(first.Stderr))
		}
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.Run(t, time.Minute, hermit, "record", "-o", dir, "--", bin)
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rec.Exit != 0 || rep.Exit != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
		t.Fatalf("record exit %d, replay exit %d:\n%s\nvs\n%s\n%s", rec.Exit, rep.Exit, rec.Stdout, rep.Stdout, rep.Stderr)
	}
}
