package ptrace

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"golang.org/x/sys/unix"
)

// pidfdThread is PIDFD_THREAD (O_EXCL): a pidfd for one thread (Linux 6.9).
const pidfdThread = unix.O_EXCL

// dupFd copies descriptor fd of thread tid into the tracer with
// pidfd_getfd. The caller closes the copy.
func (t *Tracer) dupFd(tid, fd int) (int, error) {
	pfd, ok := t.pidfds[tid]
	if !ok {
		var err error
		pfd, err = unix.PidfdOpen(tid, pidfdThread)
		if err != nil {
			// Older kernels: a process pidfd (fine for leaders).
			if pfd, err = unix.PidfdOpen(tid, 0); err != nil {
				return -1, gone(err)
			}
		}
		t.pidfds[tid] = pfd
	}
	return unix.PidfdGetfd(pfd, fd, 0)
}

func (t *Tracer) forget(tid int) {
	delete(t.emus, tid)
	t.clocks.forget(tid)
	if fd, ok := t.pidfds[tid]; ok {
		unix.Close(fd)
		delete(t.pidfds, tid)
	}
}

// held is hermit's copy of a guest descriptor, with its stat, kept for
// the rest of one stop (heldFd).
type held struct {
	fd    int
	st    unix.Stat_t
	stErr error
}

type fdKey struct{ tid, fd int }

// heldFd returns hermit's copy of descriptor fd of thread tid and its
// stat, shared by the questions the engine asks about it at one stop (its
// kind, whether it is ready, the space in a pipe: three copies for each
// write to a pipe otherwise). Every copy is closed before any thread runs
// (dropHeld): hermit must never keep a guest's file open (a pipe's end
// that hermit held would keep its reader from seeing end of file).
func (t *Tracer) heldFd(tid, fd int) (*held, error) {
	k := fdKey{tid, fd}
	if h, ok := t.held[k]; ok {
		return h, nil
	}
	c, err := t.dupFd(tid, fd)
	if err != nil {
		return nil, err
	}
	h := &held{fd: c}
	h.stErr = unix.Fstat(c, &h.st)
	if t.held == nil {
		t.held = map[fdKey]*held{}
	}
	t.held[k] = h
	return h, nil
}

// dropHeld closes the copies heldFd kept.
func (t *Tracer) dropHeld() {
	for k, h := range t.held {
		unix.Close(h.fd)
		delete(t.held, k)
	}
}

// FdKind implements detcore.Tracer.FdKind.
func (t *Tracer) FdKind(tid, fd int) detcore.FdKind {
	k, _ := t.FdKindClass(tid, fd, false)
	return k
}

// FdKindClass returns FdKind's answer and, if class is set, FdClass's,
// for the price of one look at the descriptor.
func (t *Tracer) FdKindClass(tid, fd int, class bool) (detcore.FdKind, FdClass) {
	h, err := t.heldFd(tid, fd)
	if err != nil {
		return detcore.FdClosed, FdBad
	}
	if h.stErr != nil {
		return detcore.FdOther, FdBad
	}
	c, st := h.fd, &h.st
	virtual := st.Mode&unix.S_IFMT == unix.S_IFREG && isVirtual(c, st)
	k := kindOf(c, st, virtual)
	if !class {
		return k, FdBad
	}
	return k, t.classify(c, st, virtual)
}

// isVirtual reports whether regular file c lies in a proc or sys
// filesystem (both on anonymous devices, major 0).
func isVirtual(c int, st *unix.Stat_t) bool {
	var fs unix.Statfs_t
	return unix.Major(st.Dev) == 0 && unix.Fstatfs(c, &fs) == nil && (fs.Type == unix.PROC_SUPER_MAGIC || fs.Type == sysfsMagic)
}

