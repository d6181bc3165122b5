package trace

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "0", want: 0},
		{in: "512", want: 512},
		{in: "512B", want: 512},
		{in: "64k", want: 64 << 10},
		{in: "64K", want: 64 << 10},
		{in: "500M", want: 500 << 20},
		{in: "500MB", want: 500 << 20},
		{in: "4G", want: 4 << 30},
		{in: "4GiB", want: 4 << 30},
		{in: "2t", want: 2 << 40},
		{in: " 7M ", want: 7 << 20},
		{in: "", bad: true},
		{in: "M", bad: true},
		{in: "-1", bad: true},
		{in: "1.5G", bad: true},
		{in: "4X", bad: true},
		{in: "lots", bad: true},
		{in: "99999999999999999999", bad: true},
		{in: "9999999999T", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("ParseSize(%q) = %d, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestCacheMax(t *testing.T) {
	tests := []struct {
		name, env string
		want      int64
		warn      bool
	}{
		{name: "unset", env: "", want: DefaultCacheMax},
		{name: "bytes", env: "1000", want: 1000},
		{name: "suffix", env: "3M", want: 3 << 20},
		{name: "no limit", env: "0", want: 0},
		{name: "bad", env: "big", want: DefaultCacheMax, warn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HERMIT_CACHE_MAX", tt.env)
			got, err := CacheMax()
			if got != tt.want || (err != nil) != tt.warn {
				t.Errorf("CacheMax() = %d, %v; want %d, warning %v", got, err, tt.want, tt.warn)
			}
			if err != nil && (strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "HERMIT_CACHE_MAX")) {
				t.Errorf("warning %q is not one line naming the variable", err)
			}
		})
	}
}

// fakeCache builds cache entries by hand, each with its last use.
type fakeCache struct {
	t   *testing.T
	dir string
}

