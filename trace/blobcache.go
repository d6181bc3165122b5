package trace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// BlobCache remembers the blobs stored for files, by file identity
// (device, inode, size, modification and change times), so that a file
// recorded again unchanged is neither read, hashed nor compressed again:
// its compressed blob is linked (or copied) into the new trace.
//
// Layout: DIR/keys/IDENTITY is a symbolic link whose target is a blob id
// (one readlink to look up); DIR/blobs/ID is the blob, in a trace's blob
// format. Both are made under a temporary name and renamed.
type BlobCache struct {
	dir string
}

// racyAge is how old a file's change time must be for its identity to be
// trusted: a file changed within a filesystem timestamp's granularity of
// being cached could change again without changing its identity.
var racyAge = 2 * time.Second

// DefaultCacheDir is hermit's cache directory: $HERMIT_CACHE_DIR, else
// $XDG_CACHE_HOME/hermit, else ~/.cache/hermit.
func DefaultCacheDir() string {
	if d := os.Getenv("HERMIT_CACHE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "hermit")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "hermit-cache")
	}
	return filepath.Join(home, ".cache", "hermit")
}

// OpenBlobCache opens (creating, mode 0700) the blob cache in dir.
func OpenBlobCache(dir string) (*BlobCache, error) {
	for _, d := range []string{dir, filepath.Join(dir, "keys"), filepath.Join(dir, "blobs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("blob cache: %w", err)
		}
	}
	return &BlobCache{dir: dir}, nil
}

// fileKey names a file's identity, or "" when it must not be cached.
func fileKey(f *os.File) (string, int64) {
	fi, err := f.Stat()
	if err != nil {
		return "", 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return "", 0
	}
	ctime := time.Unix(st.Ctim.Unix())
	if time.Since(ctime) < racyAge {
		return "", st.Size
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", st.Dev, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Nano()), st.Size
}

// PutFile stores the content of the regular file f (read from offset 0,
// whatever f's offset) as a blob, through cache c when it is not nil.
func (w *Writer) PutFile(f *os.File, c *BlobCache) (BlobID, error) {
	key, size := fileKey(f)
	if c != nil && key != "" {
		if id, ok := c.lookup(key); ok && c.has(id) {
			// Linking the blob into the trace is left to another
			// goroutine (Close waits for it): it is a journaled metadata
			// operation, slow enough to matter at every file. A trim by
			// another hermit may remove the blob meanwhile; then it is
			// stored again from a duplicate of f.
			dup := dupFile(f)
			w.exports.Add(1)
			go func() {
				defer w.exports.Done()
				if dup != nil {
					defer dup.Close()
				}
				if err := c.reuse(id, w.dir, dup, size); err != nil {
					w.setErr(fmt.Errorf("blob cache: %w", err))
				}
			}()
			return id, nil
		}
	}
	id, err := putBlob(w.dir, io.NewSectionReader(f, 0, max(size, 0)+1<<40))
	if err != nil || c == nil || key == "" {
		return id, err
	}
	c.store(key, id, w.dir)
	return id, nil
}

// Settle waits until no file given to PutFile is held open any more (each
// is held by a blob link in progress until it is done): a guest's umount
// of a filesystem with such a file would fail with EBUSY. Call it from the
// goroutine that calls PutFile.
func (w *Writer) Settle() { w.exports.Wait() }

// has reports whether the cache holds blob id.
func (c *BlobCache) has(id BlobID) bool {
	_, err := os.Lstat(filepath.Join(c.dir, "blobs", id.String()))
	return err == nil
}

func (c *BlobCache) lookup(key string) (BlobID, bool) {
	target, err := os.Readlink(filepath.Join(c.dir, "keys", key))
	if err != nil {
		return BlobID{}, false
	}
	id, err := ParseBlobID(target)
	return id, err == nil
}

// reuse marks cached blob id used (for TrimCache) and puts it into the
// trace in dir. If the cache lost it, the blob is stored from f (of
// size bytes), if not nil.
func (c *BlobCache) reuse(id BlobID, dir string, f *os.File, size int64) error {
	now := time.Now()
	os.Chtimes(filepath.Join(c.dir, "blobs", id.String()), now, now)
	err := c.export(id, dir)
	if err == nil || f == nil || c.has(id) {
		return err
	}
	got, err := putBlob(dir, io.NewSectionReader(f, 0, max(size, 0)+1<<40))
	if err == nil && got != id {
		err = fmt.Errorf("%s changed while it was recorded", f.Name())
	}
	return err
}

// dupFile returns a close-on-exec duplicate of f, or nil.
func dupFile(f *os.File) *os.File {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nfd := -1
	rc.Control(func(fd uintptr) {
		r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_DUPFD_CLOEXEC, 0)
		if errno == 0 {
			nfd = int(r)
		}
	})
	if nfd < 0 {
		return nil
	}
	return os.NewFile(uintptr(nfd), f.Name())
}

// export puts cached blob id into the trace in dir: one hard link (a
// link is atomic: no temporary name needed), or a copy across
// filesystems.
func (c *BlobCache) export(id BlobID, dir string) error {
	src, dst := filepath.Join(c.dir, "blobs", id.String()), blobPath(dir, id)
	err := os.Link(src, dst)
	switch {
	case err == nil, errors.Is(err, fs.ErrExist):
		return nil
	case errors.Is(err, syscall.EXDEV), errors.Is(err, syscall.EPERM):
		return linkOrCopy(src, dst)
	}
	return err
}

// store remembers that key has blob id, stored in the trace in dir.
// Failures only cost a later miss.
func (c *BlobCache) store(key string, id BlobID, dir string) {
	dst := filepath.Join(c.dir, "blobs", id.String())
	if _, err := os.Stat(dst); err != nil && linkOrCopy(blobPath(dir, id), dst) != nil {
		return
	}
	tmp := filepath.Join(c.dir, "keys", ".tmp-"+key)
	os.Remove(tmp)
	if os.Symlink(id.String(), tmp) == nil {
		os.Rename(tmp, filepath.Join(c.dir, "keys", key))
	}
}

// linkOrCopy makes dst a hard link to src, or a copy across filesystems,
// atomically (through a temporary name).
func linkOrCopy(src, dst string) error {
	tmp := dst + ".tmp-" + fmt.Sprint(os.Getpid())
	os.Remove(tmp)
	if err := os.Link(src, tmp); err != nil {
		if !errors.Is(err, syscall.EXDEV) && !errors.Is(err, syscall.EPERM) {
			return err
		}
		if err := copyFile(src, tmp); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
