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
// FIONREAD after the poll waits for the part in hand; FIONREAD again
// until the count holds still waits for the parts after it. (A side that
// still had bytes to read before the write is ready whatever the worker
// does, and how much a read there takes may still depend on it.)

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
		settlePty(c)
	}
	settlePty(h.fd)
}

// settlePty returns once the kernel worker has moved what is in flight
// to pty side c into its line discipline, as far as the kernel lets one
// see (above).
func settlePty(c int) {
	p := []unix.PollFd{{Fd: int32(c), Events: unix.POLLIN}}
	_, _ = unix.Poll(p, 0)
	n, err := unix.IoctlGetInt(c, unix.TIOCINQ)
	for i := 0; err == nil && i < 4; i++ {
		m, err2 := unix.IoctlGetInt(c, unix.TIOCINQ)
		if err2 != nil || m == n {
			return
		}
		n, err = m, err2
	}
}

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