func newFakeCache(t *testing.T) *fakeCache {
	dir := filepath.Join(t.TempDir(), "cache")
	for _, d := range []string{"blobs/blobs", "blobs/keys", "roots", "files"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return &fakeCache{t, dir}
}

// age sets p's last use to ago before now.
func (c *fakeCache) age(p string, ago time.Duration) {
	when := time.Now().Add(-ago)
	if err := os.Chtimes(p, when, when); err != nil {
		c.t.Fatal(err)
	}
}

func (c *fakeCache) write(p string, n int) {
	if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, n), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// blob makes blob name of n bytes, with a key, used ago.
func (c *fakeCache) blob(name string, n int, ago time.Duration) string {
	p := filepath.Join(c.dir, "blobs", "blobs", name)
	c.write(p, n)
	if err := os.Symlink(name, filepath.Join(c.dir, "blobs", "keys", "key-"+name)); err != nil {
		c.t.Fatal(err)
	}
	c.age(p, ago)
	return p
}

// root makes root name, holding a link to files/FILE (made, of n bytes,
// if new) and a read-only directory, used ago.
func (c *fakeCache) root(name, file string, n int, ago time.Duration) string {
	p := filepath.Join(c.dir, "roots", name)
	fp := filepath.Join(c.dir, "files", file)
	if _, err := os.Stat(fp); err != nil {
		c.write(fp, n)
		c.age(fp, 24*time.Hour)
	}
	if err := os.MkdirAll(filepath.Join(p, "usr/lib"), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Link(fp, filepath.Join(p, "usr/lib", file)); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(p, "usr"), 0o555); err != nil {
		c.t.Fatal(err)
	}
	c.age(p, ago)
	return p
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func info(t *testing.T, dir string) CacheInfo {
	t.Helper()
	ci, err := ReadCacheInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ci
}

// TestTrimCacheOrder: the least recently used entries go first, until
// the cache is within the limit; a file of roots goes with the last root
// that links it.
func TestTrimCacheOrder(t *testing.T) {
	c := newFakeCache(t)
	const n = 64 << 10
	b1 := c.blob("b1", n, 5*time.Hour)
	b2 := c.blob("b2", n, 1*time.Hour)
	b3 := c.blob("b3", n, 3*time.Hour)
	r1 := c.root("r1", "f1", n, 4*time.Hour)
	r2 := c.root("r2", "f1", n, 2*time.Hour) // shares f1 with r1
	r3 := c.root("r3", "f3", n, 30*time.Minute)

	before := info(t, c.dir)
	if got := before.Kinds[CacheBlobs].Entries; got != 3 {
		t.Errorf("%d blobs, want 3", got)
	}
	if got := before.Kinds[CacheKeys].Entries; got != 3 {
		t.Errorf("%d keys, want 3", got)
	}
	if got := before.Kinds[CacheRoots].Entries; got != 3 {
		t.Errorf("%d roots, want 3", got)
	}
	// Each inode once: 3 blobs and 2 files of n bytes, plus directories.
	if before.Bytes < 5*n || before.Bytes > 5*n+64<<10 {
		t.Errorf("size %d, want about %d", before.Bytes, 5*n)
	}
	dirs := before.Bytes - 5*n

	// Room for three of the five contents: b1 (5h), r1 (4h: it frees
	// only its directories, f1 is in r2 too) and b3 (3h) go.
	got, err := TrimCache(c.dir, 3*n+dirs)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{b1, r1, b3} {
		if exists(p) {
			t.Errorf("%s was kept", p)
		}
	}
	for _, p := range []string{b2, r2, r3, filepath.Join(c.dir, "files", "f1"), filepath.Join(c.dir, "files", "f3")} {
		if !exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
	if exists(filepath.Join(c.dir, "blobs", "keys", "key-b1")) || !exists(filepath.Join(c.dir, "blobs", "keys", "key-b2")) {
		t.Error("keys were not removed with their blob only")
	}
	if got.Bytes > 3*n+dirs {
		t.Errorf("after trim: %d bytes, over the limit %d", got.Bytes, 3*n+dirs)
	}
	if after := info(t, c.dir); after.Bytes != got.Bytes {
		t.Errorf("TrimCache says %d bytes are left, a scan finds %d", got.Bytes, after.Bytes)
	}

	// Limit 0 is no limit.
	if _, err := TrimCache(c.dir, 0); err != nil || !exists(b2) || !exists(r3) {
		t.Errorf("TrimCache with no limit removed entries (%v)", err)
	}

	// A negative limit empties it.
	got, err = TrimCache(c.dir, -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{CacheBlobs, CacheRoots, CacheFiles} {
		if got.Kinds[k].Entries != 0 {
			t.Errorf("after cleaning, %d %s are left", got.Kinds[k].Entries, k)
		}
	}
}

// TestTrimCacheInUse: a root held by a process, the files it links, and
// young temporaries are kept, whatever the limit; stale ones go.
func TestTrimCacheInUse(t *testing.T) {
	c := newFakeCache(t)
	saved := heldSnapshot()
	defer heldRestore(saved)
	const n = 16 << 10
	old := c.root("old", "f-old", n, 48*time.Hour)
	free := c.root("free", "f-free", n, time.Hour)
	if !HoldCachedRoot(old) {
		t.Fatal("HoldCachedRoot failed")
	}
	// Holding marks it used now; make it old again: the lock alone must
	// keep it.
	c.age(old, 48*time.Hour)

	young := filepath.Join(c.dir, "roots", ".tmp-123")
	if err := os.Mkdir(young, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(c.dir, "files", ".tmp-456")
	c.write(stale, n)
	c.age(stale, time.Hour)
	evicted := filepath.Join(c.dir, "roots", ".evict-x-1")
	if err := os.Mkdir(evicted, 0o755); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(c.dir, "blobs", "keys", "gone")
	if err := os.Symlink("0123", dangling); err != nil {
		t.Fatal(err)
	}

	got, err := TrimCache(c.dir, -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{old, filepath.Join(c.dir, "files", "f-old"), young} {
		if !exists(p) {
			t.Errorf("%s, in use, was removed", p)
		}
	}
	for _, p := range []string{free, filepath.Join(c.dir, "files", "f-free"), stale, evicted, dangling} {
		if exists(p) {
			t.Errorf("%s was kept", p)
		}
	}
	if got.InUse != 1 {
		t.Errorf("%d roots in use, want 1", got.InUse)
	}

	// Released (the process ended), it goes; a process that looks for it
	// afterwards does not get it.
	heldRestore(saved)
	if _, err := TrimCache(c.dir, -1); err != nil {
		t.Fatal(err)
	}
	if exists(old) {
		t.Errorf("%s, no longer in use, was kept", old)
	}
	if HoldCachedRoot(old) {
		t.Error("HoldCachedRoot holds a removed root")
	}
}

// TestHoldCachedRootReplaced: a root removed and rebuilt under the same
// name between a look and the lock is not taken for the old one.
func TestHoldCachedRootReplaced(t *testing.T) {
	c := newFakeCache(t)
	saved := heldSnapshot()
	defer heldRestore(saved)
	r := c.root("r", "f", 1, 0)
	if !HoldCachedRoot(r) || !HoldCachedRoot(r) {
		t.Fatal("HoldCachedRoot failed")
	}
	if n := len(held); n != len(saved)+1 {
		t.Errorf("holding a root twice keeps %d files open, want 1", n-len(saved))
	}
	if err := removeTree(r); err != nil {
		t.Fatal(err)
	}
	if HoldCachedRoot(r) {
		t.Error("HoldCachedRoot holds a removed root")
	}
	if err := os.Mkdir(r, 0o755); err != nil {
		t.Fatal(err)
	}
	if !HoldCachedRoot(r) {
		t.Error("HoldCachedRoot does not hold the new root")
	}
}

func heldSnapshot() map[string]*os.File {
	heldMu.Lock()
	defer heldMu.Unlock()
	m := map[string]*os.File{}
	for k, v := range held {
		m[k] = v
	}
	return m
}

// heldRestore closes (releases) every root held since saved.
func heldRestore(saved map[string]*os.File) {
	heldMu.Lock()
	defer heldMu.Unlock()
	for k, f := range held {
		if saved[k] != f {
			f.Close()
			delete(held, k)
		}
	}
}

// TestBlobCacheLostBlob: a blob trimmed from the cache between a
// recording's lookup and its link is stored again from the file.
func TestBlobCacheLostBlob(t *testing.T) {
	saved := racyAge
	racyAge = 0
	defer func() { racyAge = saved }()
	c, err := OpenBlobCache(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "lib.so")
	content := bytes.Repeat([]byte("lib "), 5000)
	if err := os.WriteFile(src, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := Create(filepath.Join(t.TempDir(), "t1"), Header{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := w.PutFile(f, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// The lookup has happened; the blob goes; then the link.
	if err := os.Remove(filepath.Join(c.dir, "blobs", id.String())); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "t2")
	w, err = Create(dir, Header{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.reuse(id, w.dir, dupFile(f), int64(len(content))); err != nil {
		t.Fatalf("reuse of a lost blob: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
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
	if b, err := io.ReadAll(rc); err != nil || !bytes.Equal(b, content) {
		t.Errorf("the trace's blob holds %d bytes (%v), want the file's %d", len(b), err, len(content))
	}
}