func kindOf(c int, st *unix.Stat_t, virtual bool) detcore.FdKind {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if virtual {
			return detcore.FdProc
		}
		return detcore.FdOther
	case unix.S_IFDIR, unix.S_IFBLK, unix.S_IFLNK:
		return detcore.FdOther
	case unix.S_IFCHR:
		// /dev/random is 1:8, /dev/urandom 1:9; /dev/zero 1:5 and
		// /dev/full 1:7.
		if unix.Major(st.Rdev) == 1 {
			switch unix.Minor(st.Rdev) {
			case 8, 9:
				return detcore.FdRandom
			case 5, 7:
				return detcore.FdZero
			}
		}
	}
	fl, err := unix.FcntlInt(uintptr(c), unix.F_GETFL, 0)
	if err == nil && fl&unix.O_NONBLOCK != 0 {
		return detcore.FdNonblock
	}
	return detcore.FdPollable
}

// PipeSpace implements detcore.Tracer.PipeSpace.
func (t *Tracer) PipeSpace(tid, fd int) int {
	h, err := t.heldFd(tid, fd)
	if err != nil || h.stErr != nil {
		return -1
	}
	switch h.st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return pipeSpace(h.fd)
	case unix.S_IFSOCK:
		return unixStreamSpace(h.fd)
	}
	return -1
}

// unixStreamSpace returns how much a write to a writable Unix stream
// socket takes without blocking: the kernel queues a write in buffers of
// at most half the send buffer (less 64) and 32 KiB plus a page's head,
// and takes the first without waiting while the socket is writable (its
// queued bytes under the send buffer). Other sockets: -1.
func unixStreamSpace(c int) int {
	buf, err := unix.GetsockoptInt(c, unix.SOL_SOCKET, unix.SO_SNDBUF)
	if err != nil || !unixStream(c) {
		return -1
	}
	return max(1, min(buf/2-64, 32<<10))
}

// unixMessages reports whether c is a Unix datagram or seqpacket socket.
func unixMessages(c int) bool {
	typ, ok := unixType(c)
	return ok && (typ == unix.SOCK_DGRAM || typ == unix.SOCK_SEQPACKET)
}

// unixStream reports whether c is a Unix stream socket.
func unixStream(c int) bool {
	typ, ok := unixType(c)
	return ok && typ == unix.SOCK_STREAM
}

// unixType returns the type of c (SOCK_STREAM, ...) if it is a Unix
// socket.
func unixType(c int) (int, bool) {
	dom, err1 := unix.GetsockoptInt(c, unix.SOL_SOCKET, unix.SO_DOMAIN)
	typ, err2 := unix.GetsockoptInt(c, unix.SOL_SOCKET, unix.SO_TYPE)
	return typ, err1 == nil && err2 == nil && dom == unix.AF_UNIX
}

// Poll implements detcore.Tracer.Poll. A descriptor that cannot be copied
// (closed since) counts as ready, so the guest's syscall reports the error.
func (t *Tracer) Poll(ws []detcore.FdWait, timeout time.Duration) ([]bool, error) {
	ready := make([]bool, len(ws))
	pfds := make([]unix.PollFd, 0, len(ws))
	idx := make([]int, 0, len(ws))
	for i, w := range ws {
		h, err := t.heldFd(w.Tid, w.Fd)
		if err != nil {
			ready[i] = true
			continue
		}
		if w.Signals {
			ok, own, members := t.signalPoll(w.Tid, w.Fd, h)
			if ok {
				ready[i] = true
				continue
			}
			if own {
				for _, m := range members {
					if hm, err := t.heldFd(m.Tid, m.Fd); err == nil {
						pfds = append(pfds, unix.PollFd{Fd: int32(hm.fd), Events: m.Events})
						idx = append(idx, i)
					}
				}
				continue
			}
		}
		pfds = append(pfds, unix.PollFd{Fd: int32(h.fd), Events: w.Events})
		idx = append(idx, i)
	}
	for i := range ready {
		if ready[i] {
			return ready, nil
		}
	}
	ms := int(timeout / time.Millisecond)
	if len(pfds) == 0 {
		if ms > 0 {
			time.Sleep(timeout)
		}
		return ready, nil
	}
	for {
		_, err := unix.Poll(pfds, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return ready, err
		}
		break
	}
	for j, p := range pfds {
		if p.Revents != 0 || (ws[idx[j]].Read && fifoWithoutWriter(int(p.Fd))) {
			ready[idx[j]] = true
		}
	}
	return ready, nil
}

