package trace

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Trimming hermit's cache directory (DefaultCacheDir) to a size limit.
//
// The cache holds four kinds of entry:
//
//	blobs/blobs/ID       a recorded file's blob; traces hold hard links to it
//	blobs/keys/IDENTITY  a symbolic link naming a blob (see BlobCache)
//	roots/KEY            a replay root rebuilt from a trace (a directory tree)
//	files/ID-MODE        a regular file of replay roots, hard-linked into them
//
// plus temporaries (names with ".tmp-" or ".evict-"). An entry's last use
// is its modification time, which its users set (access times are not
// kept up to date under relatime or noatime): a blob when it is linked
// into a trace, a root when a replay takes it; a file of roots counts as
// used when the latest root linking it was.
//
// TrimCache removes least recently used entries until the cache's size
// (its disk usage, each inode counted once, as du counts) is within the
// limit. Nothing in use is removed:
//
//   - A replay root is in use while a process holds a shared flock on its
//     directory (HoldCachedRoot; held until the process exits). A root is
//     removed only under an exclusive flock, first renamed away, so a
//     process that locks it afterwards sees that its path is gone.
//   - A blob may be removed between a recording's lookup and its link:
//     the recording then stores the blob again from the file (PutFile).
//     A blob already linked into a trace stays in the trace.
//   - A file of roots may vanish while a root is built: the builder copies
//     the content instead (replay.BuildRootCached). Roots that link it
//     keep their own link.
//   - A temporary is removed only once it is older than tempAge, and a
//     root being built only when nobody holds its lock.
//
// Two trims never run at once (an exclusive flock on the cache directory;
// a second one gives up).

// DefaultCacheMax is the cache's size limit when $HERMIT_CACHE_MAX is not
// set: 4 GiB.
const DefaultCacheMax = 4 << 30

// tempAge is how old a temporary must be before a trim removes it: no
// hermit takes that long between making one and renaming or locking it.
var tempAge = 10 * time.Minute

// CacheMax returns the cache's size limit in bytes, from $HERMIT_CACHE_MAX
// (bytes, or a number with a K, M, G or T suffix, powers of 1024; 0 means
// no limit). A bad value gives DefaultCacheMax and an error that says so.
func CacheMax() (int64, error) {
	s, ok := os.LookupEnv("HERMIT_CACHE_MAX")
	if !ok || s == "" {
		return DefaultCacheMax, nil
	}
	n, err := ParseSize(s)
	if err != nil {
		return DefaultCacheMax, fmt.Errorf("HERMIT_CACHE_MAX=%q is not a size (bytes, or a number with K, M or G); using 4G", s)
	}
	return n, nil
}

// ParseSize parses a byte count: digits, then optionally K, M, G or T
// (powers of 1024, either case), optionally followed by "B" or "iB"
// ("512", "64M", "4GiB").
func ParseSize(s string) (int64, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	mul := int64(1)
	for i, m := range []string{"K", "M", "G", "T"} {
		if t, ok := trimAnySuffix(u, m+"IB", m+"B", m); ok {
			u, mul = t, 1<<(10*(i+1))
			break
		}
	}
	if mul == 1 {
		u = strings.TrimSuffix(u, "B")
	}
	if u == "" || strings.TrimLeft(u, "0123456789") != "" {
		return 0, fmt.Errorf("bad size %q", s)
	}
	n, err := strconv.ParseInt(u, 10, 64)
	if err != nil || n > math.MaxInt64/mul {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mul, nil
}

func trimAnySuffix(s string, suffixes ...string) (string, bool) {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return strings.TrimSuffix(s, x), true
		}
	}
	return s, false
}

// Cache entry kinds, as CacheInfo counts them.
const (
	CacheBlobs = "blobs" // blobs/blobs/ID
	CacheKeys  = "keys"  // blobs/keys/IDENTITY
	CacheRoots = "roots" // roots/KEY
	CacheFiles = "files" // files/ID-MODE
	CacheTemps = "temporaries"
)

// CacheKinds lists the kinds in the order to show them.
var CacheKinds = []string{CacheBlobs, CacheKeys, CacheRoots, CacheFiles, CacheTemps}

// CacheCount is a number of entries and the bytes they hold. An inode
// with names in several entries (a file of roots and the roots linking
// it) counts in the kind scanned first: files before roots.
type CacheCount struct {
	Entries int
	Bytes   int64
}

// CacheInfo describes a cache directory.
type CacheInfo struct {
	Dir   string
	Bytes int64 // disk usage, each inode once
	Kinds map[string]CacheCount
	// InUse counts the roots held by a running hermit (and the files
	// they link are kept with them).
	InUse int
}

// ReadCacheInfo scans cache directory dir. A missing dir is an empty cache.
func ReadCacheInfo(dir string) (CacheInfo, error) {
	s, err := scanCache(dir)
	if err != nil {
		return CacheInfo{}, err
	}
	return s.info(), nil
}

