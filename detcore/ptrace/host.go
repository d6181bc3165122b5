package ptrace

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/detcore"

	"golang.org/x/sys/unix"
)

// This file gives the recorder what it needs to know about the guest's
// files and descriptors: which inputs come from outside, and the files
// themselves.

// FdClass says where a descriptor's data comes from.
type FdClass int

const (
	// FdInternal: regular files, directories, devices such as /dev/null,
	// and pipes and sockets made by the guest: replay reproduces them.
	FdInternal FdClass = iota
	// FdExternal: network sockets, terminals, and proc or sys files, whose
	// data comes from outside the guest.
	FdExternal
	// FdStdio: the pipe, socket or terminal that hermit itself was given
	// as its standard input, output or error.
	FdStdio
	// FdBad: not an open descriptor.
	FdBad
)

// Socket domains and filesystem magics (<linux/magic.h>).
const (
	afUnix     = 1
	sysfsMagic = 0x62656572
)

// FdFile returns the file open as descriptor fd of thread tid: a regular
// file opened afresh for reading (whatever fd's access mode, and with its
// own offset), anything else as a copy of fd sharing its open file
// description. The caller closes it.
func (t *Tracer) FdFile(tid, fd int) (*os.File, error) {
	c, err := t.dupFd(tid, fd)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if unix.Fstat(c, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		if f, err := os.Open(fmt.Sprintf("/proc/%d/fd/%d", tid, fd)); err == nil {
			unix.Close(c)
			return f, nil
		}
	}
	return os.NewFile(uintptr(c), fmt.Sprintf("guest-fd-%d", fd)), nil
}

type devIno struct{ dev, ino uint64 }

// stdio returns the files hermit gave the guest as fds 0 to 2, which the
// launcher (pid 1 of the guest's namespace) holds for the whole run.
func (t *Tracer) stdio() map[devIno]bool {
	if t.stdioFiles != nil {
		return t.stdioFiles
	}
	t.stdioFiles = map[devIno]bool{}
	for fd := 0; fd < 3; fd++ {
		var st unix.Stat_t
		if unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", t.initPid, fd), &st) == nil {
			t.stdioFiles[devIno{st.Dev, st.Ino}] = true
		}
	}
	return t.stdioFiles
}

// inherited identifies the files the guest inherited from 3 on: the
// launcher's descriptors but its stdio, which it keeps while the guest
// runs. They come from outside as stdio does (a pipe's writer, make's
// jobserver, a file the shell opened: `cmd 3<file`), whatever the guest
// does with them: a pipe whose writer outside had written and gone looked
// internal, and a regular file like any other, and their reads ran
// unrecorded, so the replay, whose stand-ins are /dev/null, read nothing.
func (t *Tracer) inherited() map[devIno]bool {
	if t.inheritedFiles != nil {
		return t.inheritedFiles
	}
	t.inheritedFiles = map[devIno]bool{}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", t.initPid))
	if err != nil {
		return t.inheritedFiles
	}
	for _, e := range ents {
		var st unix.Stat_t
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= 3 && unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", t.initPid, fd), &st) == nil {
			t.inheritedFiles[devIno{st.Dev, st.Ino}] = true
		}
	}
	return t.inheritedFiles
}

// StdioFile reports whether descriptor fd of thread tid is one of the
// files hermit's own stdin, stdout and stderr are, of whatever type (a
// regular file or /dev/null too, which FdClass calls internal).
func (t *Tracer) StdioFile(tid, fd int) bool {
	h, err := t.heldFd(tid, fd)
	return err == nil && h.stErr == nil && t.stdio()[devIno{h.st.Dev, h.st.Ino}]
}

// FdClass classifies descriptor fd of thread tid.
func (t *Tracer) FdClass(tid, fd int) FdClass {
	c, err := t.dupFd(tid, fd)
	if err != nil {
		return FdBad
	}
	defer unix.Close(c)
	var st unix.Stat_t
	if unix.Fstat(c, &st) != nil {
		return FdBad
	}
	return t.classify(c, &st, st.Mode&unix.S_IFMT == unix.S_IFREG && isVirtual(c, &st))
}

