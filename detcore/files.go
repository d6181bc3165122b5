package detcore

import (
	"errors"
	"math"
	"strconv"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Files. The guest never sees the host's inode numbers, anonymous device
// numbers, block sizes or file times, and it reads directories in a fixed
// order:
//
//   - The stat family (stat, lstat, fstat, newfstatat, statx) is answered
//     by the tracer, which looks the file up from outside as the guest
//     would (FileTracer.Statx); the engine rewrites the result and the
//     syscall is emulated: one stop. When the tracer cannot reproduce the
//     guest's lookup (magic links, /proc/self, a deleted working
//     directory), the call runs natively and its result is rewritten at
//     its exit: two stops.
//   - getdents and getdents64 return the whole directory sorted by name
//     ("." and ".." first), read through a duplicate of the guest's
//     descriptor and served from a listing the engine keeps (files_dir.go).
//   - Inode numbers are handed out in the order the guest first sees the
//     files, from virtualInoBase; anonymous devices (major 0: tmpfs,
//     overlayfs, procfs, pipes), whose numbers depend on mount order,
//     likewise from virtualDevBase. Block devices keep their numbers.
//   - Times: atime, btime and ctime read the run's epoch and mtime too,
//     except for files the guest wrote to (write, writev, pwrite*,
//     ftruncate, truncate, fallocate, copy_file_range, an open with
//     O_TRUNC, an open that created them), whose mtime and ctime read
//     the virtual time of the last write, files whose times the guest set
//     with utimensat, and installed files looked up by an absolute path
//     under /usr, /lib, /etc and the like, which keep their real mtime
//     (Config.RealMtimes: caches keyed by it, like CPython's .pyc, stay
//     valid).
//
// Without a FileTracer these calls run natively.

// FileTracer is implemented by tracers that can look at the guest's files
// from outside. Like Tracer's, its methods are called from the goroutine
// that runs Engine.Run.
type FileTracer interface {
	// Statx looks up the file that thread tid's statx(req.Dirfd, req.Path,
	// req.Flags, req.Mask) would find, resolving paths in tid's root and
	// working directory, and returns its struct statx. The tracer adds
	// STATX_BASIC_STATS and STATX_BTIME to the mask. With req.Where it
	// also returns where the file is: its absolute path as the guest sees
	// it, symbolic links resolved, if the tracer can tell ("" otherwise).
	//
	// Errors: an Errno is the error the guest's own call gets;
	// ErrNotEmulated says the tracer cannot reproduce the guest's lookup;
	// an error wrapping ErrGone says tid is gone.
	Statx(tid int, req StatReq) (StatxBuf, string, error)
	// OpenDir returns a handle on directory descriptor fd of tid's process
	// that shares its open file description, and so its offset.
	//
	// Errors: an Errno is what getdents would return (EBADF);
	// ErrNotEmulated says fd is not a directory; an error wrapping ErrGone
	// says tid is gone.
	OpenDir(tid, fd int) (DirHandle, error)
}

// DirHandle is the tracer's copy of a guest's directory descriptor.
type DirHandle interface {
	// ID identifies the directory.
	ID() FileID
	// Offset returns the descriptor's file offset.
	Offset() (int64, error)
	// SetOffset sets the descriptor's file offset.
	SetOffset(off int64) error
	// ReadAll reads every entry, in the host's order, from the start of
	// the directory. Errors: an Errno is what getdents would return.
	ReadAll() ([]DirEntry, error)
	Close() error
}

// StatReq is a stat-family lookup: the arguments of statx(2).
type StatReq struct {
	Dirfd int // a descriptor or AT_FDCWD
	Path  string
	Flags int // AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH, AT_STATX_*
	Mask  uint32
	// Where asks Statx for the file's path too.
	Where bool
}

// StatxBuf is a struct statx (<linux/stat.h>) in the kernel's layout.
type StatxBuf [statxSize]byte

// FileID identifies a file on the host. An inode number the host reuses
// for a new file comes with a new birth time.
type FileID struct {
	Dev uint64 // major<<32 | minor
	Ino uint64
	// Btime is the birth time in ns; BtimeKnown is false when the caller
	// could not ask for it (the file keeps its current virtual inode).
	Btime      int64
	BtimeKnown bool
}

// DirEntry is one directory entry as the host lists it.
type DirEntry struct {
	Name string
	Type uint8 // DT_*
	ID   FileID
}

// Errno is a kernel error number a FileTracer reports for the guest's call.
type Errno int

func (e Errno) Error() string { return "errno " + strconv.Itoa(int(e)) }

// ErrNotEmulated is returned by a FileTracer that cannot answer a call
// exactly as the kernel would answer the guest; the call then runs natively.
var ErrNotEmulated = errors.New("the tracer cannot emulate this call")

// Constants from <linux/fcntl.h>, <linux/stat.h>, <asm-generic/errno*.h>.
const (
	atFdcwd           = -100
	atSymlinkNofollow = 0x100
	atNoAutomount     = 0x800
	atEmptyPath       = 0x1000
	atStatxSyncType   = 0x6000

	statxType       = 0x1
	statxIno        = 0x100
	statxBasicStats = 0x7ff
	statxBtime      = 0x800
	statxReserved   = 0x80000000

	sIFMT  = 0o170000
	sIFREG = 0o100000
	sIFDIR = 0o040000

	utimeNow  = 1<<30 - 1
	utimeOmit = 1<<30 - 2

	eNOTDIR      = 20
	eNAMETOOLONG = 36
	pathMax      = 4096
)

// Virtual numbering.
const (
	virtualInoBase = 1000
	virtualDevBase = 0x8000 // minors of virtual anonymous devices
	// VirtualBlksize is the st_blksize every file reports.
	VirtualBlksize = 4096
)

// fileTimes are the times the guest gave a file, in ns since 1970; nil
// means the epoch. btime is set for a file the guest made.
type fileTimes struct{ atime, mtime, ctime, btime *int64 }

// born gives virtual inode v, a file the guest has just made, the current
// virtual time as its birth time.
func (e *Engine) born(v uint64) {
	fs := e.files()
	tm := fs.times[v]
	now := e.realNow()
	tm.btime = &now
	fs.times[v] = tm
}

// timeKept, as a time passed to fileTimes.set, leaves that time as it is.
const timeKept = math.MinInt64

// set returns a copy of tm with the times that are not timeKept set.
func (tm fileTimes) set(atime, mtime, ctime int64) fileTimes {
	for _, f := range []struct {
		p  **int64
		ns int64
	}{{&tm.atime, atime}, {&tm.mtime, mtime}, {&tm.ctime, ctime}} {
		if f.ns != timeKept {
			ns := f.ns
			*f.p = &ns
		}
	}
	return tm
}

// inodeGen is the current generation of a host (device, inode) pair.
type inodeGen struct {
	btime int64
	known bool
	vino  uint64
}

type devIno struct{ dev, ino uint64 }

// fileState is an engine's file virtualization state.
type fileState struct {
	inodes  map[devIno]*inodeGen
	nextIno uint64
	devs    map[uint64]uint32 // real anonymous minor → virtual minor
	times   map[uint64]fileTimes
	dirs    map[dirKey]*dirStream
	// pseudoDevs are the devices of pipefs, sockfs and nsfs, by the
	// kind of object procfs's links name (magiclink.go).
	pseudoDevs map[string]uint64
	// dirLimit is the size of dirs at which entries of dead processes go.
	dirLimit int
}

// files returns the engine's file state, made on first use.
func (e *Engine) files() *fileState {
	if e.fstate == nil {
		e.fstate = &fileState{
			inodes:   map[devIno]*inodeGen{},
			nextIno:  virtualInoBase,
			devs:     map[uint64]uint32{},
			times:    map[uint64]fileTimes{},
			dirs:     map[dirKey]*dirStream{},
			dirLimit: 64,
		}
	}
	return e.fstate
}

// vino returns the virtual inode number of id, handing out the next one
// for a file not seen before (or a reused host inode).
func (fs *fileState) vino(id FileID) uint64 {
	k := devIno{id.Dev, id.Ino}
	g := fs.inodes[k]
	switch {
	case g == nil:
	case !id.BtimeKnown:
		return g.vino
	case !g.known:
		g.btime, g.known = id.Btime, true
		return g.vino
	case g.btime == id.Btime:
		return g.vino
	}
	g = &inodeGen{btime: id.Btime, known: id.BtimeKnown, vino: fs.nextIno}
	fs.nextIno++
	fs.inodes[k] = g
	return g.vino
}

// vdevMinor returns the virtual minor of anonymous device 0:minor.
func (fs *fileState) vdevMinor(minor uint32) uint32 {
	v, ok := fs.devs[uint64(minor)]
	if !ok {
		v = virtualDevBase + uint32(len(fs.devs))
		fs.devs[uint64(minor)] = v
	}
	return v
}

// realNow is the guest's CLOCK_REALTIME in ns.
func (e *Engine) realNow() int64 { return e.epoch() + e.clock }

func fileTracer(e *Engine) (FileTracer, bool) {
	ft, ok := e.t.(FileTracer)
	return ft, ok
}

func init() {
	for _, nr := range []int{abi.SYS_STAT, abi.SYS_LSTAT, abi.SYS_FSTAT, abi.SYS_NEWFSTATAT, abi.SYS_STATX} {
		policy[nr] = sysStat
	}
	policy[abi.SYS_GETDENTS] = sysGetdents
	policy[abi.SYS_GETDENTS64] = sysGetdents
	policy[abi.SYS_UTIMENSAT] = sysUtimensat
	policy[abi.SYS_TRUNCATE] = sysTruncate
	// Calls that change a file's contents: the descriptor is argument fdArg.
	for nr, fdArg := range map[int]int{
		abi.SYS_WRITE: 0, abi.SYS_WRITEV: 0, abi.SYS_PWRITE64: 0, abi.SYS_PWRITEV: 0,
		abi.SYS_PWRITEV2: 0, abi.SYS_FTRUNCATE: 0, abi.SYS_FALLOCATE: 0, abi.SYS_COPY_FILE_RANGE: 2,
	} {
		policy[nr] = notingWrite(policy[nr], fdArg)
	}
}

// notingWrite wraps h, the handler of a call that writes to the
// descriptor in argument fdArg (nil: let it run), so that a regular file
// about to be written gets the current virtual time as its mtime.
func notingWrite(h handler, fdArg int) handler {
	return func(e *Engine, t *thread) {
		t.ioKindFd, t.fast = -1, nil
		if h != nil {
			h(e, t)
		}
		if t.state == tsReady && t.act != actEmulate {
			fd := int(int32(t.regs.Arg(fdArg)))
			v, reg := e.noteWrite(t, fd)
			e.fastCandidate(t, fd, v, true, reg)
		}
	}
}

// noteWrite records that t is writing to descriptor fd now; if fd is a
// regular file, it returns its virtual inode.
func (e *Engine) noteWrite(t *thread, fd int) (uint64, bool) {
	if fd < 0 {
		return 0, false
	}
	return e.touchEntry(t, StatReq{Dirfd: fd, Flags: atEmptyPath, Mask: statxType | statxIno}, sIFREG)
}

// openTimes: an open that truncates a regular file (O_TRUNC, for
// writing) or creates one (O_CREAT, of a file that is not there) sets its
// mtime and ctime, as the kernel does: the virtual time at the call's exit.
func (e *Engine) openTimes(t *thread, flags uint64) {
	ft, ok := fileTracer(e)
	trunc := flags&abi.O_TRUNC != 0 && flags&3 != 0
	if !ok || !trunc && flags&abi.O_CREAT == 0 || flags&oPath != 0 {
		return
	}
	dirfd, path, errno := e.openPath(t)
	if errno != 0 {
		return
	}
	there := false
	if flags&abi.O_CREAT != 0 && flags&abi.O_EXCL == 0 {
		_, _, err := ft.Statx(t.tid, StatReq{Dirfd: dirfd, Path: path, Mask: statxType})
		there = err == nil
	}
	if flags&abi.O_CREAT != 0 && !there {
		// A new entry in its directory (files_dirtimes.go).
		e.touchParent(t, dirfd, path)
	}
	if there && !trunc {
		return // O_CREAT changes nothing of a file that is there
	}
	made := flags&abi.O_CREAT != 0 && !there
	t.atExit(func(e *Engine, t *thread) {
		if fd := int(int64(t.regs.Rax)); fd >= 0 {
			if v, ok := e.noteWrite(t, fd); ok && made {
				e.born(v)
			}
		}
	})
}

// sysTruncate gives the file truncate(2) is about to truncate the virtual
// time as its mtime and ctime, as noteWrite does before a write. (At the
// entry: the recorder keeps the call's result at its exit, and replay
// forces it there, with no exit stop of the engine's.)
func sysTruncate(e *Engine, t *thread) {
	if path, errno := e.readPath(t, t.regs.Rdi); errno == 0 {
		e.touchEntry(t, StatReq{Dirfd: abi.AT_FDCWD, Path: path, Mask: statxType | statxIno}, sIFREG)
	}
}

// sysUtimensat lets utimensat run and, if it succeeds, records the times
// it set (UTIME_NOW and NULL times mean the current virtual time).
func sysUtimensat(e *Engine, t *thread) {
	ft, ok := fileTracer(e)
	if !ok {
		return
	}
	r := &t.regs
	now := e.realNow()
	at, mt := now, now
	if r.Rdx != 0 {
		var b [32]byte
		if e.t.ReadMem(t.tid, r.Rdx, b[:]) != nil {
			return
		}
		at, mt = utimeArg(b[0:], now), utimeArg(b[16:], now)
	}
	if at == timeKept && mt == timeKept {
		return
	}
	req := StatReq{Dirfd: int(int32(r.Rdi)), Flags: atEmptyPath}
	if r.Rsi != 0 {
		path, errno := e.readPath(t, r.Rsi)
		if errno != 0 {
			return
		}
		req = StatReq{Dirfd: req.Dirfd, Path: path, Flags: int(r.R10) & (atSymlinkNofollow | atEmptyPath)}
	}
	t.act = actExitStop
	// After the journal: a replay has set the recording's result.
	t.afterJournal = func(e *Engine, t *thread) {
		if t.regs.Rax != 0 {
			return
		}
		st, _, err := ft.Statx(t.tid, req)
		if err != nil {
			return
		}
		fs := e.files()
		v := fs.vino(st.id(true))
		fs.times[v] = fs.times[v].set(at, mt, now)
	}
}

// utimeArg decodes one struct timespec of utimensat: timeKept for UTIME_OMIT.
func utimeArg(b []byte, now int64) int64 {
	switch nsec := int64(le64(b[8:])); nsec {
	case utimeNow:
		return now
	case utimeOmit:
		return timeKept
	default:
		return int64(le64(b))*1e9 + nsec
	}
}

// readPath reads the NUL-terminated path at addr as the kernel does: at
// most PATH_MAX bytes including the NUL (else ENAMETOOLONG), EFAULT when
// unreadable.
func (e *Engine) readPath(t *thread, addr uint64) (string, Errno) {
	var out []byte
	chunk := uint64(256)
	for len(out) < pathMax {
		// Never read across a page that need not be mapped.
		n := min(chunk, 4096-addr%4096, uint64(pathMax-len(out)))
		b := make([]byte, n)
		if e.t.ReadMem(t.tid, addr, b) != nil {
			return "", abi.EFAULT
		}
		for i, c := range b {
			if c == 0 {
				return string(append(out, b[:i]...)), 0
			}
		}
		out = append(out, b...)
		addr += n
		chunk = 4096
	}
	return "", eNAMETOOLONG
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
