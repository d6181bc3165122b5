package tests

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
	"github.com/hermitdbg/hermit/trace"
)

// cacheRun runs hermit ARGS with the cache in cache and limit max.
func cacheRun(t *testing.T, cache, max string, args ...string) testenv.Result {
	t.Helper()
	env := []string{"HERMIT_TRACE_DIR=" + t.TempDir(), "HERMIT_CACHE_DIR=" + cache, "HERMIT_CACHE_MAX=" + max}
	return testenv.RunWith(t, testenv.Opts{Timeout: recordTimeout, Env: env}, testenv.Hermit(t), args...)
}

// cacheRecord records argv into dir with the cache in cache.
func cacheRecord(t *testing.T, cache, max, dir string, argv []string) testenv.Result {
	t.Helper()
	r := cacheRun(t, cache, max, append([]string{"record", "-o", dir, "--"}, argv...)...)
	if !strings.Contains(string(r.Stderr), savedLine+dir) {
		t.Fatalf("hermit record: stderr lacks %q\n%s", savedLine+dir, describe(r))
	}
	r.Stderr = guestStderr(r.Stderr)
	return r
}

// cacheUsage is the disk usage of the entries of cache directory dir, each
// inode once (as du counts), without the cache's own directories.
func cacheUsage(t *testing.T, dir string) int64 {
	t.Helper()
	top := map[string]bool{}
	for _, d := range []string{"", "blobs", "blobs/blobs", "blobs/keys", "roots", "files"} {
		top[filepath.Join(dir, d)] = true
	}
	seen := map[[2]uint64]bool{}
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || top[p] {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		if k := [2]uint64{st.Dev, st.Ino}; !seen[k] {
			seen[k] = true
			total += st.Blocks * 512
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return total
}

// TestCacheLimit: with $HERMIT_CACHE_MAX below what two programs' blobs
// and roots take, record and replay keep the cache within the limit,
// replays still replay, and `hermit cache info|clean` show and empty it.
func TestCacheLimit(t *testing.T) {
	guests := [][]string{
		{testenv.BuildC(t, "lines.c"), "5"},
		{testenv.BuildC(t, "fork_pipe.c")},
	}
	traces := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}

	// Without a limit: what the cache takes, and its largest root.
	free := filepath.Join(t.TempDir(), "free")
	recs := make([]testenv.Result, len(guests))
	for i, argv := range guests {
		recs[i] = cacheRecord(t, free, "0", traces[i], argv)
		sameRun(t, "replay", recs[i], cacheRun(t, free, "0", "replay", "--autopilot", traces[i]))
	}
	full := cacheUsage(t, free)
	var biggest int64
	roots, _ := os.ReadDir(filepath.Join(free, "roots"))
	for _, r := range roots {
		if n := cacheUsage(t, filepath.Join(free, "roots", r.Name())); n > biggest {
			biggest = n
		}
	}
	if len(roots) != 2 || biggest == 0 || biggest >= full {
		t.Fatalf("without a limit the cache holds %d roots, %d bytes, the largest root %d", len(roots), full, biggest)
	}

	// A limit that holds a replay's own root (kept while in use), but not
	// everything.
	limit := biggest + (full-biggest)/2
	t.Logf("without a limit: %d bytes, largest root %d; limit %d", full, biggest, limit)
	max := strconv.FormatInt(limit, 10)
	cache := filepath.Join(t.TempDir(), "cache")
	check := func(what string) {
		t.Helper()
		if n := cacheUsage(t, cache); n > limit {
			t.Errorf("after %s the cache holds %d bytes, over the limit %d", what, n, limit)
		}
	}
	for i, argv := range guests {
		rec := cacheRecord(t, cache, max, traces[i]+"2", argv)
		check("record")
		sameRun(t, "replay", rec, cacheRun(t, cache, max, "replay", "--autopilot", traces[i]+"2"))
		check("replay")
	}
	// The first root was evicted, or its blobs were: either way it
	// replays.
	sameRun(t, "replay after a trim", recs[0], cacheRun(t, cache, max, "replay", "--autopilot", traces[0]))
	check("replay")

	r := cacheRun(t, cache, max, "cache", "info")
	ci, err := trace.ReadCacheInfo(cache)
	if err != nil {
		t.Fatal(err)
	}
	out := string(r.Stdout)
	for _, want := range []string{cache, strconv.FormatInt(ci.Bytes, 10) + " bytes", "limit", "blobs", "roots"} {
		if !strings.Contains(out, want) {
			t.Errorf("hermit cache info: output lacks %q\n%s", want, describe(r))
		}
	}
	if r.Exit != 0 || len(r.Stderr) != 0 {
		t.Errorf("hermit cache info: %s", describe(r))
	}

	r = cacheRun(t, cache, max, "cache", "clean")
	if r.Exit != 0 || !strings.Contains(string(r.Stdout), "removed") {
		t.Errorf("hermit cache clean: %s", describe(r))
	}
	if n := cacheUsage(t, cache); n != 0 {
		t.Errorf("after hermit cache clean, the cache holds %d bytes", n)
	}
	sameRun(t, "replay after clean", recs[1], cacheRun(t, cache, max, "replay", "--autopilot", traces[1]))

	// A bad limit: one warning line, the default limit.
	r = cacheRun(t, cache, "lots", "cache", "info")
	if r.Exit != 0 || strings.Count(string(r.Stderr), "\n") != 1 || !strings.Contains(string(r.Stderr), "HERMIT_CACHE_MAX") ||
		!strings.Contains(string(r.Stdout), "4.0 GiB") {
		t.Errorf("hermit cache info with HERMIT_CACHE_MAX=lots: %s", describe(r))
	}
}

// TestCacheCommandErrors: usage errors are one line and exit 2.
func TestCacheCommandErrors(t *testing.T) {
	cache := t.TempDir()
	for _, args := range [][]string{{"cache"}, {"cache", "bogus"}, {"cache", "info", "extra"}, {"cache", "clean", "--all"}} {
		r := cacheRun(t, cache, "", args...)
		lines := strings.Count(string(r.Stderr), "\n")
		if r.Exit != 2 || (len(args) > 1 && lines != 1) {
			t.Errorf("hermit %s: %s", strings.Join(args, " "), describe(r))
		}
	}
	for _, args := range [][]string{{"cache", "--help"}, {"cache", "info", "--help"}, {"cache", "clean", "-h"}} {
		r := cacheRun(t, cache, "", args...)
		if r.Exit != 0 || !strings.Contains(string(r.Stdout), "Usage") || !strings.Contains(string(r.Stdout), cache) {
			t.Errorf("hermit %s: %s", strings.Join(args, " "), describe(r))
		}
	}
}