// TrimCache removes least recently used entries of cache directory dir
// that are not in use until it holds at most limit bytes (limit 0: no
// limit; a negative limit removes everything not in use), and always
// removes stale temporaries and keys naming no blob. It returns what is
// left. Entries it fails to remove are skipped. If another hermit is
// trimming dir, it does nothing (with a negative limit, it waits).
func TrimCache(dir string, limit int64) (CacheInfo, error) {
	d, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return CacheInfo{Dir: dir, Kinds: map[string]CacheCount{}}, nil
	}
	if err != nil {
		return CacheInfo{}, fmt.Errorf("cache: %w", err)
	}
	defer d.Close()
	how := syscall.LOCK_EX
	if limit >= 0 {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(d.Fd()), how); err != nil {
		return ReadCacheInfo(dir) // another trim is running
	}
	if limit > 0 {
		if bytes, ok := unchangedSince(dir, limit); ok {
			return CacheInfo{Dir: dir, Bytes: bytes, Kinds: map[string]CacheCount{}}, nil
		}
	}
	s, err := scanCache(dir)
	if err != nil {
		return CacheInfo{}, err
	}
	s.trim(limit)
	info := s.info()
	writeStamp(dir, info.Bytes)
	return info, nil
}

// HoldCachedRoot takes a shared lock on the cached replay root at path,
// held until the process exits, so that no trim removes it while this
// process may use it, and marks it used now. It reports false, holding
// nothing, if path is gone or is not the directory it was (a trim removed
// it): the caller must build the root again.
func HoldCachedRoot(path string) bool {
	heldMu.Lock()
	defer heldMu.Unlock()
	if f := held[path]; f != nil && samePath(f, path) {
		touch(path)
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_SH) != nil || !samePath(f, path) {
		f.Close()
		return false
	}
	touch(path)
	if old := held[path]; old != nil {
		old.Close() // a root removed since
	}
	held[path] = f
	return true
}

// touch marks path used now.
func touch(path string) {
	now := time.Now()
	os.Chtimes(path, now, now)
}

// samePath reports whether path still names open file f.
func samePath(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// cacheEntry is one entry of a scanned cache.
type cacheEntry struct {
	kind string
	path string
	used time.Time
	// names lists the inode of each of its names (one for a blob or a
	// file, one per name in a root's tree).
	names []inode
	keys  []string // a blob's keys
	busy  bool     // in use: never removed
}

type inode struct{ dev, ino uint64 }

// cacheScan is a cache directory as scanned once.
type cacheScan struct {
	dir     string
	entries []*cacheEntry
	links   map[inode]int   // names of each inode inside the cache
	size    map[inode]int64 // disk usage of each inode
	owner   map[inode]string
	total   int64
	keys    int      // keys naming a blob
	dangle  []string // keys naming no blob
}

// held keeps the roots this process holds (HoldCachedRoot) open, and so
// locked, until it exits.
var (
	heldMu sync.Mutex
	held   = map[string]*os.File{} // protected by heldMu; by path
)

func scanCache(dir string) (*cacheScan, error) {
	s := &cacheScan{dir: dir, links: map[inode]int{}, size: map[inode]int64{}, owner: map[inode]string{}}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return s, nil
	} else if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	blobs := map[string]*cacheEntry{}
	for _, name := range readNames(filepath.Join(dir, "blobs", "blobs")) {
		e := s.add(CacheBlobs, filepath.Join(dir, "blobs", "blobs", name))
		if e != nil && e.kind == CacheBlobs {
			blobs[name] = e
		}
	}
	keys := 0
	for _, name := range readNames(filepath.Join(dir, "blobs", "keys")) {
		p := filepath.Join(dir, "blobs", "keys", name)
		if isTemp(name) {
			s.add(CacheTemps, p)
			continue
		}
		target, _ := os.Readlink(p)
		if e := blobs[target]; e != nil {
			e.keys = append(e.keys, p)
			keys++
		} else {
			s.dangle = append(s.dangle, p)
		}
	}
	s.keys = keys
	files := map[inode]*cacheEntry{}
	for _, name := range readNames(filepath.Join(dir, "files")) {
		e := s.add(CacheFiles, filepath.Join(dir, "files", name))
		if e != nil && e.kind == CacheFiles && len(e.names) == 1 {
			files[e.names[0]] = e
		}
	}
	for _, name := range readNames(filepath.Join(dir, "roots")) {
		e := s.addTree(filepath.Join(dir, "roots", name), isTemp(name))
		if e == nil || e.kind != CacheRoots {
			continue
		}
		// A file of roots was last used when the latest root linking
		// it was, and is in use if that root is.
		for _, n := range e.names {
			if f := files[n]; f != nil {
				if e.used.After(f.used) {
					f.used = e.used
				}
				f.busy = f.busy || e.busy
			}
		}
	}
	return s, nil
}

// isTemp reports whether a name in the cache is a temporary.
func isTemp(name string) bool {
	return strings.Contains(name, ".tmp-") || strings.HasPrefix(name, ".evict-")
}

func readNames(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names
}

