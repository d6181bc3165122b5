package tests

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestProgress: --progress reports events (and for record the files
// stored) on stderr, ending with the totals; record says where the trace
// went.
func TestProgress(t *testing.T) {
	hermit := testenv.Hermit(t)
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.Run(t, time.Minute, hermit, "record", "--progress", "-o", dir, "--", "/bin/echo", "hi")
	if rec.Exit != 0 || string(rec.Stdout) != "hi\n" {
		t.Fatalf("record: exit %d, stdout %q\n%s", rec.Exit, rec.Stdout, rec.Stderr)
	}
	want := regexp.MustCompile(`(?m)^hermit: recording: [1-9]\d* events, [0-9.]+ [KM]iB of files, [0-9.]+s\nhermit: trace saved to ` + regexp.QuoteMeta(dir) + ` \([1-9]\d* events, [1-9]\d* files of `)
	if !want.Match(rec.Stderr) {
		t.Errorf("record --progress stderr:\n%s\nwant the final counts, then where the trace went", rec.Stderr)
	}
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--progress", "--autopilot", dir)
	if rep.Exit != 0 || string(rep.Stdout) != "hi\n" {
		t.Fatalf("replay: exit %d, stdout %q\n%s", rep.Exit, rep.Stdout, rep.Stderr)
	}
	m := regexp.MustCompile(`(?m)^hermit: replaying: (\d+) of (\d+) events, [0-9.]+s$`).FindSubmatch(rep.Stderr)
	if m == nil || string(m[1]) != string(m[2]) {
		t.Errorf("replay --progress stderr:\n%s\nwant a last line with all events replayed", rep.Stderr)
	}
}
