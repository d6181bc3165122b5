package recorder

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/trace"
)

// openPath returns the absolute path and flags of an open-family call.
func (r *Recorder) openPath(c *detcore.Call) (string, uint64, bool) {
	switch c.Nr {
	case abi.SYS_OPEN:
		p, ok := r.absPath(c.Tid, -1, c.Args[0])
		return p, c.Args[1], ok
	case abi.SYS_CREAT:
		p, ok := r.absPath(c.Tid, -1, c.Args[0])
		return p, abi.O_CREAT | abi.O_WRONLY | abi.O_TRUNC, ok
	case abi.SYS_OPENAT2:
		// struct open_how starts with the flags.
		var b [8]byte
		if r.host.ReadMem(c.Tid, c.Args[2], b[:]) != nil {
			return "", 0, false
		}
		p, ok := r.absPath(c.Tid, 0, c.Args[1], c.Args[0])
		return p, uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24, ok
	}
	p, ok := r.absPath(c.Tid, 0, c.Args[1], c.Args[0])
	return p, c.Args[2], ok
}

// absPath reads the path at addr and makes it absolute: relative to the
// directory descriptor dirfds[0] when dirfd >= 0 (and it is not
// AT_FDCWD), else to the working directory.
func (r *Recorder) absPath(tid, dirfd int, addr uint64, dirfds ...uint64) (string, bool) {
	p, err := r.host.ReadString(tid, addr, abi.MaxPath)
	if err != nil || p == "" {
		return "", false
	}
	if !path.IsAbs(p) {
		var base string
		if dirfd >= 0 && len(dirfds) > 0 && int32(dirfds[0]) != abi.AT_FDCWD {
			base, err = r.host.FdPath(tid, int(int32(dirfds[0])))
		} else {
			base, err = r.host.Cwd(tid)
		}
		if err != nil || !path.IsAbs(base) {
			return "", false
		}
		p = base + "/" + p
	}
	if strings.Contains(p, "..") {
		// The kernel walks "a/b/../c" through b, which must then exist in
		// the rebuilt root too (ld.so's $ORIGIN/../lib does this).
		for _, d := range dotDotDirs(p) {
			r.capture(tid, d, 0)
		}
	}
	return path.Clean(p), true
}

// dotDotDirs returns the directories an absolute path passes through
// before each ".." component, cleaned.
func dotDotDirs(p string) []string {
	var dirs []string
	cur := "/"
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
		case "..":
			if cur != "/" {
				dirs = append(dirs, cur)
			}
			cur = path.Dir(cur)
		default:
			cur = path.Join(cur, c)
		}
	}
	return dirs
}

// captureFd captures the file the guest just opened as fd under the path
// it used and, if different, its real path.
func (r *Recorder) captureFd(tid, fd int, abs string) {
	r.captureParents(tid, abs)
	f, err := r.host.FdFile(tid, fd)
	file, ok := r.keep(f, err, abs)
	if !ok {
		return
	}
	defer f.Close()
	if real, err := r.host.FdPath(tid, fd); err == nil && real != abs && path.IsAbs(real) && !r.seen[real] {
		r.seen[real] = true
		r.captureParents(tid, real)
		r.emit(real, file)
	}
}

