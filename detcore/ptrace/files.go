package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/hermitdbg/hermit/detcore"
	"golang.org/x/sys/unix"
)

// The guest lives in its own mount namespace (a private /tmp, its own
// /proc, files mounted over /proc/cpuinfo), so the tracer looks its paths
// up under /proc/TID/root with openat2(RESOLVE_IN_ROOT): ".." stops at the
// guest's root and absolute symlinks resolve in it. A relative path is
// joined to the path of its base directory, which readlink of
// /proc/TID/cwd or /proc/TID/fd/N gives as the guest sees it.
//
// What the tracer cannot see as the guest does, it reports as
// detcore.ErrNotEmulated and the call runs natively: magic links
// (/proc/PID/fd/N; RESOLVE_IN_ROOT refuses them), /proc/self and
// /proc/thread-self (the tracer has no pid in the guest's pid namespace),
// deleted or unreachable base directories, and errors other than ENOENT and
// ENOTDIR. An ENOENT or ENOTDIR is the guest's answer only when the lookup
// fails the same way without following any symlink and no component is
// named self or thread-self, so that no symlink led into /proc/self
// (/dev/stdin, /dev/fd).

var _ detcore.FileTracer = (*Tracer)(nil)

// statxWant is what the tracer always asks statx for.
const statxWant = unix.STATX_BASIC_STATS | unix.STATX_BTIME

// Statx implements detcore.FileTracer.Statx.
func (t *Tracer) Statx(tid int, req detcore.StatReq) (detcore.StatxBuf, string, error) {
	var st detcore.StatxBuf
	flags := unix.AT_EMPTY_PATH | req.Flags&(unix.AT_STATX_FORCE_SYNC|unix.AT_STATX_DONT_SYNC)
	mask := req.Mask | statxWant
	var fd int
	var err error
	own := true // fd is a descriptor of the tracer's own, closed here
	switch {
	case req.Path != "":
		fd, err = t.lookup(tid, req.Dirfd, req.Path, req.Flags&unix.AT_SYMLINK_NOFOLLOW != 0)
	case req.Flags&unix.AT_EMPTY_PATH == 0:
		return st, "", detcore.Errno(unix.ENOENT)
	case req.Dirfd != unix.AT_FDCWD:
		// A descriptor: the copy the stop's other questions share.
		var h *held
		h, err = t.heldFd(tid, req.Dirfd)
		if errors.Is(err, unix.EBADF) {
			return st, "", detcore.Errno(unix.EBADF)
		}
		if err == nil {
			fd, own = h.fd, false
		}
	default:
		fd, err = t.dirFd(tid, req.Dirfd)
	}
	if err != nil {
		return st, "", notEmulated(err)
	}
	if own {
		defer unix.Close(fd)
	}
	if err := statx(fd, "", flags, mask, (*[256]byte)(&st)); err != nil {
		return st, "", notEmulated(err)
	}
	found := ""
	if req.Where {
		found, _ = guestView(tid, fmt.Sprintf("/proc/self/fd/%d", fd))
	}
	return st, found, nil
}

// lookup opens (O_PATH) what path names for thread tid relative to dirfd.
func (t *Tracer) lookup(tid, dirfd int, path string, nofollow bool) (int, error) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC}
	if nofollow {
		how.Flags |= unix.O_NOFOLLOW
	}
	if strings.HasPrefix(path, "/") {
		root, err := openProc(tid, "root")
		if err != nil {
			return -1, err
		}
		defer unix.Close(root)
		return resolve(root, path, how, unix.RESOLVE_IN_ROOT)
	}
	dir, err := t.dirFd(tid, dirfd)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dir)
	fd, err := resolve(dir, path, how, unix.RESOLVE_BENEATH)
	if err != unix.EXDEV {
		return fd, err
	}
	// The path leaves dir (".." or an absolute symlink): resolve it in
	// the guest's root, joined to the path of dir, if that path still
	// leads to dir (a mount may cover it: the guest's first working
	// directory may lie under its private /tmp).
	root, err := openProc(tid, "root")
	if err != nil {
		return -1, err
	}
	defer unix.Close(root)
	base, err := guestPath(tid, root, dir)
	if err != nil {
		return climb(root, dir, path, how)
	}
	return resolve(root, base+"/"+path, how, unix.RESOLVE_IN_ROOT)
}

