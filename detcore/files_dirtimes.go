package detcore

import (
	"path"
	"strings"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Directory times. A directory's mtime and ctime move when an entry is
// made in it or taken out of it: mkdir, rmdir, unlink, rename (both
// directories), link, symlink, mknod, an open that creates a file
// (openTimes; open, openat, openat2 and creat), and the bind of a Unix
// socket to a path. Programs look at them: Python's import system rescans a
// directory on its path only when its mtime has moved (a module written
// after the first import from there is found natively), and a Maildir
// reader re-reads a folder whose mtime moved.
//
// These calls stop (one stop: the parent is looked up at the entry, and
// its times set then, as noteWrite does before a write; a call that then
// fails moves them too, which the kernel would not) and make no
// scheduling point: the schedule is the one without them, as for the
// other opens (sysOpen). A call that makes a file other than a regular
// one (mkdir, mknod, symlink, bind) stops at its exit instead, to give
// the file and its directory the time of its making if it succeeded
// (madeEntry).

// entryArg is where a call names a directory entry: the argument holding
// its directory's descriptor (-1: AT_FDCWD) and the one holding its path.
type entryArg struct{ dirfd, path int }

func init() {
	for nr, args := range map[int][]entryArg{
		abi.SYS_MKDIR: {{-1, 0}}, abi.SYS_MKDIRAT: {{0, 1}},
		abi.SYS_RMDIR: {{-1, 0}}, abi.SYS_UNLINK: {{-1, 0}}, abi.SYS_UNLINKAT: {{0, 1}},
		abi.SYS_RENAME: {{-1, 0}, {-1, 1}}, abi.SYS_RENAMEAT: {{0, 1}, {2, 3}}, abi.SYS_RENAMEAT2: {{0, 1}, {2, 3}},
		abi.SYS_LINK: {{-1, 1}}, abi.SYS_LINKAT: {{2, 3}},
		abi.SYS_SYMLINK: {{-1, 1}}, abi.SYS_SYMLINKAT: {{1, 2}},
		abi.SYS_MKNOD: {{-1, 0}}, abi.SYS_MKNODAT: {{0, 1}},
	} {
		policy[nr] = changesEntries(args)
	}
	policy[abi.SYS_MKDIR] = madeEntry(policy[abi.SYS_MKDIR], -1, 0, dirType)
	policy[abi.SYS_MKDIRAT] = madeEntry(policy[abi.SYS_MKDIRAT], 0, 1, dirType)
	policy[abi.SYS_MKNOD] = madeEntry(policy[abi.SYS_MKNOD], -1, 0, nodeType(1))
	policy[abi.SYS_MKNODAT] = madeEntry(policy[abi.SYS_MKNODAT], 0, 1, nodeType(2))
	policy[abi.SYS_SYMLINK] = madeEntry(policy[abi.SYS_SYMLINK], -1, 1, linkType)
	policy[abi.SYS_SYMLINKAT] = madeEntry(policy[abi.SYS_SYMLINKAT], 1, 2, linkType)
	policy[abi.SYS_CREAT] = sysCreat
	policy[abi.SYS_OPENAT2] = sysOpenat2
}

// sysCreat: creat(path, mode) is open(path, O_CREAT|O_WRONLY|O_TRUNC,
// mode), and glibc's creat makes it. No scheduling point, as for open.
func sysCreat(e *Engine, t *thread) {
	t.policy = false
	if !e.cfg.OldEntryTimes {
		e.openTimes(t, abi.O_CREAT|abi.O_WRONLY|abi.O_TRUNC)
	}
}

// sysOpenat2: openat2(dirfd, path, how, size), whose flags are the first
// field of how (struct open_how). The filter cannot look into memory, so
// every openat2 stops; programs seldom make it.
func sysOpenat2(e *Engine, t *thread) {
	t.policy = false
	var flags [8]byte
	if e.cfg.OldEntryTimes || t.regs.R10 < 8 || e.t.ReadMem(t.tid, t.regs.Rdx, flags[:]) != nil {
		return
	}
	e.openTimes(t, le64(flags[:]))
}

// unixBind: a bind of a Unix socket to a path (not an abstract name)
// makes a socket file, so it and its directory get the virtual time once
// the bind has succeeded. It reports whether the address was a Unix one.
func (e *Engine) unixBind(t *thread) bool {
	const afUnix = 1
	b, ok := e.readName(t, t.regs.Rsi, t.regs.Rdx)
	if !ok || len(b) < 3 || le16(b) != afUnix {
		return false
	}
	p := string(b[2:])
	if i := strings.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	if p != "" && !e.cfg.OldEntryTimes {
		// Its directory at the exit too: a bind to a path in use fails
		// (a server started again), and leaves the directory alone.
		e.timeMade(t, abi.AT_FDCWD, p, sIFSOCK, true)
	}
	return true
}

// timeMade gives the file of type ty that t's call makes at p (relative
// to dirfd), and with parent its directory, the virtual time once the
// call has succeeded: at its exit, after the journal has its result (a
// recording keeps that result, which its replay forces, Journal.Native).
func (e *Engine) timeMade(t *thread, dirfd int, p string, ty uint16, parent bool) {
	if _, ok := fileTracer(e); !ok || t.act != actCont {
		return
	}
	t.act = actExitStop
	t.afterJournal = func(e *Engine, t *thread) {
		if t.regs.Rax != 0 {
			return
		}
		if parent {
			e.touchParent(t, dirfd, p)
		}
		if v, ok := e.touchEntry(t, StatReq{Dirfd: dirfd, Path: p, Flags: atSymlinkNofollow, Mask: statxType | statxIno}, ty); ok {
			e.born(v)
		}
	}
}

// File types of struct statx's mode.
const (
	sIFLNK  = 0o120000
	sIFSOCK = 0o140000
)

// madeEntry replaces h, the changesEntries handler of a call that makes
// a file (mkdir, mknod, symlink), so that the file made and its directory
// get the virtual time of its making once it is there (timeMade). typ is
// the type of file the call makes; 0: none it can make (mknod of a bad
// type fails).
func madeEntry(h handler, dirfdArg, pathArg int, typ func(t *thread) uint16) handler {
	return func(e *Engine, t *thread) {
		ty := typ(t)
		if e.cfg.OldEntryTimes {
			// Journal version 17: the directory at the entry (h), and
			// only a new directory's own time.
			h(e, t)
			if ty != sIFDIR {
				return
			}
		}
		t.policy = false
		dirfd := abi.AT_FDCWD
		if dirfdArg >= 0 {
			dirfd = int(int32(t.regs.Arg(dirfdArg)))
		}
		if p, errno := e.readPath(t, t.regs.Arg(pathArg)); errno == 0 && ty != 0 {
			// The directory at the exit too, since the call stops there
			// anyway: a mkdir of a directory that is there fails (mkdir
			// -p, makedirs(exist_ok=True)) and leaves it alone.
			e.timeMade(t, dirfd, p, ty, !e.cfg.OldEntryTimes)
		}
	}
}

func dirType(*thread) uint16  { return sIFDIR }
func linkType(*thread) uint16 { return sIFLNK }

// nodeType is the type of file mknod's mode (argument arg) makes: a
// regular file for type 0, as the kernel.
func nodeType(arg int) func(t *thread) uint16 {
	return func(t *thread) uint16 {
		switch ty := uint16(t.regs.Arg(arg)) & sIFMT; ty {
		case 0:
			return sIFREG
		case sIFREG, 0o010000, 0o020000, 0o060000, sIFSOCK: // FIFO, CHR, BLK
			return ty
		}
		return 0
	}
}

// changesEntries is the handler of a call that makes or takes out the
// entries args name: their directories get the current virtual time.
func changesEntries(args []entryArg) handler {
	return func(e *Engine, t *thread) {
		t.policy = false
		for _, a := range args {
			dirfd := abi.AT_FDCWD
			if a.dirfd >= 0 {
				dirfd = int(int32(t.regs.Arg(a.dirfd)))
			}
			if p, errno := e.readPath(t, t.regs.Arg(a.path)); errno == 0 {
				e.touchParent(t, dirfd, p)
			}
		}
	}
}

// touchParent gives the directory that holds entry p (relative to dirfd)
// the current virtual time as its mtime and ctime.
func (e *Engine) touchParent(t *thread, dirfd int, p string) {
	if p == "" {
		return
	}
	req := StatReq{Dirfd: dirfd, Path: parentOf(p), Mask: statxType | statxIno}
	switch {
	case req.Path == "" && dirfd == abi.AT_FDCWD:
		req.Path = "."
	case req.Path == "":
		req.Flags = atEmptyPath
	}
	e.touchEntry(t, req, sIFDIR)
}

// touchEntry gives the file of type typ that lookup req finds the current
// virtual time as its mtime and ctime, and returns its virtual inode.
func (e *Engine) touchEntry(t *thread, req StatReq, typ uint16) (uint64, bool) {
	ft, ok := fileTracer(e)
	if !ok {
		return 0, false
	}
	st, _, err := ft.Statx(t.tid, req)
	if err != nil || le16(st[stxMode:])&sIFMT != typ {
		return 0, false
	}
	fs := e.files()
	v := fs.vino(st.id(true))
	now := e.realNow()
	fs.times[v] = fs.times[v].set(timeKept, now, now)
	return v, true
}

// parentOf returns the directory part of entry path p: "" for an entry of
// the directory a descriptor names (or the working directory), "/" for
// one in the root.
func parentOf(p string) string {
	p = strings.TrimRight(p, "/")
	i := strings.LastIndexByte(p, '/')
	switch {
	case i < 0:
		return ""
	case i == 0:
		return "/"
	}
	return path.Clean(p[:i])
}