// captureParents captures the directories above absolute path abs not yet
// captured, so that the rebuilt root has their modes and owners: below a
// directory of mode 0700, a program that drops its privileges must be
// refused in replay as it was.
func (r *Recorder) captureParents(tid int, abs string) {
	if abs == "/" {
		return
	}
	var missing []string
	for d := path.Dir(abs); !r.seen[d]; d = path.Dir(d) {
		missing = append(missing, d)
		if d == "/" {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		r.seen[d] = true
		if r.underMade(d) {
			// Made by the guest, or a symlink it made there: replay
			// makes it as the run did (a directory copied in from the
			// start, in place of the guest's symlink, made its symlinkat
			// and mkdirat fail there: Go's os.Root MkdirAll tests).
			continue
		}
		f, err := r.host.OpenGuestPath(tid, d)
		if _, ok := r.keep(f, err, d); ok {
			f.Close()
		}
	}
}

// captureProcLink captures the symbolic link that absolute path abs
// names, if it leads into /proc (/etc/mtab -> /proc/mounts): a lookup
// through it is the guest's own (the tracer cannot follow /proc/self as
// the guest does), in replay too, where the rebuilt root had no such link
// (test -e /etc/mtab failed, and the replay diverged).
func (r *Recorder) captureProcLink(tid int, abs string) {
	abs = path.Clean(abs)
	if r.seen[abs] || r.underMade(abs) {
		return
	}
	target, err := r.host.GuestLink(tid, abs)
	if err != nil {
		return
	}
	to := target
	if !path.IsAbs(to) {
		to = path.Join(path.Dir(abs), to)
	}
	if to != "/proc" && !strings.HasPrefix(to, "/proc/") {
		return
	}
	r.seen[abs] = true
	r.captureParents(tid, abs)
	r.emit(abs, trace.File{Mode: trace.ModeSymlink | 0o777, Target: target})
}

// underMade reports whether absolute path abs lies in a directory the
// guest made with mkdir, with no mount of the guest's between (a bind
// mount of /etc on a directory it made shows /etc's files, which were
// there before the run).
func (r *Recorder) underMade(abs string) bool {
	for d := path.Dir(abs); d != "/" && d != "."; d = path.Dir(d) {
		switch {
		case r.mounted[d] || r.emulated[d]:
			return false
		case r.mkdirs[d]:
			return true
		}
	}
	return false
}

// capture captures the file at absolute path abs, as thread tid sees it.
// A script's interpreter and an ELF program's loader follow (depth bounds
// the chain).
func (r *Recorder) capture(tid int, abs string, depth int) {
	if r.seen[abs] || depth > 4 {
		return
	}
	r.seen[abs] = true
	if r.underMade(abs) {
		// In a directory the guest made: it was not there before the
		// run, and replay makes it as the run did (a copy in the rebuilt
		// root would be there from the start: git init saw its
		// repository already made).
		return
	}
	r.captureParents(tid, abs)
	f, err := r.host.OpenGuestPath(tid, abs)
	file, ok := r.keep(f, err, abs)
	if !ok {
		return
	}
	defer f.Close()
	if file.Mode&trace.ModeType != trace.ModeRegular {
		return
	}
	if interp := interpreter(f); interp != "" {
		r.capture(tid, interp, depth+1)
	}
}

// captureProgram captures the program at absolute path abs that tid has
// just exec'd, and its interpreter or loader, like capture. If abs was
// captured before, the guest may have written it since (a script it made
// and runs, captured empty when it was created): the file's content is
// then what replay writes again, but its interpreter was not known, so it
// is looked for now.
func (r *Recorder) captureProgram(tid int, abs string, depth int) {
	if !r.seen[abs] || depth > 4 {
		r.capture(tid, abs, depth)
		return
	}
	f, err := r.host.OpenGuestPath(tid, abs)
	if err != nil {
		return
	}
	interp := interpreter(f)
	f.Close()
	if interp != "" {
		r.captureProgram(tid, interp, depth+1)
	}
}

// keep stores the file f (opened with error err) and lists it at abs. It
// closes f unless it returns true.
func (r *Recorder) keep(f *os.File, err error, abs string) (trace.File, bool) {
	if err != nil {
		return trace.File{}, false
	}
	file, ok := r.store(f)
	if !ok {
		f.Close()
		return trace.File{}, false
	}
	r.emit(abs, file)
	return file, true
}

func (r *Recorder) emit(abs string, f trace.File) {
	f.Path = abs
	r.append(&trace.Event{Kind: trace.KindFile, File: &f})
}

// LargeFile is the size above which a file's content is not stored: the
// trace records the reads of it instead (like those of an external file),
// and replay gives it its size only (zeros if mapped). A program or a
// library (an ELF file) is stored whatever its size: its code is mapped,
// not read (Chromium's 297 MB executable, a big test binary).
const LargeFile = 256 << 20

// store stores a regular file's content as a blob (once per content) and
// returns its mode; directories have no blob. Other kinds are not kept.
func (r *Recorder) store(f *os.File) (trace.File, bool) {
	fi, err := f.Stat()
	if err != nil {
		return trace.File{}, false
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if st == nil {
		return trace.File{}, false
	}
	file := trace.File{Mode: st.Mode, Uid: st.Uid, Gid: st.Gid, Owned: true}
	switch st.Mode & trace.ModeType {
	case trace.ModeDir:
		return file, true
	case trace.ModeRegular:
	default:
		return trace.File{}, false
	}
	if fileIsVirtual(f) {
		// Replay needs the file to exist; reads of it are recorded.
		return file, true
	}
	if st.Size > LargeFile && !isELF(f) {
		r.large[devIno{st.Dev, st.Ino}] = true
		file.Size = uint64(st.Size)
		return file, true
	}
	var probe [1]byte
	if _, err := f.ReadAt(probe[:], 0); err != nil && err != io.EOF {
		return trace.File{}, false // unreadable: replay will say what it misses
	}
	k := fileKey{st.Dev, st.Ino, st.Size, st.Mtim.Nano()}
	if id, ok := r.blobs[k]; ok {
		file.Blob = id
		return file, true
	}
	id, err := r.w.PutFile(f, r.Cache)
	if err != nil {
		r.fail(err)
		return trace.File{}, false
	}
	r.Bytes.Add(st.Size)
	r.files.Add(1)
	r.blobs[k] = id
	file.Blob = id
	return file, true
}

// isLarge reports whether descriptor fd of tid is a file too large to
// store (see LargeFile), whose reads are recorded.
func (r *Recorder) isLarge(tid, fd int) bool {
	if len(r.large) == 0 {
		return false
	}
	f, err := r.host.FdFile(tid, fd)
	if err != nil {
		return false
	}
	defer f.Close()
	var st syscall.Stat_t
	return syscall.Fstat(int(f.Fd()), &st) == nil && r.large[devIno{st.Dev, st.Ino}]
}

type devIno struct{ dev, ino uint64 }

// fileIsVirtual reports files of proc and sys filesystems, whose content
// is not a file's: they are read afresh on replay or recorded per read.
func fileIsVirtual(f *os.File) bool {
	var fs syscall.Statfs_t
	if syscall.Fstatfs(int(f.Fd()), &fs) != nil {
		return false
	}
	return fs.Type == 0x9fa0 || fs.Type == 0x62656572 // PROC_SUPER_MAGIC, SYSFS_MAGIC
}

// interpreter returns the program that runs f: the #! line's
// interpreter or an ELF executable's PT_INTERP loader.
// isELF reports whether f holds an ELF file (a program, a library).
func isELF(f *os.File) bool {
	var magic [4]byte
	n, _ := f.ReadAt(magic[:], 0)
	return n == len(magic) && string(magic[:]) == elf.ELFMAG
}

func interpreter(f *os.File) string {
	var head [256]byte
	n, _ := f.ReadAt(head[:], 0)
	b := head[:n]
	if bytes.HasPrefix(b, []byte("#!")) {
		line, _, _ := bytes.Cut(b[2:], []byte("\n"))
		fields := strings.Fields(string(line))
		if len(fields) > 0 && path.IsAbs(fields[0]) {
			return fields[0]
		}
		return ""
	}
	return elfInterp(f, b)
}

// elfInterp returns the interpreter (PT_INTERP) of the ELF file f, whose
// first bytes are head, or "". It reads the program headers alone: at
// every exec of a recording, debug/elf's parse of the whole file (its
// sections and their names) cost more than the rest of the exec's
// capture.
func elfInterp(f *os.File, head []byte) string {
	if len(head) < 64 || !bytes.HasPrefix(head, []byte(elf.ELFMAG)) || elf.Data(head[elf.EI_DATA]) != elf.ELFDATA2LSB {
		return ""
	}
	le := binary.LittleEndian
	is64 := elf.Class(head[elf.EI_CLASS]) == elf.ELFCLASS64
	phoff, phentsize, phnum := uint64(le.Uint32(head[28:])), int(le.Uint16(head[42:])), int(le.Uint16(head[44:]))
	if is64 {
		phoff, phentsize, phnum = le.Uint64(head[32:]), int(le.Uint16(head[54:])), int(le.Uint16(head[56:]))
	}
	if !is64 && elf.Class(head[elf.EI_CLASS]) != elf.ELFCLASS32 || is64 && phentsize < 56 || !is64 && phentsize < 32 || phnum > 4096 {
		return ""
	}
	phdrs := make([]byte, phentsize*phnum)
	if _, err := f.ReadAt(phdrs, int64(phoff)); err != nil {
		return ""
	}
	for i := 0; i < phnum; i++ {
		ph := phdrs[i*phentsize:]
		if elf.ProgType(le.Uint32(ph)) != elf.PT_INTERP {
			continue
		}
		var off, size uint64
		if is64 {
			off, size = le.Uint64(ph[8:]), le.Uint64(ph[32:])
		} else {
			off, size = uint64(le.Uint32(ph[4:])), uint64(le.Uint32(ph[16:]))
		}
		if size == 0 || size > 4096 {
			return ""
		}
		name := make([]byte, size)
		if _, err := f.ReadAt(name, int64(off)); err != nil {
			return ""
		}
		return strings.TrimRight(string(name), "\x00")
	}
	return ""
}
