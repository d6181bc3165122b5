package ptrace

import (
	"unsafe"

	"github.com/hermitdbg/hermit/detcore"
	"golang.org/x/sys/unix"
)

// SocketName implements detcore.SocketTracer.SocketName: it asks the
// kernel about the tracer's copy of the descriptor, and returns the raw
// struct sockaddr as the guest's own call would get it (x/sys decodes
// addresses and drops fields such as sin6_flowinfo).
func (t *Tracer) SocketName(tid, fd int, peer bool) (int, []byte, error) {
	c, err := t.dupFd(tid, fd)
	if err != nil {
		return 0, nil, err
	}
	defer unix.Close(c)
	proto, err := unix.GetsockoptInt(c, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err != nil {
		return 0, nil, err
	}
	nr := uintptr(unix.SYS_GETSOCKNAME)
	if peer {
		nr = unix.SYS_GETPEERNAME
	}
	var buf [128]byte // struct sockaddr_storage
	n := uint32(len(buf))
	if _, _, e := unix.RawSyscall(nr, uintptr(c), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n))); e != 0 {
		return proto, nil, detcore.Errno(e)
	}
	return proto, append([]byte(nil), buf[:min(int(n), len(buf))]...), nil
}

var _ detcore.SocketTracer = (*Tracer)(nil)