// climb resolves path, which leaves dir by its leading ".." components,
// when dir's own path cannot be read (a directory more than 4096 bytes
// deep: Go's os.Getwd walks up from one with ../../name): it goes up a
// directory at a time, staying at the guest's root, open as root, as the
// kernel does, and resolves the rest beneath where it got.
func climb(root, dir int, path string, how unix.OpenHow) (int, error) {
	var rootSt [256]byte
	if statx(root, "", unix.AT_EMPTY_PATH, unix.STATX_INO, &rootSt) != nil {
		return -1, detcore.ErrNotEmulated
	}
	cur, err := unix.Openat(dir, ".", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, detcore.ErrNotEmulated
	}
	defer func() { unix.Close(cur) }()
	rest := path
	for {
		rest = strings.TrimLeft(rest, "/")
		if rest != ".." && !strings.HasPrefix(rest, "../") {
			break
		}
		rest = rest[2:]
		var st [256]byte
		if statx(cur, "", unix.AT_EMPTY_PATH, unix.STATX_INO, &st) != nil {
			return -1, detcore.ErrNotEmulated
		}
		if fileID(&st) == fileID(&rootSt) {
			continue
		}
		up, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
		if err != nil {
			return -1, detcore.ErrNotEmulated
		}
		unix.Close(cur)
		cur = up
	}
	if rest == "" {
		rest = "."
	}
	fd, err := resolve(cur, rest, how, unix.RESOLVE_BENEATH)
	if err == unix.EXDEV {
		return -1, detcore.ErrNotEmulated
	}
	return fd, err
}

// resolve opens path under dirfd with openat2 and the given RESOLVE_*
// flags (never following magic links). Besides success it returns EXDEV
// (the path leaves dirfd under RESOLVE_BENEATH), an Errno that is the
// guest's answer, or ErrNotEmulated.
func resolve(dirfd int, path string, how unix.OpenHow, flags uint64) (int, error) {
	how.Resolve = flags | unix.RESOLVE_NO_MAGICLINKS
	fd, err := unix.Openat2(dirfd, path, &how)
	switch {
	case err == nil:
		return fd, nil
	case err == unix.EXDEV && flags&unix.RESOLVE_BENEATH != 0:
		return -1, err
	case (err == unix.ENOENT || err == unix.ENOTDIR) && !namesSelf(path):
		how.Resolve |= unix.RESOLVE_NO_SYMLINKS
		fd2, err2 := unix.Openat2(dirfd, path, &how)
		if err2 == nil {
			unix.Close(fd2)
		}
		if err2 == err {
			return -1, detcore.Errno(err.(unix.Errno))
		}
	}
	return -1, detcore.ErrNotEmulated
}

// dirFd returns an O_PATH copy of thread tid's working directory (dirfd
// AT_FDCWD) or of its descriptor dirfd.
func (t *Tracer) dirFd(tid, dirfd int) (int, error) {
	if dirfd == unix.AT_FDCWD {
		return openProc(tid, "cwd")
	}
	fd, err := t.dupFd(tid, dirfd)
	if errors.Is(err, unix.EBADF) {
		return -1, detcore.Errno(unix.EBADF)
	}
	return fd, err
}

// guestPath returns the path of directory dir as thread tid, whose root
// is open as root, sees it, checking that the path leads back to dir.
func guestPath(tid, root, dir int) (string, error) {
	base, err := guestView(tid, fmt.Sprintf("/proc/self/fd/%d", dir))
	if err != nil {
		return "", err
	}
	fd, err := unix.Openat2(root, base, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return "", detcore.ErrNotEmulated
	}
	defer unix.Close(fd)
	var a, b [256]byte
	if statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_INO, &a) != nil ||
		statx(dir, "", unix.AT_EMPTY_PATH, unix.STATX_INO, &b) != nil ||
		fileID(&a) != fileID(&b) {
		return "", detcore.ErrNotEmulated
	}
	return base, nil
}

