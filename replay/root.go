package replay

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hermitdbg/hermit/trace"
)

// BuildRoot creates, under the empty directory dir, the filesystem the
// guest of a recording saw: every directory, regular file and symbolic
// link of files, which come from the trace's KindFile events in order.
// open returns the content of a blob ((*trace.Reader).OpenBlob).
//
//   - A directory gets the permission bits of its Mode, a regular file its
//     content and permission bits, a symbolic link its Target, unchanged.
//     A directory or file with an owner (Owned) gets that owner where the
//     builder may give it (as root; otherwise it keeps the builder's).
//     The set-user-ID and set-group-ID bits are dropped: they mean nothing
//     to a guest, which runs with no_new_privs, and they must not appear on
//     the host. The sticky bit is kept.
//   - Parent directories that are not listed are created 0755. A listed
//     directory that was already created as a parent gets its own mode.
//   - The first entry for a path wins; a later one is ignored, even of
//     another type (a file where a directory already is). So is an entry
//     below a regular file, and one of a type other than the three above
//     (devices, fifos and sockets: the guest gets /dev from the host).
//   - The entry "/" sets the mode of dir itself.
//
// Paths come from a trace that may be hostile: one that is not absolute or
// has a ".." component is an error, and so is one below a symbolic link
// of the root, since following the link could lead anywhere. Nothing is
// ever created outside dir (os.Root enforces it too). Directory modes are
// applied last, deepest first, so read-only directories can be filled.
//
// The result is meant to be the lower layer of the guest's root
// (ptrace.Options.Root); the guest never writes to it.
func BuildRoot(dir string, files []trace.File, open func(trace.BlobID) (io.ReadCloser, error)) error {
	return BuildRootCached(dir, files, open, "")
}

// BuildRootCached is BuildRoot with a cache of file contents in directory
// cache (none if ""): a regular file is a hard link to the cached copy of
// its content and mode, written there the first time. dir and cache must
// then be on one filesystem, or files are copied as without a cache. The
// guest never writes the root (it is an overlay's lower layer), so the
// links are safe.
func BuildRootCached(dir string, files []trace.File, open func(trace.BlobID) (io.ReadCloser, error), cache string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("building the replay root: %w", err)
	}
	defer root.Close()
	b := &rootBuilder{
		root:     root,
		dir:      dir,
		cache:    cache,
		open:     open,
		kinds:    map[string]uint32{".": trace.ModeDir},
		dirModes: map[string]fs.FileMode{},
		owners:   map[string]owner{},
		listed:   map[string]bool{},
	}
	for i := range files {
		if err := b.add(&files[i]); err != nil {
			return err
		}
	}
	return b.finish()
}

// rootBuilder tracks what it has created, so it never has to look at the
// disk to know whether a path is a directory, and so never follows a link.
type rootBuilder struct {
	root *os.Root
	// dir is the root's path; cache the file cache's, or "".
	dir, cache string
	open       func(trace.BlobID) (io.ReadCloser, error)
	// kinds maps each created path (relative to the root, "." for itself)
	// to its file type (trace.ModeDir, ModeRegular or ModeSymlink).
	kinds map[string]uint32
	// dirModes holds the final mode of every created directory; listed
	// marks those that came from an entry rather than as a parent.
	dirModes map[string]fs.FileMode
	// owners holds the owner of every listed directory that has one.
	owners map[string]owner
	listed map[string]bool
}

// owner is a file's owner, as chown takes it.
type owner struct{ uid, gid int }

func ownerOf(f *trace.File) (owner, bool) {
	return owner{int(f.Uid), int(f.Gid)}, f.Owned
}

// rootPath checks a trace path and returns it relative to the root.
func rootPath(p string) (string, error) {
	switch {
	case !strings.HasPrefix(p, "/"):
		return "", errors.New("not an absolute path")
	case strings.IndexByte(p, 0) >= 0:
		return "", errors.New("path contains a NUL byte")
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return "", errors.New(`path contains ".."`)
		}
	}
	rel := strings.TrimPrefix(path.Clean(p), "/")
	if rel == "" {
		rel = "."
	}
	return rel, nil
}

// fileMode turns the permission bits of a st_mode into an os.FileMode,
// keeping the sticky bit and dropping set-user-ID and set-group-ID.
func fileMode(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	if mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

func (b *rootBuilder) add(f *trace.File) error {
	rel, err := rootPath(f.Path)
	if err != nil {
		return fmt.Errorf("replay root: %q: %v", f.Path, err)
	}
	typ := f.Mode & trace.ModeType
	if typ != trace.ModeDir && typ != trace.ModeRegular && typ != trace.ModeSymlink {
		return nil
	}
	if kind, ok := b.kinds[rel]; ok {
		// A directory made as a parent takes the mode of its entry.
		if kind == trace.ModeDir && typ == trace.ModeDir && !b.listed[rel] {
			b.dirModes[rel] = fileMode(f.Mode)
			b.listed[rel] = true
			if o, ok := ownerOf(f); ok {
				b.owners[rel] = o
			}
		}
		return nil
	}
	ok, err := b.parents(rel)
	if err != nil || !ok {
		return err
	}
	switch typ {
	case trace.ModeDir:
		if err := b.root.Mkdir(rel, 0o700); err != nil {
			return b.fail(f.Path, err)
		}
		b.dirModes[rel] = fileMode(f.Mode)
		b.listed[rel] = true
		if o, ok := ownerOf(f); ok {
			b.owners[rel] = o
		}
	case trace.ModeRegular:
		if err := b.writeFile(rel, f); err != nil {
			return b.fail(f.Path, err)
		}
	case trace.ModeSymlink:
		if err := b.root.Symlink(f.Target, rel); err != nil {
			return b.fail(f.Path, err)
		}
	}
	b.kinds[rel] = typ
	return nil
}

// parents creates the missing parent directories of rel. It reports false
// when the entry is to be skipped because a parent is a regular file, and
// an error when a parent is a symbolic link.
func (b *rootBuilder) parents(rel string) (bool, error) {
	if rel == "." {
		return true, nil
	}
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		p := strings.Join(parts[:i], "/")
		switch b.kinds[p] {
		case trace.ModeDir:
			continue
		case trace.ModeRegular:
			return false, nil
		case trace.ModeSymlink:
			return false, fmt.Errorf("replay root: /%s: parent /%s is a symbolic link", rel, p)
		}
		if err := b.root.Mkdir(p, 0o700); err != nil {
			return false, b.fail("/"+p, err)
		}
		b.kinds[p] = trace.ModeDir
		b.dirModes[p] = 0o755
	}
	return true, nil
}

