package ptrace

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestVclockGenerated: zvclock.go holds testdata/vclock.S as it is now
// (go generate was run after the last change to the assembly).
func TestVclockGenerated(t *testing.T) {
	for _, tool := range []string{"gcc", "objcopy", "nm", "gofmt"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found in PATH: cannot assemble testdata/vclock.S", tool)
		}
	}
	dir := t.TempDir()
	// The script writes zvclock.go in its working directory.
	if err := os.Mkdir(filepath.Join(dir, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"vclock.S", "fastio.S", "page.inc", "genvclock.sh"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "testdata", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "testdata/genvclock.sh")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("genvclock.sh: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "zvclock.go"))
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("zvclock.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, have) {
		t.Error("zvclock.go is not testdata/vclock.S assembled: run go generate ./detcore/ptrace")
	}
	for _, off := range []int{vclockClockGettime, vclockGettimeofday, vclockTime} {
		if off >= len(vclockCode) {
			t.Errorf("entry at %#x, past the code's %d bytes", off, len(vclockCode))
		}
	}
	if n := bytes.Count(vclockCode, vclockData); n != 3 {
		t.Errorf("the code holds the page's placeholder %d times, want 3 (one per entry)", n)
	}
}
