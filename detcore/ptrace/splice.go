package ptrace

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// This file lets recording and replay see and redo, from outside the
// guest, what splice, tee and sendfile did to the guest's own end when
// the other end is a descriptor replay does not have (a network socket,
// a terminal): the bytes they put into a pipe, or took from one or from a
// file.

var errNotPipe = errors.New("not a pipe")

// PipeTail returns the last n bytes that pipe fd of tid's process holds,
// leaving them there: a tee of the whole pipe into one of hermit's, of
// the same capacity, then read. fd may be the pipe's write end: the pipe
// is opened afresh for reading through /proc.
func (t *Tracer) PipeTail(tid, fd, n int) ([]byte, error) {
	c, err := unix.Open(fmt.Sprintf("/proc/%d/fd/%d", tid, fd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, gone(err)
	}
	defer unix.Close(c)
	size, err := unix.FcntlInt(uintptr(c), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		return nil, errNotPipe
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, err
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	if _, err := unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, size); err != nil {
		return nil, fmt.Errorf("sizing a pipe to peek at the guest's: %w", err)
	}
	held, err := unix.Tee(c, p[1], size, unix.SPLICE_F_NONBLOCK)
	if err != nil && err != unix.EAGAIN {
		return nil, fmt.Errorf("peeking at a guest pipe: %w", err)
	}
	if held < int64(n) {
		return nil, fmt.Errorf("the pipe holds %d bytes, fewer than the %d put there", held, n)
	}
	b := make([]byte, held)
	for got := 0; got < len(b); {
		k, err := unix.Read(p[0], b[got:])
		if err != nil || k == 0 {
			return nil, fmt.Errorf("reading a peeked guest pipe: %v", err)
		}
		got += k
	}
	return b[len(b)-n:], nil
}

// PipeFill writes b into pipe fd of tid's process, all of it.
func (t *Tracer) PipeFill(tid, fd int, b []byte) error {
	c, err := t.dupFd(tid, fd)
	if err != nil {
		return err
	}
	defer unix.Close(c)
	if _, err := unix.FcntlInt(uintptr(c), unix.F_GETPIPE_SZ, 0); err != nil {
		return errNotPipe
	}
	for len(b) > 0 {
		k, err := unix.Write(c, b)
		if err != nil {
			return fmt.Errorf("writing into a guest pipe: %w", err)
		}
		b = b[k:]
	}
	return nil
}

// PipeRewrite takes all the bytes pipe fd of tid's process holds and
// writes them back with one write: the pipe then holds them in whole
// pages from its first, however they came (a splice from a TCP socket
// leaves the socket's pages, whose sizes decide how much a later splice
// into a socket takes). fd may be the pipe's write end. A pipe in packet
// mode (O_DIRECT), whose writes are its packets, is left as it is.
func (t *Tracer) PipeRewrite(tid, fd int) error {
	h, err := t.heldFd(tid, fd)
	if err != nil {
		return err
	}
	if fl, err := unix.FcntlInt(uintptr(h.fd), unix.F_GETFL, 0); err == nil && fl&unix.O_DIRECT != 0 {
		return nil
	}
	r, err := unix.Open(fmt.Sprintf("/proc/%d/fd/%d", tid, fd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return gone(err)
	}
	defer unix.Close(r)
	n, err := unix.IoctlGetInt(r, unix.TIOCINQ) // FIONREAD
	if err != nil {
		return errNotPipe
	}
	b := make([]byte, n)
	for got := 0; got < n; {
		k, err := unix.Read(r, b[got:])
		if err != nil || k == 0 {
			return fmt.Errorf("reading a guest pipe to write it again: %v", err)
		}
		got += k
	}
	return t.PipeFill(tid, fd, b)
}

// FdSkip takes n bytes from descriptor fd of tid's process as a read
// would: a pipe's are read and dropped, a file's offset moves on by n.
func (t *Tracer) FdSkip(tid, fd int, n int64) error {
	c, err := t.dupFd(tid, fd)
	if err != nil {
		return err
	}
	defer unix.Close(c)
	var st unix.Stat_t
	if err := unix.Fstat(c, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFIFO {
		_, err := unix.Seek(c, n, unix.SEEK_CUR)
		return err
	}
	buf := make([]byte, min(n, 1<<16))
	for n > 0 {
		k, err := unix.Read(c, buf[:min(n, int64(len(buf)))])
		if err != nil || k == 0 {
			return fmt.Errorf("taking %d more bytes from a guest pipe: %v", n, err)
		}
		n -= int64(k)
	}
	return nil
}
