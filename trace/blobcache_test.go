package trace

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestBlobCache(t *testing.T) {
	saved := racyAge
	racyAge = 0 // files just written count as settled
	defer func() { racyAge = saved }()

	c, err := OpenBlobCache(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "lib.so")
	if err := os.WriteFile(src, bytes.Repeat([]byte("content "), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	put := func() (BlobID, string) {
		dir := filepath.Join(t.TempDir(), "t")
		w, err := Create(dir, Header{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		id, err := w.PutFile(f, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return id, dir
	}
	read := func(dir string, id BlobID) []byte {
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rc, err := r.OpenBlob(id)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	id1, dir1 := put()
	id2, dir2 := put() // from the cache
	want, _ := os.ReadFile(src)
	if id1 != id2 || !bytes.Equal(read(dir1, id1), want) || !bytes.Equal(read(dir2, id2), want) {
		t.Fatalf("cached blob %s / %s does not hold the file", id1.Short(), id2.Short())
	}
	if _, ok := c.lookup(keyOf(t, src)); !ok {
		t.Error("the file's identity is not in the cache")
	}

	// A changed file is stored anew.
	if err := os.WriteFile(src, []byte("other content"), 0o644); err != nil {
		t.Fatal(err)
	}
	id3, dir3 := put()
	if id3 == id1 || string(read(dir3, id3)) != "other content" {
		t.Errorf("after a change, blob %s holds %q", id3.Short(), read(dir3, id3))
	}
}

func keyOf(t *testing.T, p string) string {
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k, _ := fileKey(f)
	return k
}

// TestBlobCacheRacyFile: a file changed within racyAge is not trusted by
// its identity (a second change in the same timestamp tick would keep it).
func TestBlobCacheRacyFile(t *testing.T) {
	src := filepath.Join(t.TempDir(), "fresh")
	if err := os.WriteFile(src, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if k := keyOf(t, src); k != "" {
		t.Errorf("a file written just now has cache key %q", k)
	}
}
