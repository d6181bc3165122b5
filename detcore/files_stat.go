package detcore

import (
	"errors"
	"path"
	"strings"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// The stat family. Layouts: struct statx from <linux/stat.h> (the same on
// every architecture) and struct stat from x86-64's <asm/stat.h>.

// Offsets in struct statx.
const (
	stxMask       = 0
	stxBlksize    = 4
	stxNlink      = 16
	stxUID        = 20
	stxGID        = 24
	stxMode       = 28
	stxIno        = 32
	stxSize       = 40
	stxBlocks     = 48
	stxAtime      = 64 // struct statx_timestamp { s64 tv_sec; u32 tv_nsec; s32 pad; }
	stxBtime      = 80
	stxCtime      = 96
	stxMtime      = 112
	stxRdevMajor  = 128
	stxRdevMinor  = 132
	stxDevMajor   = 136
	stxDevMinor   = 140
	statxSize     = 256
	statSize      = 144 // struct stat
	statDev       = 0
	statIno       = 8
	statNlink     = 16
	statMode      = 24
	statUID       = 28
	statGID       = 32
	statRdev      = 40
	statSizeField = 48
	statBlksize   = 56
	statBlocks    = 64
	statAtime     = 72 // __kernel_ulong_t sec, nsec
	statMtime     = 88
	statCtime     = 104
)

// statCall is a decoded stat-family call.
type statCall struct {
	req StatReq
	out uint64
	// statx says the guest gets a struct statx, else a struct stat.
	statx bool
}

// sysStat handles stat, lstat, fstat, newfstatat and statx.
func sysStat(e *Engine, t *thread) {
	ft, ok := fileTracer(e)
	if !ok {
		return
	}
	c, errno, ok := e.decodeStat(t)
	switch {
	case errno != 0:
		t.emulate(-int64(errno))
		return
	case !ok:
		e.statNatively(t, c)
		return
	}
	// Where the file lives decides whether it keeps its real mtime; an
	// absolute path under --real-mtimes says so without asking (two
	// /proc links, some 8 µs).
	abs := strings.HasPrefix(c.req.Path, "/")
	c.req.Where = !abs || !e.realMtime(c.req.Path)
	st, found, err := ft.Statx(t.tid, c.req)
	var en Errno
	switch {
	case err == nil:
		if found == "" && abs {
			found = c.req.Path
		}
		e.files().virtualize(e, &st, c.req.Mask, true, e.realMtime(found))
		if e.t.WriteMem(t.tid, c.out, c.guestBytes(&st)) != nil {
			t.emulate(-abi.EFAULT)
			return
		}
		t.emulate(0)
	case errors.As(err, &en):
		t.emulate(-int64(en))
	case errors.Is(err, ErrNotEmulated):
		e.statNatively(t, c)
	}
}

// decodeStat reads t's stat-family call. It returns an errno the call
// fails with, or ok false when the call must run natively (flags hermit
// does not know, an unreadable path).
func (e *Engine) decodeStat(t *thread) (c statCall, errno Errno, ok bool) {
	r := &t.regs
	var pathAddr uint64
	switch t.nr {
	case abi.SYS_STAT, abi.SYS_LSTAT:
		c = statCall{req: StatReq{Dirfd: atFdcwd}, out: r.Rsi}
		pathAddr = r.Rdi
		if t.nr == abi.SYS_LSTAT {
			c.req.Flags = atSymlinkNofollow
		}
	case abi.SYS_FSTAT:
		c = statCall{req: StatReq{Dirfd: int(int32(r.Rdi)), Flags: atEmptyPath}, out: r.Rsi}
		if c.req.Dirfd < 0 {
			return c, abi.EBADF, false
		}
	case abi.SYS_NEWFSTATAT:
		c = statCall{req: StatReq{Dirfd: int(int32(r.Rdi)), Flags: int(int32(r.R10))}, out: r.Rdx}
		pathAddr = r.Rsi
		if c.req.Flags&^(atSymlinkNofollow|atNoAutomount|atEmptyPath) != 0 {
			return c, 0, false
		}
	case abi.SYS_STATX:
		c = statCall{req: StatReq{Dirfd: int(int32(r.Rdi)), Flags: int(int32(r.Rdx)), Mask: uint32(r.R10)}, out: r.R8, statx: true}
		pathAddr = r.Rsi
		if c.req.Flags&^(atSymlinkNofollow|atNoAutomount|atEmptyPath|atStatxSyncType) != 0 ||
			c.req.Flags&atStatxSyncType == atStatxSyncType || c.req.Mask&statxReserved != 0 {
			return c, 0, false
		}
	}
	if !c.statx {
		c.req.Mask = statxBasicStats
	}
	if t.nr == abi.SYS_FSTAT || pathAddr == 0 && c.req.Flags&atEmptyPath != 0 {
		return c, 0, true
	}
	if pathAddr == 0 {
		return c, 0, false
	}
	path, en := e.readPath(t, pathAddr)
	if en == eNAMETOOLONG {
		return c, en, false
	}
	c.req.Path = path
	return c, 0, en == 0
}

// statNatively lets t's stat-family call run and rewrites its result.
func (e *Engine) statNatively(t *thread, c statCall) {
	t.act = actExitStop
	t.onExit = func(e *Engine, t *thread) {
		if t.regs.Rax != 0 {
			return
		}
		b := make([]byte, statSize)
		if c.statx {
			b = make([]byte, statxSize)
		}
		if e.callOutput(t, c.out, b) != nil {
			return
		}
		var st StatxBuf
		if c.statx {
			copy(st[:], b)
		} else {
			st = statToStatx(b)
		}
		e.files().virtualize(e, &st, c.req.Mask, false, e.realMtime(c.req.Path))
		_ = e.t.WriteMem(t.tid, c.out, c.guestBytes(&st))
	}
}

// guestBytes returns st in the layout the guest asked for.
func (c statCall) guestBytes(st *StatxBuf) []byte {
	if c.statx {
		return st[:]
	}
	return statxToStat(st)
}

// id identifies the file st describes; asked says the caller asked the
// kernel for STATX_BTIME. The birth time tells a reused inode number only
// on a disk's filesystem: one on an anonymous device (major 0: tmpfs, the
// guest's private /tmp, an overlay) hands numbers out afresh, and an
// overlay gives a file it copies up from its lower layer a new birth time
// and the same number (rm -rf of a host directory under the private /tmp
// failed: fts saw its parent's number change).
func (st *StatxBuf) id(asked bool) FileID {
	major := le32(st[stxDevMajor:])
	id := FileID{
		Dev:        uint64(major)<<32 | uint64(le32(st[stxDevMinor:])),
		Ino:        le64(st[stxIno:]),
		BtimeKnown: major != 0 && (asked || le32(st[stxMask:])&statxBtime != 0),
	}
	if le32(st[stxMask:])&statxBtime != 0 {
		id.Btime = getTimestamp(st[stxBtime:])
	}
	return id
}

// virtualize rewrites st, a struct statx, as the guest sees it: virtual
// inode and anonymous device numbers, a constant block size and virtual
// times. guestMask is the mask the guest asked for; btimeAsked says the
// result was made with STATX_BTIME. realMtime keeps the file's own mtime
// unless the guest wrote it (see Engine.realMtime).
func (fs *fileState) virtualize(e *Engine, st *StatxBuf, guestMask uint32, btimeAsked, realMtime bool) {
	v := fs.vino(st.id(btimeAsked))
	putLE64(st[stxIno:], v)
	if le32(st[stxDevMajor:]) == 0 {
		putLE32(st[stxDevMinor:], fs.vdevMinor(le32(st[stxDevMinor:])))
	}
	putLE32(st[stxBlksize:], VirtualBlksize)
	epoch := e.epoch()
	orEpoch := func(ns *int64) int64 {
		if ns == nil {
			return epoch
		}
		return *ns
	}
	tm := fs.times[v]
	putTimestamp(st[stxAtime:], orEpoch(tm.atime))
	putTimestamp(st[stxCtime:], orEpoch(tm.ctime))
	if !realMtime || tm.mtime != nil {
		putTimestamp(st[stxMtime:], orEpoch(tm.mtime))
	}
	mask := le32(st[stxMask:])
	if guestMask&statxBtime == 0 {
		// The tracer asked for the birth time; the guest did not.
		mask &^= statxBtime
		putLE32(st[stxMask:], mask)
	}
	if mask&statxBtime != 0 {
		putTimestamp(st[stxBtime:], orEpoch(tm.btime))
	} else {
		putTimestamp(st[stxBtime:], 0)
	}
}

// DefaultRealMtimes are where installed software lives. Their files'
// mtimes are inputs like their contents, fixed as long as the installation
// is, and caches keyed by them must keep working: CPython checks each .pyc
// against its source's mtime, and with the epoch in their place it would
// recompile every module it imports on every run (3.5x slower), and write
// the .pyc again where it may (a Python installed in a home directory:
// pyenv, conda, uv, a virtual environment), for the next native run to
// write back. An entry that begins with */ is a pattern at any depth.
var DefaultRealMtimes = []string{"/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/", "/opt/", "/etc/", "*/lib/python3*/"}

// realMtime reports whether the file at absolute path keeps its real
// mtime: one under one of Config.RealMtimes, however the guest named it
// (a relative path, a descriptor, a symbolic link: FileTracer.Statx says
// where the file is).
func (e *Engine) realMtime(path string) bool {
	for _, p := range e.cfg.RealMtimes {
		if strings.HasPrefix(p, "*/") {
			if underPattern(p, path) {
				return true
			}
		} else if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// underPattern reports whether absolute path p lies under directories
// that match pattern's names in a row, at any depth: pattern is */ and
// then names that may hold path.Match's wildcards ("*/lib/python3*/"
// holds /root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py).
// Every stat asks, so it walks the strings without making slices.
func underPattern(pattern, p string) bool {
	want := strings.Trim(strings.TrimPrefix(pattern, "*/"), "/")
	rest := strings.TrimPrefix(p, "/")
	for {
		if namesMatch(want, rest) {
			return true
		}
		var ok bool
		if _, rest, ok = strings.Cut(rest, "/"); !ok {
			return false
		}
	}
}

// namesMatch reports whether the first names of rest match want's, one
// name of rest, at least, coming after them.
func namesMatch(want, rest string) bool {
	for {
		w, wantMore, more := strings.Cut(want, "/")
		n, after, ok := strings.Cut(rest, "/")
		if !ok {
			return false
		}
		if m, _ := path.Match(w, n); !m {
			return false
		}
		if !more {
			return true
		}
		want, rest = wantMore, after
	}
}

func getTimestamp(b []byte) int64 { return int64(le64(b))*1e9 + int64(le32(b[8:])) }

func putTimestamp(b []byte, ns int64) {
	sec, nsec := ns/1e9, ns%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	putLE64(b, uint64(sec))
	putLE32(b[8:], uint32(nsec))
	putLE32(b[12:], 0)
}

// encodeDev packs a device number as struct stat does (new_encode_dev).
func encodeDev(major, minor uint32) uint64 {
	return uint64(minor&0xff) | uint64(major)<<8 | uint64(minor&^0xff)<<12
}

func decodeDev(d uint64) (major, minor uint32) {
	return uint32(d>>8&0xfff | d>>32&^0xfff), uint32(d&0xff | d>>12&^0xff)
}

// statxToStat converts a struct statx to a struct stat.
func statxToStat(st *StatxBuf) []byte {
	b := make([]byte, statSize)
	putLE64(b[statDev:], encodeDev(le32(st[stxDevMajor:]), le32(st[stxDevMinor:])))
	putLE64(b[statRdev:], encodeDev(le32(st[stxRdevMajor:]), le32(st[stxRdevMinor:])))
	copy(b[statIno:], st[stxIno:stxIno+8])
	putLE64(b[statNlink:], uint64(le32(st[stxNlink:])))
	putLE32(b[statMode:], uint32(le16(st[stxMode:])))
	copy(b[statUID:], st[stxUID:stxUID+8]) // uid, gid
	copy(b[statSizeField:], st[stxSize:stxSize+8])
	putLE64(b[statBlksize:], uint64(le32(st[stxBlksize:])))
	copy(b[statBlocks:], st[stxBlocks:stxBlocks+8])
	for _, f := range [][2]int{{statAtime, stxAtime}, {statMtime, stxMtime}, {statCtime, stxCtime}} {
		copy(b[f[0]:], st[f[1]:f[1]+8])
		putLE64(b[f[0]+8:], uint64(le32(st[f[1]+8:])))
	}
	return b
}

// statToStatx converts a struct stat to a struct statx with the basic
// fields.
func statToStatx(b []byte) StatxBuf {
	var st StatxBuf
	putLE32(st[stxMask:], statxBasicStats)
	maj, mnr := decodeDev(le64(b[statDev:]))
	putLE32(st[stxDevMajor:], maj)
	putLE32(st[stxDevMinor:], mnr)
	maj, mnr = decodeDev(le64(b[statRdev:]))
	putLE32(st[stxRdevMajor:], maj)
	putLE32(st[stxRdevMinor:], mnr)
	copy(st[stxIno:], b[statIno:statIno+8])
	putLE32(st[stxNlink:], uint32(le64(b[statNlink:])))
	st[stxMode], st[stxMode+1] = b[statMode], b[statMode+1]
	copy(st[stxUID:], b[statUID:statUID+8])
	copy(st[stxSize:], b[statSizeField:statSizeField+8])
	putLE32(st[stxBlksize:], uint32(le64(b[statBlksize:])))
	copy(st[stxBlocks:], b[statBlocks:statBlocks+8])
	for _, f := range [][2]int{{statAtime, stxAtime}, {statMtime, stxMtime}, {statCtime, stxCtime}} {
		copy(st[f[1]:], b[f[0]:f[0]+8])
		putLE32(st[f[1]+8:], uint32(le64(b[f[0]+8:])))
	}
	return st
}
