package replay

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hermitdbg/hermit/trace"
)

// TestBuildRootLargeFile: a file recorded by size only becomes a sparse
// file of that size.
func TestBuildRootLargeFile(t *testing.T) {
	dir := t.TempDir()
	files := []trace.File{{Path: "/var/big.db", Mode: trace.ModeRegular | 0o640, Size: 1 << 30}}
	none := func(trace.BlobID) (io.ReadCloser, error) { t.Fatal("no blob to open"); return nil, nil }
	if err := BuildRoot(dir, files, none); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "var/big.db"))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Size() != 1<<30 || fi.Mode().Perm() != 0o640 || st.Blocks*512 > 1<<20 {
		t.Errorf("big.db: size %d, mode %v, %d bytes on disk; want 1 GiB, 0640, sparse", fi.Size(), fi.Mode(), st.Blocks*512)
	}
}

// TestRootKey: roots of different file lists, sizes included, differ.
func TestRootKey(t *testing.T) {
	a := []trace.File{{Path: "/x", Mode: trace.ModeRegular, Size: 1}}
	b := []trace.File{{Path: "/x", Mode: trace.ModeRegular, Size: 2}}
	if rootKey(a) == rootKey(b) || rootKey(a) != rootKey(append([]trace.File(nil), a...)) {
		t.Error("rootKey does not tell file lists apart, or is not a function of them")
	}
}