// classify is FdClass of the tracer's copy c of a descriptor.
func (t *Tracer) classify(c int, st *unix.Stat_t, virtual bool) FdClass {
	stdio := t.stdio()[devIno{st.Dev, st.Ino}]
	if !stdio && st.Mode&unix.S_IFMT != unix.S_IFDIR && t.inherited()[devIno{st.Dev, st.Ino}] {
		return FdExternal
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if virtual {
			return FdExternal
		}
	case unix.S_IFIFO:
		if stdio {
			return FdStdio
		}
	case unix.S_IFSOCK:
		if stdio {
			return FdStdio
		}
		if d, err := unix.GetsockoptInt(c, unix.SOL_SOCKET, unix.SO_DOMAIN); err == nil && d != afUnix {
			return FdExternal
		}
		if t.peerOutside(c) {
			return FdExternal
		}
	case unix.S_IFCHR:
		if isTerminal(st.Rdev) {
			if stdio {
				return FdStdio
			}
			return FdExternal
		}
	}
	return FdInternal
}

// peerOutside reports whether the Unix socket c is connected to a process
// outside the guest's pid namespace (a host daemon, a client of the
// guest's server).
func (t *Tracer) peerOutside(c int) bool {
	cred, err := unix.GetsockoptUcred(c, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil || cred.Pid <= 0 {
		return false
	}
	if t.pidns == "" {
		ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", t.initPid))
		if err != nil {
			return false
		}
		t.pidns = ns
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", cred.Pid))
	return err == nil && ns != t.pidns
}

// isTerminal reports whether a character device is a terminal: a virtual
// console or serial line (major 4), /dev/tty, /dev/console or /dev/ptmx
// (major 5), or a pseudo-terminal (majors 136 to 143).
func isTerminal(rdev uint64) bool {
	m := unix.Major(rdev)
	return m == 4 || m == 5 || (m >= 136 && m <= 143)
}

// Cwd returns the working directory of thread tid as the guest sees it.
func (t *Tracer) Cwd(tid int) (string, error) {
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", tid))
	return p, gone(err)
}

// OpenGuestPath opens absolute path abs as thread tid would see it (its
// mount namespace and root), following symbolic links.
func (t *Tracer) OpenGuestPath(tid int, abs string) (*os.File, error) {
	return os.Open(fmt.Sprintf("/proc/%d/root%s", tid, abs))
}

// GuestLink returns the target of the symbolic link abs, as thread tid
// sees it.
func (t *Tracer) GuestLink(tid int, abs string) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/%d/root%s", tid, abs))
}

// GuestPathExists reports whether abs names a file as thread tid sees it.
func (t *Tracer) GuestPathExists(tid int, abs string) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d/root%s", tid, abs))
	return err == nil
}

// ReadString reads a NUL-terminated string of at most max bytes at addr
// in thread tid's memory.
func (t *Tracer) ReadString(tid int, addr uint64, max int) (string, error) {
	var out []byte
	for len(out) < max {
		// Never read across a page boundary in one go: the next page may
		// not be mapped.
		n := 4096 - int(addr%4096)
		n = min(n, max-len(out))
		buf := make([]byte, n)
		if err := t.ReadMem(tid, addr, buf); err != nil {
			return "", err
		}
		if i := bytes.IndexByte(buf, 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf...)
		addr += uint64(n)
	}
	return "", fmt.Errorf("string at %#x longer than %d bytes", addr, max)
}

// atExecfn is AT_EXECFN in the auxiliary vector: the path given to execve.
const atExecfn = 31

// ExecPath returns the path thread tid's process passed to execve, as the
// guest wrote it.
func (t *Tracer) ExecPath(tid int) (string, error) {
	auxv, err := readProcFile(fmt.Sprintf("/proc/%d/auxv", tid))
	if err != nil {
		return "", gone(err)
	}
	addr := auxvValue(auxv, atExecfn)
	if addr == 0 {
		return "", fmt.Errorf("no AT_EXECFN for thread %d", tid)
	}
	return t.ReadString(tid, addr, 4096)
}

// Argv returns the arguments of thread tid's process as its kernel keeps
// them (/proc/PID/cmdline): at its exec stop, the new program's argv.
func (t *Tracer) Argv(tid int) ([]string, error) {
	b, err := readProcFile(fmt.Sprintf("/proc/%d/cmdline", tid))
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return []string{}, nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

// StdioKind describes what hermit's descriptor fd (0, 1 or 2) is:
// "null", "file", "pipe", "socket", "tty" or "other".
func StdioKind(f *os.File) string {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return "closed"
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "file"
	case unix.S_IFIFO:
		return "pipe"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR:
		if isTerminal(st.Rdev) {
			return "tty"
		}
		if unix.Major(st.Rdev) == 1 && unix.Minor(st.Rdev) == 3 {
			return "null"
		}
	}
	return "other"
}

