package ptrace

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hermitdbg/hermit/detcore"
)

// openFifo opens the FIFO path names for thread tid without waiting, with
// access mode acc.
func (t *Tracer) openFifo(tid, dirfd int, path string, nofollow bool, acc int) (int, error) {
	p, err := t.lookup(tid, dirfd, path, nofollow)
	if err != nil {
		return -1, err
	}
	defer unix.Close(p)
	return reopenFifo(p, acc)
}

// reopenFifo opens the FIFO descriptor fd of the tracer refers to anew
// (fd may be O_PATH), with access mode acc, without waiting.
func reopenFifo(fd, acc int) (int, error) {
	return unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), acc|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
}

// Fifo implements detcore.FifoTracer.
func (t *Tracer) Fifo(tid, dirfd int, path string, nofollow bool) (detcore.FileID, bool) {
	p, err := t.lookup(tid, dirfd, path, nofollow)
	if err != nil {
		return detcore.FileID{}, false
	}
	defer unix.Close(p)
	var st unix.Stat_t
	if unix.Fstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return detcore.FileID{}, false
	}
	return detcore.FileID{Dev: uint64(unix.Major(st.Dev))<<32 | uint64(unix.Minor(st.Dev)), Ino: st.Ino}, true
}

// FifoHasReader implements detcore.FifoTracer: a writer's open without
// waiting fails with ENXIO when there is no reader. (If the FIFO cannot
// be opened at all, the guest's own open will say why.)
func (t *Tracer) FifoHasReader(tid, dirfd int, path string, nofollow bool) bool {
	fd, err := t.openFifo(tid, dirfd, path, nofollow, unix.O_WRONLY)
	if err == unix.ENXIO {
		return false
	}
	if err == nil {
		unix.Close(fd)
	}
	return true
}

// FifoReader implements detcore.FifoTracer.
func (t *Tracer) FifoReader(tid, dirfd int, path string, nofollow bool) (detcore.FifoReader, error) {
	fd, err := t.openFifo(tid, dirfd, path, nofollow, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	return fifoReader(fd), nil
}

type fifoReader int

// WriterCame implements detcore.FifoReader. poll says POLLIN for data and
// POLLHUP for a writer that came and went since the reader was opened;
// an empty FIFO with a writer answers a read EAGAIN (with none, 0).
func (r fifoReader) WriterCame() bool {
	pfd := []unix.PollFd{{Fd: int32(r), Events: unix.POLLIN}}
	if n, err := unix.Poll(pfd, 0); err == nil && n > 0 && pfd[0].Revents&(unix.POLLIN|unix.POLLHUP) != 0 {
		return true
	}
	var b [1]byte
	_, err := unix.Read(int(r), b[:])
	return err == unix.EAGAIN
}

func (r fifoReader) Close() { unix.Close(int(r)) }

// ClearNonblock implements detcore.FifoTracer: the copy shares the
// guest's open file description, and so its status flags.
func (t *Tracer) ClearNonblock(tid, fd int) error {
	c, err := t.dupFd(tid, fd)
	if err != nil {
		return err
	}
	defer unix.Close(c)
	fl, err := unix.FcntlInt(uintptr(c), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	_, err = unix.FcntlInt(uintptr(c), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	return err
}

// InKernelWait implements detcore.FifoTracer from /proc/TID/stat (state
// S: an interruptible sleep) and /proc/TID/syscall (the call's number).
func (t *Tracer) InKernelWait(tid int) (int, bool) {
	if procState(tid) != 'S' {
		return 0, false
	}
	b, err := readProcFile(fmt.Sprintf("/proc/%d/syscall", tid))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	nr, err := strconv.Atoi(f[0])
	return nr, err == nil && nr >= 0
}

// SetNonblock implements detcore.PartWriteTracer: it sets or clears
// O_NONBLOCK on the open file description of descriptor fd of thread
// tid, which must be a pipe, FIFO, Unix stream socket, pty, or TCP
// socket whose peer is a guest's (loopbackInside).
func (t *Tracer) SetNonblock(tid, fd int, on bool) error {
	h, err := t.heldFd(tid, fd)
	if err != nil {
		return err
	}
	if h.stErr != nil || h.st.Mode&unix.S_IFMT != unix.S_IFIFO && !unixStream(h.fd) && !isPty(&h.st) && !t.loopback[h.st.Ino] {
		return unix.EINVAL
	}
	fl, err := unix.FcntlInt(uintptr(h.fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	if on {
		fl |= unix.O_NONBLOCK
	} else {
		fl &^= unix.O_NONBLOCK
	}
	_, err = unix.FcntlInt(uintptr(h.fd), unix.F_SETFL, fl)
	return err
}

// FdAccessMode implements detcore.AccessModeTracer.
func (t *Tracer) FdAccessMode(tid, fd int) int {
	h, err := t.heldFd(tid, fd)
	if err != nil {
		return -1
	}
	fl, err := unix.FcntlInt(uintptr(h.fd), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_PATH != 0 {
		return -1
	}
	return fl & unix.O_ACCMODE
}
