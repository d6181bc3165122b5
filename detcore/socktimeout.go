package detcore

import (
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// SockTimeoutTracer is implemented by tracers that can tell a socket's
// SO_RCVTIMEO and SO_SNDTIMEO.
type SockTimeoutTracer interface {
	// SockTimeout returns the receive (send: the send) timeout of
	// descriptor fd of tid's process, 0 for none; ok is false when fd
	// is no socket.
	SockTimeout(tid, fd int, send bool) (d time.Duration, ok bool)
}

// sockTimed are the calls a socket's SO_RCVTIMEO (receiving, accepting)
// or SO_SNDTIMEO (sending) bounds: blocked longer, they fail with EAGAIN.
var sockTimed = map[int]bool{
	abi.SYS_RECVFROM: true, abi.SYS_RECVMSG: true, abi.SYS_RECVMMSG: true,
	abi.SYS_SENDTO: true, abi.SYS_SENDMSG: true, abi.SYS_SENDMMSG: true,
	abi.SYS_ACCEPT: true, abi.SYS_ACCEPT4: true,
}

// sockDeadline returns the virtual time at which t's call on socket fd,
// about to wait, fails with EAGAIN (its SO_RCVTIMEO or SO_SNDTIMEO), or
// -1: without it the wait had no end, and a guest that waited with a
// timeout on a peer that never wrote was called deadlocked.
func (e *Engine) sockDeadline(t *thread, fd int, events int16) int64 {
	st, ok := e.t.(SockTimeoutTracer)
	if !ok || e.cfg.OldSockTimeout || !sockTimed[t.nr] {
		return -1
	}
	d, ok := st.SockTimeout(t.tid, fd, events == POLLOUT)
	if !ok || d <= 0 {
		return -1
	}
	return e.clock + int64(d)
}