// KernelRelease describes the host kernel (uname release and version).
func KernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
}

// WaitsOutside implements detcore.OutsideTracer: a descriptor is outside
// if FdClass says it is external or hermit's stdio; an epoll descriptor
// is if one of the descriptors it watches is.
func (t *Tracer) WaitsOutside(ws []detcore.FdWait) bool {
	for _, w := range ws {
		if t.outside(w.Tid, w.Fd, 0) {
			return true
		}
	}
	return false
}

func (t *Tracer) outside(tid, fd, depth int) bool {
	if c := t.FdClass(tid, fd); c == FdStdio || c == FdExternal && !t.inLocalNet(tid, fd) {
		return true
	}
	if depth > 2 {
		return false
	}
	if link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", tid, fd)); err != nil || link != "anon_inode:[eventpoll]" {
		return false
	}
	for _, m := range epollMembers(tid, fd) {
		if t.outside(tid, m.Fd, depth+1) {
			return true
		}
	}
	return false
}

// inLocalNet reports whether descriptor fd of thread tid is an IP socket
// of a guest with a network namespace of its own (--network local): only
// the guest's own sockets can reach it.
func (t *Tracer) inLocalNet(tid, fd int) bool {
	if !t.localNet {
		return false
	}
	h, err := t.heldFd(tid, fd)
	if err != nil || h.stErr != nil || h.st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return false
	}
	d, err := unix.GetsockoptInt(h.fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	return err == nil && (d == unix.AF_INET || d == unix.AF_INET6)
}

// OnOwnThread runs f on a new goroutine locked to its own OS thread, and
// returns what f returns. Start a run and drive it inside f: ptrace binds
// tracees to the thread that attached them. The thread is never unlocked,
// so it exits with the goroutine, taking its ptrace state with it.
func OnOwnThread[T any](f func() T) T {
	ch := make(chan T, 1)
	go func() {
		runtime.LockOSThread()
		ch <- f()
	}()
	return <-ch
}

// InheritedFds returns the descriptors above 2 this process holds without
// FD_CLOEXEC, in order: a guest started now inherits them (make's
// jobserver pipe is 3 and 4, a socket-activated server's sockets start
// at 3).
func InheritedFds() []int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	var fds []int
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && fl&unix.FD_CLOEXEC == 0 {
			fds = append(fds, fd)
		}
	}
	sort.Ints(fds)
	return fds
}

// StandIn is an inherited descriptor as a replay's guest gets it again: a
// stand-in of the same kind, opened with the same status flags, so that
// F_GETFL and the access it allows are the recording's (its calls are
// answered from the trace).
type StandIn struct {
	Fd int
	// Kind is 'p' (a pipe: a pipe's end), 's' (a socket: one of a
	// socketpair), 'f' (anything else: /dev/null), or 0 (unknown: /dev/null
	// read-write, as recordings before hermit kept the kind have it).
	Kind byte
	// Flags are what F_GETFL said.
	Flags int
}

// String encodes s for the trace header: "3/p/0", or "3" with no kind.
func (s StandIn) String() string {
	if s.Kind == 0 {
		return strconv.Itoa(s.Fd)
	}
	return fmt.Sprintf("%d/%c/%d", s.Fd, s.Kind, s.Flags)
}

// ParseStandIn decodes String's form.
func ParseStandIn(text string) (StandIn, bool) {
	parts := strings.Split(text, "/")
	fd, err := strconv.Atoi(parts[0])
	if err != nil || fd < 0 {
		return StandIn{}, false
	}
	s := StandIn{Fd: fd}
	if len(parts) == 1 {
		return s, true
	}
	flags, err := strconv.Atoi(parts[len(parts)-1])
	if len(parts) != 3 || len(parts[1]) != 1 || !strings.Contains("psf", parts[1]) || err != nil || flags < 0 {
		return StandIn{}, false
	}
	s.Kind, s.Flags = parts[1][0], flags
	return s, true
}

// InheritedStandIns describes InheritedFds for a replay.
func InheritedStandIns() []StandIn {
	var out []StandIn
	for _, fd := range InheritedFds() {
		s := StandIn{Fd: fd, Kind: 'f'}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil {
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFIFO:
				s.Kind = 'p'
			case unix.S_IFSOCK:
				s.Kind = 's'
			}
		}
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			s.Kind = 0
		}
		s.Flags = fl
		out = append(out, s)
	}
	return out
}
