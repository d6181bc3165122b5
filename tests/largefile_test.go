package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestRecordLargeFile: a file too large to store (a sparse one here) is
// not copied into the trace; the reads of it are, and replay gives the
// program the same bytes and size without the file.
func TestRecordLargeFile(t *testing.T) {
	hermit := testenv.Hermit(t)
	py := testenv.Require(t, "python3")
	big := filepath.Join(t.TempDir(), "big.db")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(recorder.LargeFile + 4096)
	f.WriteAt([]byte("HEADER"), 0)
	f.WriteAt([]byte("TAIL"), size-4)
	f.Close()
	script := `import os, sys
f = open(sys.argv[1], "rb")
print(f.read(6), os.fstat(f.fileno()).st_size)
f.seek(-4, 2)
print(f.read(4))
`
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.Run(t, time.Minute, hermit, "record", "--tmp=host", "-o", dir, "--", py, "-c", script, big)
	want := fmt.Sprintf("b'HEADER' %d\nb'TAIL'\n", size)
	if rec.Exit != 0 || string(rec.Stdout) != want {
		t.Fatalf("record: exit %d, stdout %q, want %q\n%s", rec.Exit, rec.Stdout, want, rec.Stderr)
	}
	var total int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			total += fi.Size()
		}
		return nil
	})
	if total > size/4 {
		t.Errorf("the trace takes %d bytes: the large file was stored", total)
	}
	os.Remove(big)
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rep.Exit != 0 || string(rep.Stdout) != want {
		t.Fatalf("replay: exit %d, stdout %q, want %q\n%s", rep.Exit, rep.Stdout, want, rep.Stderr)
	}
}
