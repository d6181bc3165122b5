package trace

import (
	"path/filepath"
	"testing"
	"time"
)

// TestTrimCacheStamp: a trim that finds no entry come or gone since the
// last one answers from that one's stamp instead of walking the cache
// again (a file put inside a root, which no entry's coming shows, is not
// seen); a blob added since, or a lower limit, is trimmed to the limit.
func TestTrimCacheStamp(t *testing.T) {
	c := newFakeCache(t)
	c.blob("a", 1000, 3*time.Hour)
	c.blob("b", 1000, 2*time.Hour)
	root := c.root("r", "f", 100, time.Hour)
	settle := func() {
		for _, d := range stampDirs {
			c.age(filepath.Join(c.dir, d), time.Minute)
		}
	}
	settle()
	first, err := TrimCache(c.dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(c.dir, stampName)) || first.Bytes == 0 {
		t.Fatalf("after a walk: stamp %v, %d bytes", exists(filepath.Join(c.dir, stampName)), first.Bytes)
	}
	c.write(filepath.Join(root, "inside"), 5000)
	second, err := TrimCache(c.dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if walked := info(t, c.dir).Bytes; second.Bytes != first.Bytes || walked <= first.Bytes {
		t.Fatalf("unchanged cache: the trim found %d bytes, the first %d, a walk %d: want the first's", second.Bytes, first.Bytes, walked)
	}

	// A blob comes: the next trim walks, and keeps to its limit.
	c.blob("c", 1000, time.Minute)
	limit := info(t, c.dir).Bytes - 1500
	if _, err := TrimCache(c.dir, limit); err != nil {
		t.Fatal(err)
	}
	if n := info(t, c.dir).Bytes; n > limit || exists(filepath.Join(c.dir, "blobs", "blobs", "a")) {
		t.Fatalf("after a blob came: %d bytes for a limit of %d, oldest blob kept: %v", n, limit, exists(filepath.Join(c.dir, "blobs", "blobs", "a")))
	}

	// No change, but a lower limit: it walks and trims.
	settle()
	if _, err := TrimCache(c.dir, 1<<20); err != nil {
		t.Fatal(err)
	}
	limit = info(t, c.dir).Bytes - 500
	if _, err := TrimCache(c.dir, limit); err != nil {
		t.Fatal(err)
	}
	if n := info(t, c.dir).Bytes; n > limit {
		t.Fatalf("a lower limit: %d bytes for a limit of %d", n, limit)
	}
}
