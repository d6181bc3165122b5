package replay

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hermitdbg/hermit/trace"
)

// TestBuildRootOwners: directories and files keep their recorded modes
// and owners (root may give them), with and without the file cache, and
// entries of traces without owners belong to the builder.
func TestBuildRootOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root gives files to other users")
	}
	bs := blobs{}
	files := []trace.File{
		{Path: "/home/u", Mode: trace.ModeDir | 0o700, Uid: 1000, Gid: 1001, Owned: true},
		{Path: "/home/u/secret", Mode: trace.ModeRegular | 0o600, Blob: bs.add("s\n"), Uid: 1000, Gid: 1001, Owned: true},
		{Path: "/opt/old", Mode: trace.ModeRegular | 0o644, Blob: bs.add("o\n")},
	}
	for _, cached := range []bool{false, true} {
		dir, cache := t.TempDir(), ""
		if cached {
			cache = t.TempDir()
		}
		if err := BuildRootCached(dir, files, bs.open, cache); err != nil {
			t.Fatal(err)
		}
		checkRoot(t, dir, []want{{path: "home/u", mode: os.ModeDir | 0o700}, {path: "home/u/secret", mode: 0o600, content: "s\n"}})
		for p, owner := range map[string][2]uint32{"home/u": {1000, 1001}, "home/u/secret": {1000, 1001}, "opt/old": {0, 0}, "home": {0, 0}} {
			fi, err := os.Lstat(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if st.Uid != owner[0] || st.Gid != owner[1] {
				t.Errorf("cache %v: %s owned by %d:%d, want %d:%d", cached, p, st.Uid, st.Gid, owner[0], owner[1])
			}
		}
	}
}