// fifoWithoutWriter reports whether fd is an empty named FIFO that no one
// has open for writing: a read of it returns 0 at once, though poll says
// nothing to a reader that opened it after its last writer left. A second
// reader of hermit's tells: its read returns 0 without a writer and
// EAGAIN with one. (An anonymous pipe says POLLHUP.)
func fifoWithoutWriter(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO || st.Dev == pipefsDev() {
		return false
	}
	if n, err := unix.IoctlGetInt(fd, unix.TIOCINQ); err != nil || n > 0 {
		return false
	}
	r, err := reopenFifo(fd, unix.O_RDONLY)
	if err != nil {
		return false
	}
	defer unix.Close(r)
	var b [1]byte
	n, err := unix.Read(r, b[:])
	return n == 0 && err == nil
}

// pipefsDev is the device of anonymous pipes.
var pipefsDev = sync.OnceValue(func() uint64 {
	var p [2]int
	if unix.Pipe2(p[:], unix.O_CLOEXEC) != nil {
		return ^uint64(0)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	var st unix.Stat_t
	if unix.Fstat(p[0], &st) != nil {
		return ^uint64(0)
	}
	return st.Dev
})

// tfdIocSetTicks is TFD_IOC_SET_TICKS, _IOW('T', 0, u64).
const tfdIocSetTicks = 0x40085400

// AddTimerfdTicks implements detcore.Tracer.AddTimerfdTicks: it reads the
// ticks the guest has not consumed yet and sets them back plus n.
func (t *Tracer) AddTimerfdTicks(tid, fd int, n uint64) error {
	c, err := t.dupFd(tid, fd)
	if err != nil {
		return err
	}
	defer unix.Close(c)
	pfd := []unix.PollFd{{Fd: int32(c), Events: unix.POLLIN}}
	if k, _ := unix.Poll(pfd, 0); k > 0 {
		var b [8]byte
		if m, err := unix.Read(c, b[:]); err == nil && m == 8 && n > 0 {
			n += binary.LittleEndian.Uint64(b[:])
		}
	}
	if n == 0 {
		return nil // read away: none left
	}
	return setTicks(c, n)
}

var _ detcore.ProcTracer = (*Tracer)(nil)

// FdPath implements detcore.ProcTracer.FdPath.
func (t *Tracer) FdPath(tid, fd int) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", tid, fd))
}

// ReadFd implements detcore.ProcTracer.ReadFd.
func (t *Tracer) ReadFd(tid, fd int) ([]byte, int64, error) {
	c, err := t.dupFd(tid, fd)
	if err != nil {
		return nil, 0, err
	}
	defer unix.Close(c)
	off, err := unix.Seek(c, 0, io.SeekCurrent)
	if err != nil {
		return nil, 0, err
	}
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Pread(c, buf, int64(len(out)))
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			return out, off, nil
		}
		out = append(out, buf[:n]...)
	}
}

// SeekFd implements detcore.ProcTracer.SeekFd.
func (t *Tracer) SeekFd(tid, fd int, off int64) error {
	c, err := t.dupFd(tid, fd)
	if err != nil {
		return err
	}
	defer unix.Close(c)
	_, err = unix.Seek(c, off, io.SeekStart)
	return err
}

// SockTimeout implements detcore.SockTimeoutTracer: the socket's
// SO_RCVTIMEO, or SO_SNDTIMEO when send.
func (t *Tracer) SockTimeout(tid, fd int, send bool) (time.Duration, bool) {
	c, err := t.dupFd(tid, fd)
	if err != nil {
		return 0, false
	}
	defer unix.Close(c)
	opt := unix.SO_RCVTIMEO
	if send {
		opt = unix.SO_SNDTIMEO
	}
	tv, err := unix.GetsockoptTimeval(c, unix.SOL_SOCKET, opt)
	if err != nil {
		return 0, false
	}
	return time.Duration(tv.Sec)*time.Second + time.Duration(tv.Usec)*time.Microsecond, true
}
