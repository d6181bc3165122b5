package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A trim walks the whole cache (every root's tree), which takes half a
// second for a cache of 11,000 files. So after each walk TrimCache notes
// in stampName the size it left and the modification times of the
// directories whose entries make up the cache. An entry comes or goes
// only as a name in one of them (blobs are never rewritten, and a root is
// built aside and renamed into roots/), so while their times are those
// noted, the cache still holds what the walk found, and a trim to a
// limit at or above that skips the walk. A stamp written less than
// stampSettle after the latest of those times is not trusted: a change
// within the same tick of the filesystem's clock would not show.

const (
	stampName   = ".trimmed"
	stampSettle = 50 * time.Millisecond
)

// stampDirs are the directories, under a cache directory, whose names are
// the cache's entries.
var stampDirs = []string{"blobs/blobs", "blobs/keys", "files", "roots"}

// dirTimes returns the modification times of dir's stampDirs, as one
// string, and the latest of them.
func dirTimes(dir string) (string, time.Time) {
	var b strings.Builder
	var latest time.Time
	for _, d := range stampDirs {
		var ns int64
		if fi, err := os.Stat(filepath.Join(dir, d)); err == nil {
			ns = fi.ModTime().UnixNano()
			if fi.ModTime().After(latest) {
				latest = fi.ModTime()
			}
		}
		fmt.Fprintf(&b, "%s=%d ", d, ns)
	}
	return b.String(), latest
}

// writeStamp notes that cache directory dir holds bytes now.
func writeStamp(dir string, bytes int64) {
	times, latest := dirTimes(dir)
	if time.Since(latest) < stampSettle {
		os.Remove(filepath.Join(dir, stampName))
		return
	}
	tmp := filepath.Join(dir, stampName+".tmp-"+fmt.Sprint(os.Getpid()))
	if os.WriteFile(tmp, []byte(fmt.Sprintf("%d %s\n", bytes, times)), 0o600) != nil || os.Rename(tmp, filepath.Join(dir, stampName)) != nil {
		os.Remove(tmp)
	}
}

// unchangedSince reports whether cache directory dir is as its stamp
// says, holding at most limit bytes, and the bytes it holds.
func unchangedSince(dir string, limit int64) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(dir, stampName))
	if err != nil {
		return 0, false
	}
	var bytes int64
	n, _ := fmt.Sscanf(string(b), "%d ", &bytes)
	times, _ := dirTimes(dir)
	_, rest, _ := strings.Cut(strings.TrimSuffix(string(b), "\n"), " ")
	if n != 1 || rest != times || bytes > limit {
		return 0, false
	}
	return bytes, true
}
