package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hermitdbg/hermit/trace"
)

// A rebuilt root is a pure function of the captured files, and replay
// never writes to it (it is an overlay's lower layer), so roots are kept
// in hermit's cache directory, under roots/ and named by a hash of the
// file list: replaying a trace again, or restarting a Session, needs no
// rebuilding, and no removal at the end. Their regular files are hard
// links into files/, one per content and mode, shared by every root.

// A replay holds a shared lock on its root until the process ends
// (trace.HoldCachedRoot), so that a trim of the cache (trace.TrimCache)
// by any hermit leaves it alone; a root being built is locked from its
// creation, under its temporary name. Using a root marks it used (its
// modification time), for the trim's least-recently-used order.

// cachedRoot returns the root of files in the cache, building it the
// first time. It returns "" (and no error) when there is no usable cache.
func cachedRoot(files []trace.File, open func(trace.BlobID) (io.ReadCloser, error)) (string, error) {
	base := trace.DefaultCacheDir()
	roots, contents := filepath.Join(base, "roots"), filepath.Join(base, "files")
	for _, d := range []string{roots, contents} {
		if os.MkdirAll(d, 0o700) != nil {
			return "", nil
		}
	}
	final := filepath.Join(roots, rootKey(files))
	// A trim may remove the root between a look and the lock; then it
	// is built again. Three rounds are plenty: a trim removes a root only
	// if it is older than every root it keeps.
	for range 3 {
		if _, err := os.Stat(final); err == nil && trace.HoldCachedRoot(final) {
			return final, nil
		}
		tmp, err := os.MkdirTemp(roots, ".tmp-")
		if err != nil {
			return "", nil
		}
		if !trace.HoldCachedRoot(tmp) || os.Chmod(tmp, 0o755) != nil {
			os.RemoveAll(tmp)
			return "", nil
		}
		if err := BuildRootCached(tmp, files, open, contents); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
		err = os.Rename(tmp, final)
		if err == nil {
			return final, nil // held since it was made
		}
		// Another hermit built the same root meanwhile: use that one.
		os.RemoveAll(tmp)
		if !errors.Is(err, fs.ErrExist) && !dirExists(final) {
			return "", nil
		}
	}
	return "", nil
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// rootKey names a file list.
func rootKey(files []trace.File) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%q %o %s %q %d", f.Path, f.Mode, f.Blob, f.Target, f.Size)
		if f.Owned {
			fmt.Fprintf(h, " %d:%d", f.Uid, f.Gid)
		}
		fmt.Fprintln(h)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
