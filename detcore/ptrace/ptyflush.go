package ptrace

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A write to one side of a pty leaves its bytes in the other side's
// buffer, and a kernel worker moves them on to that side's line
// discipline some microseconds later, when it gets a CPU: until then a
// read, poll, epoll_wait or FIONREAD there finds nothing (CPython's
// asyncio pty tests saw their data now at once, now after a wait, as the
// host was loaded). A poll of that side waits for the worker when it
// finds nothing to read (n_tty_poll), so hermit polls it after every
// write: what a write sent to a side with nothing left to read is there
// when the next thread runs, whatever the host's load. Then the writer's
// own side, for what the other side's line discipline echoed back.
//
// The poll is not enough when the worker has begun: a line the worker
// has put in a canonical side is there (the poll does not wait) before
// the worker writes its echo to the other side, and an echo arrives
// there a byte at a time, so the other side's worker may have moved part
// of it. A worker holds the side's termios lock while it receives bytes
// and echoes them, and FIONREAD takes that lock for writing, so a
// FIONREAD after the poll waits for the part in hand; for the parts after
// it, queued for a worker not yet running, the kernel offers no wait, so
// hermit watches the count until it holds still (settlePty). (A side
// that still had bytes to read before the write is ready whatever the
// worker does, and how much a read there takes may still depend on it.)

// PtyFlush implements detcore.PtyTracer.
func (t *Tracer) PtyFlush(tid, fd int, procs []int) {
	h, err := t.heldFd(tid, fd)
	if err != nil || h.stErr != nil || !isPty(&h.st) {
		return
	}
	key, master, ok := ptyKey(h)
	if !ok {
		return
	}
	if c := t.ptyPeer(key, !master, procs); c >= 0 {
		settlePty(c, false)
	}
	// What a write to the master sends back is the slave's echo, a byte
	// at a time (the termios a master reports are its slave's).
	echo := false
	if master {
		tio, err := unix.IoctlGetTermios(h.fd, unix.TCGETS)
		echo = err == nil && tio.Lflag&(unix.ECHO|unix.ECHONL) != 0
	}
	settlePty(h.fd, echo)
}

// settlePty returns once the kernel worker has moved what is in flight
// to pty side c into its line discipline, as far as the kernel lets one
// see (above); pieces says it may come in pieces (an echo), which it
// waits for.
func settlePty(c int, pieces bool) {
	p := []unix.PollFd{{Fd: int32(c), Events: unix.POLLIN}}
	_, _ = unix.Poll(p, 0)
	n, err := unix.IoctlGetInt(c, unix.TIOCINQ)
	if err != nil || n == 0 || !pieces {
		// Nothing there (the poll waited for the worker), or one piece
		// (FIONREAD waited for the one in hand).
		return
	}
	// Bytes there may be the first pieces of an echo: the worker may
	// have moved them before the poll, and not yet been given a CPU for
	// the rest. The count must hold still for a while, measured with
	// this thread's timer slack at 1 µs (50 by default).
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
	still := 0
	for i := 0; i < settleLooks && still < settleStill; i++ {
		_ = unix.Nanosleep(&unix.Timespec{Nsec: settleGap}, nil)
		m, err := unix.IoctlGetInt(c, unix.TIOCINQ)
		switch {
		case err != nil:
			return
		case m == n:
			still++
		default:
			n, still = m, 0
		}
	}
}

// How long settlePty watches an echo's count: it must hold still for
// settleStill looks settleGap ns apart, within settleLooks looks. A
// native loop of 300,000 writes of a line to a master with echo found the
// echo short 15 times with no wait, none with this one.
const (
	settleGap   = 20_000
	settleStill = 2
	settleLooks = 8
)

// ptyKey names the pty that h, a copy of one of its sides, belongs to:
// its slave's device number. master says whether h is the master side.
func ptyKey(h *held) (key uint64, master, ok bool) {
	if !isPtyMaster(&h.st) {
		return h.st.Rdev, false, true
	}
	n, err := unix.IoctlGetUint32(h.fd, unix.TIOCGPTN)
	if err != nil {
		return 0, true, false
	}
	return unix.Mkdev(136+n/256, n%256), true, true
}

// ptyPeer returns hermit's copy of a descriptor, held by one of the
// processes procs (host pids), of the side of pty key that is the
// master if master is set, else the slave; -1 if none holds it (its
// reader is outside the guest). The last one found is tried first.
func (t *Tracer) ptyPeer(key uint64, master bool, procs []int) int {
	match := func(k fdKey) int {
		h, err := t.heldFd(k.tid, k.fd)
		if err != nil || h.stErr != nil || !isPty(&h.st) || isPtyMaster(&h.st) != master {
			return -1
		}
		if hk, _, ok := ptyKey(h); !ok || hk != key {
			return -1
		}
		return h.fd
	}
	if k, ok := t.ptyPeers[key]; ok {
		if c := match(k); c >= 0 {
			return c
		}
		delete(t.ptyPeers, key)
	}
	buf := make([]byte, 64)
	for _, pid := range procs {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n, err := unix.Readlink(dir+e.Name(), buf)
			if err != nil || !ptyPath(string(buf[:n]), master) {
				continue
			}
			fd, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			k := fdKey{pid, fd}
			if c := match(k); c >= 0 {
				if t.ptyPeers == nil {
					t.ptyPeers = map[uint64]fdKey{}
				}
				t.ptyPeers[key] = k
				return c
			}
		}
	}
	return -1
}

// ptyPath reports whether p, where a descriptor's link in /proc points,
// may be a pty's master (if master is set) or slave.
func ptyPath(p string, master bool) bool {
	if master {
		return p == "/dev/ptmx" || p == "/dev/pts/ptmx"
	}
	return strings.HasPrefix(p, "/dev/pts/") && p != "/dev/pts/ptmx"
}