// writeFile creates regular file rel (which does not exist yet) with the
// content of f's blob and f's permission bits.
func (b *rootBuilder) writeFile(rel string, f *trace.File) error {
	if b.cache != "" && !f.Blob.IsZero() && b.linkCached(rel, f) == nil {
		return nil
	}
	out, err := b.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = b.copyBlob(out, f.Blob)
	if err == nil && f.Blob.IsZero() && f.Size > 0 {
		// A file too large to store: its size only (reads of it are in
		// the trace).
		err = out.Truncate(int64(f.Size))
	}
	if o, ok := ownerOf(f); ok && err == nil {
		chown(out, o)
	}
	if err == nil {
		err = out.Chmod(fileMode(f.Mode))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// linkCached links rel to the cached copy of f's content and mode, making
// the copy first if needed. rel's parents were made by the builder, so
// the path holds no link from the trace.
func (b *rootBuilder) linkCached(rel string, f *trace.File) error {
	mode := fileMode(f.Mode)
	name := filepath.Join(b.cache, fmt.Sprintf("%s-%o", f.Blob, mode))
	o, owned := ownerOf(f)
	if owned {
		name += fmt.Sprintf("-%d.%d", o.uid, o.gid)
	}
	if _, err := os.Stat(name); err != nil {
		tmp, err := os.CreateTemp(b.cache, ".tmp-*")
		if err != nil {
			return err
		}
		err = b.copyBlob(tmp, f.Blob)
		if owned && err == nil {
			chown(tmp, o)
		}
		if err == nil {
			err = tmp.Chmod(mode)
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), name)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return err
		}
	}
	return os.Link(name, filepath.Join(b.dir, rel))
}

func (b *rootBuilder) copyBlob(w io.Writer, id trace.BlobID) error {
	if id.IsZero() {
		return nil
	}
	rc, err := b.open(id)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(w, rc)
	return err
}

// finish applies the directory modes, deepest first, so that each
// directory is still open to its creator while its children are done.
func (b *rootBuilder) finish() error {
	dirs := make([]string, 0, len(b.dirModes))
	for d := range b.dirModes {
		dirs = append(dirs, d)
	}
	depth := func(d string) int {
		if d == "." {
			return 0
		}
		return strings.Count(d, "/") + 1
	}
	sort.Slice(dirs, func(i, j int) bool {
		if di, dj := depth(dirs[i]), depth(dirs[j]); di != dj {
			return di > dj
		}
		return dirs[i] < dirs[j]
	})
	for _, d := range dirs {
		f, err := b.root.Open(d)
		if err == nil {
			if o, ok := b.owners[d]; ok {
				chown(f, o)
			}
			err = f.Chmod(b.dirModes[d])
			f.Close()
		}
		if err != nil {
			return b.fail(path.Join("/", d), err)
		}
	}
	return nil
}

// chown gives f owner o if the builder may: root can, anyone else gets
// EPERM (or EINVAL, for an id its user namespace does not map) and the
// file keeps the builder's owner, who is the guest's root then.
func chown(f *os.File, o owner) {
	f.Chown(o.uid, o.gid)
}

// fail formats an error about trace path p on one line, without the
// root-relative path an *fs.PathError would repeat.
func (b *rootBuilder) fail(p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("replay root: %s: %w", p, err)
}

// FilesHere reports whether this machine holds, at the same paths, the
// same program file exe and shared libraries (files named *.so*) as the
// recording read: gdb may then read them from here (set sysroot /), which
// is faster than over the connection and also loads their auto-load
// scripts (libstdc++'s pretty printers), which gdb never does for a file
// it reads from the target.
func (rec *Recording) FilesHere(exe string) bool {
	for _, f := range rec.files {
		if f.Mode&trace.ModeType != trace.ModeRegular || f.Blob.IsZero() ||
			f.Path != exe && !strings.Contains(path.Base(f.Path), ".so") {
			continue
		}
		if !sameContent(f.Path, f.Blob) {
			return false
		}
	}
	return true
}

// sameContent reports whether file name holds the blob's content.
func sameContent(name string, blob trace.BlobID) bool {
	fh, err := os.Open(name)
	if err != nil {
		return false
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return false
	}
	return trace.BlobID(h.Sum(nil)) == blob
}