// add scans a single-file entry of kind (or a temporary).
func (s *cacheScan) add(kind, p string) *cacheEntry {
	if isTemp(filepath.Base(p)) {
		kind = CacheTemps
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		return s.addTree(p, true)
	}
	e := &cacheEntry{kind: kind, path: p, used: fi.ModTime()}
	if kind == CacheTemps {
		e.busy = time.Since(e.used) < tempAge
	}
	s.name(e, fi)
	s.entries = append(s.entries, e)
	return e
}

// addTree scans a root, or a temporary directory (a root being built or
// being removed), with every name below it.
func (s *cacheScan) addTree(p string, temp bool) *cacheEntry {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil
	}
	e := &cacheEntry{kind: CacheRoots, path: p, used: fi.ModTime()}
	if temp {
		e.kind = CacheTemps
	}
	if !fi.IsDir() {
		if temp {
			s.name(e, fi)
			s.entries = append(s.entries, e)
		}
		return nil // not a root
	}
	switch {
	case strings.HasPrefix(filepath.Base(p), ".evict-"):
		// Renamed away by a trim: nobody can be using it.
	case temp && time.Since(e.used) < tempAge:
		e.busy = true
	default:
		e.busy = !lockable(p)
	}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			s.name(e, fi)
		}
		return nil
	})
	s.entries = append(s.entries, e)
	return e
}

// lockable reports whether nobody holds a lock on directory p.
func lockable(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// name counts one name of e, with file info fi.
func (s *cacheScan) name(e *cacheEntry, fi fs.FileInfo) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	n := inode{st.Dev, st.Ino}
	e.names = append(e.names, n)
	if s.links[n] == 0 {
		s.size[n] = st.Blocks * 512
		s.owner[n] = e.kind
		s.total += st.Blocks * 512
	}
	s.links[n]++
}

func (s *cacheScan) info() CacheInfo {
	ci := CacheInfo{Dir: s.dir, Bytes: s.total, Kinds: map[string]CacheCount{}}
	for _, k := range CacheKinds {
		ci.Kinds[k] = CacheCount{}
	}
	counted := map[inode]bool{}
	for _, e := range s.entries {
		c := ci.Kinds[e.kind]
		c.Entries++
		for _, n := range e.names {
			if !counted[n] && s.links[n] > 0 && s.owner[n] == e.kind {
				counted[n] = true
				c.Bytes += s.size[n]
			}
		}
		ci.Kinds[e.kind] = c
		if e.kind == CacheRoots && e.busy {
			ci.InUse++
		}
	}
	ci.Kinds[CacheKeys] = CacheCount{Entries: s.keys}
	return ci
}

// trim removes stale temporaries and dangling keys, then the least
// recently used entries not in use while the total is over limit.
func (s *cacheScan) trim(limit int64) {
	for _, p := range s.dangle {
		os.Remove(p)
	}
	s.dangle = nil
	var cands []*cacheEntry
	for _, e := range s.entries {
		switch {
		case e.busy:
		case e.kind == CacheTemps:
			s.remove(e)
		default:
			cands = append(cands, e)
		}
	}
	// Oldest first; at one time, roots before the files they link.
	rank := map[string]int{CacheRoots: 0, CacheFiles: 1, CacheBlobs: 2}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if !a.used.Equal(b.used) {
			return a.used.Before(b.used)
		}
		return rank[a.kind] < rank[b.kind]
	})
	for _, e := range cands {
		if limit == 0 || limit > 0 && s.total <= limit {
			break
		}
		s.remove(e)
	}
	kept := s.entries[:0]
	for _, e := range s.entries {
		if !e.removed() {
			kept = append(kept, e)
		}
	}
	s.entries = kept
}

// removed marks entries gone (their path is cleared).
func (e *cacheEntry) removed() bool { return e.path == "" }

// remove deletes entry e and uncounts its names.
func (s *cacheScan) remove(e *cacheEntry) {
	var err error
	switch e.kind {
	case CacheRoots:
		err = removeRoot(e.path)
	case CacheTemps:
		err = removeTree(e.path)
	default:
		err = os.Remove(e.path)
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		if err == nil {
			for _, k := range e.keys {
				os.Remove(k)
			}
			s.keys -= len(e.keys)
		}
	}
	if err != nil {
		return
	}
	for _, n := range e.names {
		if s.links[n]--; s.links[n] == 0 {
			s.total -= s.size[n]
		}
	}
	e.path = ""
}

// removeRoot removes a cached root unless a process holds it: under an
// exclusive lock it is renamed away (a process waiting for its shared
// lock then finds the path gone), then deleted.
func removeRoot(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return err
	}
	if !samePath(f, p) {
		return errors.New("cache: root replaced")
	}
	gone := filepath.Join(filepath.Dir(p), fmt.Sprintf(".evict-%s-%d", filepath.Base(p), os.Getpid()))
	if err := os.Rename(p, gone); err != nil {
		return err
	}
	f.Close()
	return removeTree(gone)
}

// removeTree is os.RemoveAll that also copes with read-only directories
// (a root keeps the recorded modes).
func removeTree(p string) error {
	if os.RemoveAll(p) == nil {
		return nil
	}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(q, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}
