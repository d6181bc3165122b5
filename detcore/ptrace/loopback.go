package ptrace

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/detcore"
	"golang.org/x/sys/unix"
)

// A TCP connection over loopback between two guest threads. classify calls
// every TCP socket external (its peer may be a host process), which lets
// a write to it wait in the kernel; but a blocking send larger than the
// connection's buffers, to a reader that is a guest thread, then waits for
// ever with the turn held (the reader never runs). loopbackInside tells
// such a connection: its peer's address is a loopback one, and the socket
// at the other end (found in the guest's network namespace's
// /proc/net/tcp) is held by a guest process (a descriptor in the guest's
// /proc). The answer is kept by socket (a connection's ends never change),
// so the look costs once per connection, at its first large write.

// loopbackInside reports whether guest descriptor c (hermit's copy, of
// thread tid) is a connected TCP socket whose peer is a guest's socket.
func (t *Tracer) loopbackInside(tid, c int, st *unix.Stat_t) bool {
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return false
	}
	if v, ok := t.loopback[st.Ino]; ok {
		return v
	}
	typ, err := unix.GetsockoptInt(c, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil || typ != unix.SOCK_STREAM {
		return false
	}
	local, lerr := unix.Getsockname(c)
	peer, perr := unix.Getpeername(c)
	if lerr != nil || perr != nil {
		return false // not connected yet: ask again later
	}
	la, lport, ok1 := inetAddr(local)
	pa, pport, ok2 := inetAddr(peer)
	inside := false
	if ok1 && ok2 && isLoopback(pa) {
		// The peer's socket has the peer's address as its local one and
		// this socket's as its remote one. One not accepted yet has no
		// inode: ask again at the next write.
		ino, ok := tcpInode(tid, pa, pport, la, lport)
		if !ok {
			return false
		}
		inside = guestHolds(tid, ino)
	}
	if t.loopback == nil {
		t.loopback = map[uint64]bool{}
	}
	t.loopback[st.Ino] = inside
	return inside
}

// GuestLoopback implements detcore.LoopbackTracer.GuestLoopback.
func (t *Tracer) GuestLoopback(w detcore.FdWait) bool {
	return t.guestLoopback(w.Tid, w.Fd, 0)
}

func (t *Tracer) guestLoopback(tid, fd, depth int) bool {
	h, err := t.heldFd(tid, fd)
	if err != nil || h.stErr != nil {
		return false
	}
	if t.loopbackInside(tid, h.fd, &h.st) {
		return true
	}
	if depth > 2 || h.st.Mode&unix.S_IFMT == unix.S_IFSOCK {
		return false
	}
	for _, m := range epollMembers(tid, fd) {
		if t.guestLoopback(tid, m.Fd, depth+1) {
			return true
		}
	}
	return false
}

// inetAddr returns an IPv4 or IPv6 socket address as 16 bytes (IPv4
// mapped) and its port.
func inetAddr(sa unix.Sockaddr) ([16]byte, int, bool) {
	var a [16]byte
	switch s := sa.(type) {
	case *unix.SockaddrInet4:
		a[10], a[11] = 0xff, 0xff
		copy(a[12:], s.Addr[:])
		return a, s.Port, true
	case *unix.SockaddrInet6:
		return s.Addr, s.Port, true
	}
	return a, 0, false
}

// isLoopback reports whether a is 127.0.0.0/8 (mapped) or ::1.
func isLoopback(a [16]byte) bool {
	var v4 = [12]byte{10: 0xff, 11: 0xff}
	if [12]byte(a[:12]) == v4 {
		return a[12] == 127
	}
	return a == [16]byte{15: 1}
}

// tcpInode finds, in the network namespace of thread tid, the TCP socket
// with local address la:lport and remote address ra:rport, and returns its
// inode.
func tcpInode(tid int, la [16]byte, lport int, ra [16]byte, rport int) (uint64, bool) {
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", tid, name))
		if err != nil {
			continue
		}
		ino, ok := scanTCP(f, la, lport, ra, rport)
		f.Close()
		if ok {
			return ino, true
		}
	}
	return 0, false
}

// scanTCP reads a /proc/net/tcp or tcp6 table: "sl local rem st ... uid
// timeout inode", addresses as hex words in host order, ":" and the port.
func scanTCP(f *os.File, la [16]byte, lport int, ra [16]byte, rport int) (uint64, bool) {
	sc := bufio.NewScanner(f)
	sc.Scan() // the heading
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 {
			continue
		}
		a, p, ok := procAddr(fs[1])
		if !ok || a != la || p != lport {
			continue
		}
		b, q, ok := procAddr(fs[2])
		if !ok || b != ra || q != rport {
			continue
		}
		ino, err := strconv.ParseUint(fs[9], 10, 64)
		return ino, err == nil && ino != 0
	}
	return 0, false
}

// procAddr parses "0100007F:1F90" (IPv4) or 32 hex digits and a port
// (IPv6): each 32-bit word is printed in host (little-endian) order.
func procAddr(s string) ([16]byte, int, bool) {
	var a [16]byte
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if !ok || err != nil {
		return a, 0, false
	}
	raw, err := hex.DecodeString(hexAddr)
	if err != nil || len(raw) != 4 && len(raw) != 16 {
		return a, 0, false
	}
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	if len(raw) == 4 {
		a[10], a[11] = 0xff, 0xff
		copy(a[12:], raw)
	} else {
		copy(a[:], raw)
	}
	return a, int(port), true
}

// guestHolds reports whether a process of the guest (the pid namespace of
// thread tid, whose /proc its root shows) has a descriptor for socket
// inode ino.
func guestHolds(tid int, ino uint64) bool {
	procDir := fmt.Sprintf("/proc/%d/root/proc", tid)
	ents, err := os.ReadDir(procDir)
	if err != nil {
		return false
	}
	want := []byte(fmt.Sprintf("socket:[%d]", ino))
	buf := make([]byte, 64)
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		dir := procDir + "/" + e.Name() + "/fd"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			n, err := unix.Readlink(dir+"/"+fd.Name(), buf)
			if err == nil && bytes.Equal(buf[:n], want) {
				return true
			}
		}
	}
	return false
}