// guestView returns the path that link (a /proc/.../fd/N) names, as
// thread tid, whose root may be elsewhere (a chroot, a replay's rebuilt
// root), sees it.
func guestView(tid int, link string) (string, error) {
	base, err := readlink(link)
	if err != nil || !strings.HasPrefix(base, "/") || strings.HasSuffix(base, " (deleted)") {
		return "", detcore.ErrNotEmulated
	}
	// The link is relative to the root of the guest's mount namespace;
	// after a chroot the guest's root is elsewhere.
	rootPath, err := readlink(fmt.Sprintf("/proc/%d/root", tid))
	switch {
	case err != nil:
		return "", detcore.ErrNotEmulated
	case rootPath == "/":
		return base, nil
	case base == rootPath:
		return "/", nil
	case strings.HasPrefix(base, rootPath+"/"):
		return base[len(rootPath):], nil
	}
	return "", detcore.ErrNotEmulated
}

// namesSelf says whether some component of path is procfs's self or
// thread-self link.
func namesSelf(path string) bool {
	for _, c := range strings.Split(path, "/") {
		if c == "self" || c == "thread-self" {
			return true
		}
	}
	return false
}

func readlink(path string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlink(path, buf)
	if err != nil {
		return "", err
	}
	if n == len(buf) {
		return "", unix.ENAMETOOLONG
	}
	return string(buf[:n]), nil
}

// openProc opens /proc/TID/name (cwd or root) as an O_PATH descriptor.
func openProc(tid int, name string) (int, error) {
	return unix.Open(fmt.Sprintf("/proc/%d/%s", tid, name), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// notEmulated keeps ErrGone errors and turns the others into
// detcore.ErrNotEmulated.
func notEmulated(err error) error {
	var en detcore.Errno
	if errors.Is(err, detcore.ErrGone) || errors.As(err, &en) || errors.Is(err, detcore.ErrNotEmulated) {
		return err
	}
	return detcore.ErrNotEmulated
}

// fileID decodes the identity in a struct statx the tracer asked for with
// statxWant.
// (Offsets from <linux/stat.h>.)
func fileID(st *[256]byte) detcore.FileID {
	le := binary.LittleEndian
	id := detcore.FileID{
		Dev: uint64(le.Uint32(st[136:]))<<32 | uint64(le.Uint32(st[140:])), // stx_dev_major, minor
		Ino: le.Uint64(st[32:]),
	}
	// A filesystem on an anonymous device (major 0) does not reuse inode
	// numbers as a disk's does, and an overlay gives a file a new birth
	// time when it copies it up (detcore.StatxBuf.id).
	id.BtimeKnown = id.Dev>>32 != 0
	if le.Uint32(st[0:])&unix.STATX_BTIME != 0 { // stx_mask
		id.Btime = int64(le.Uint64(st[80:]))*1e9 + int64(le.Uint32(st[88:]))
	}
	return id
}

// statxMode returns stx_mode.
func statxMode(st *[256]byte) uint32 { return uint32(binary.LittleEndian.Uint16(st[28:])) }

// OpenDir implements detcore.FileTracer.OpenDir.
func (t *Tracer) OpenDir(tid, fd int) (detcore.DirHandle, error) {
	c, err := t.dupFd(tid, fd)
	if errors.Is(err, unix.EBADF) {
		return nil, detcore.Errno(unix.EBADF)
	}
	if err != nil {
		return nil, notEmulated(err)
	}
	var st [256]byte
	err = statx(c, "", unix.AT_EMPTY_PATH, statxWant, &st)
	if err != nil || statxMode(&st)&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(c)
		return nil, detcore.ErrNotEmulated
	}
	return &dirHandle{fd: c, id: fileID(&st)}, nil
}

// dirHandle is a duplicate of a guest's directory descriptor.
type dirHandle struct {
	fd int
	id detcore.FileID
}

// ID implements detcore.DirHandle.ID.
func (d *dirHandle) ID() detcore.FileID { return d.id }

// Offset implements detcore.DirHandle.Offset.
func (d *dirHandle) Offset() (int64, error) { return unix.Seek(d.fd, 0, unix.SEEK_CUR) }

// SetOffset implements detcore.DirHandle.SetOffset.
func (d *dirHandle) SetOffset(off int64) error {
	_, err := unix.Seek(d.fd, off, unix.SEEK_SET)
	return err
}

// Close implements detcore.DirHandle.Close.
func (d *dirHandle) Close() error { return unix.Close(d.fd) }

// ReadAll implements detcore.DirHandle.ReadAll. Each entry is identified
// by a statx of its name, as a stat by the guest would find it; an entry
// that cannot be looked up (gone, or a directory without search
// permission) keeps the directory's device and its d_ino.
func (d *dirHandle) ReadAll() ([]detcore.DirEntry, error) {
	if err := d.SetOffset(0); err != nil {
		return nil, errnoOf(err)
	}
	var ents []detcore.DirEntry
	buf := make([]byte, 64<<10)
	var st [256]byte
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, errnoOf(err)
		}
		if n == 0 {
			return ents, nil
		}
		// struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name.
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return nil, fmt.Errorf("getdents64: bad record length %d", reclen)
			}
			name := b[19:reclen]
			if i := strings.IndexByte(string(name), 0); i >= 0 {
				name = name[:i]
			}
			de := detcore.DirEntry{Name: string(name), Type: b[18]}
			if statx(d.fd, de.Name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_DONT_SYNC, statxWant, &st) == nil {
				de.ID = fileID(&st)
			} else {
				de.ID = detcore.FileID{Dev: d.id.Dev, Ino: binary.LittleEndian.Uint64(b)}
			}
			ents = append(ents, de)
			b = b[reclen:]
		}
	}
}

// errnoOf reports an errno as the guest's answer.
func errnoOf(err error) error {
	var en unix.Errno
	if errors.As(err, &en) {
		return detcore.Errno(en)
	}
	return err
}

// Readlink reads the symbolic link that path names for thread tid,
// relative to its descriptor dirfd (AT_FDCWD: its working directory), as
// readlinkat would: the guest's answer is the target or an Errno (EINVAL:
// not a symbolic link; ENOENT, ENOTDIR). What the tracer cannot see as the
// guest does (anything in procfs, whose links name things as the reader
// sees them) is ErrNotEmulated.
func (t *Tracer) Readlink(tid, dirfd int, path string) (string, error) {
	if path == "" {
		return "", detcore.ErrNotEmulated
	}
	fd, err := t.lookup(tid, dirfd, path, true)
	if err != nil {
		return "", notEmulated(err)
	}
	defer unix.Close(fd)
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	switch {
	case err == unix.ENOENT && !isLink(fd):
		// Of the empty path, what readlink of the file's own path
		// fails with EINVAL: it is no link (fs/stat.c). (A link of
		// procfs fails so too when the tracer is not in the guest's
		// pid namespace.)
		return "", detcore.Errno(unix.EINVAL)
	case err != nil || n == len(buf) || onProcfs(fd):
		return "", detcore.ErrNotEmulated
	}
	return string(buf[:n]), nil
}

// PathExists says whether path names a file for thread tid, relative to
// dirfd, following a final symbolic link unless nofollow: nil if it does,
// the guest's Errno (ENOENT, ENOTDIR) if it does not, or ErrNotEmulated.
func (t *Tracer) PathExists(tid, dirfd int, path string, nofollow bool) error {
	if path == "" {
		return detcore.ErrNotEmulated
	}
	fd, err := t.lookup(tid, dirfd, path, nofollow)
	if err != nil {
		return notEmulated(err)
	}
	unix.Close(fd)
	return nil
}

// isLink says whether fd (O_PATH) is a symbolic link.
func isLink(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// onProcfs says whether fd is a file of procfs.
func onProcfs(fd int) bool {
	var st unix.Statfs_t
	return unix.Fstatfs(fd, &st) != nil || st.Type == unix.PROC_SUPER_MAGIC
}

// PseudoDev implements detcore.LinkTracer: the device of pipefs, sockfs
// or nsfs, which the kernel mounts once for every process (a pipe or
// socket of hermit's own, or its own namespace, is on the same one).
func (t *Tracer) PseudoDev(kind string) (uint64, bool) {
	var st unix.Stat_t
	switch kind {
	case "pipe":
		var p [2]int
		if unix.Pipe2(p[:], unix.O_CLOEXEC) != nil {
			return 0, false
		}
		err := unix.Fstat(p[0], &st)
		unix.Close(p[0])
		unix.Close(p[1])
		if err != nil {
			return 0, false
		}
	case "socket":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return 0, false
		}
		err = unix.Fstat(fd, &st)
		unix.Close(fd)
		if err != nil {
			return 0, false
		}
	case "cgroup", "ipc", "mnt", "net", "pid", "pid_for_children", "time", "time_for_children", "user", "uts":
		if unix.Stat("/proc/self/ns/net", &st) != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return uint64(unix.Major(st.Dev))<<32 | uint64(unix.Minor(st.Dev)), true
}
