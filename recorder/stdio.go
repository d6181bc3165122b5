package recorder

import (
	"encoding/binary"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/trace"
)

// A write to hermit's own stdout or stderr is made again by replay, on
// replay's stdout, so that the user sees the output. When the recording's
// failed or wrote only part, because the reader had gone (`hermit record
// -- yes | head`: EPIPE, and SIGPIPE, which killed the program), the
// descriptor was non-blocking and full, or a signal came, replay's write
// would not do the same, and replay diverged. Such a result is kept:
// replay gives an error without writing (and the kernel's SIGPIPE with
// EPIPE), or writes the part the recording wrote. A whole write keeps
// nothing, so that the trace does not grow with the output.

// stdioMayFail reports whether a write to descriptor fd of thread tid,
// one of hermit's stdio, can fail or write part for a reason outside the
// guest: a pipe, socket or terminal can; a regular file or /dev/null
// cannot, and its writes keep their one stop.
func (r *Recorder) stdioMayFail(tid, fd int) bool {
	k := r.known
	if !k.hasKind || k.tid != tid || k.fd != fd {
		// (Not asked by the engine first: the host's answer, which
		// only the recording uses, is not journaled.)
		fk, ok := r.host.(interface {
			FdKind(tid, fd int) detcore.FdKind
		})
		if !ok {
			return true
		}
		k.kind = fk.FdKind(tid, fd)
	}
	return k.kind == detcore.FdPollable || k.kind == detcore.FdNonblock
}

// stdioExit fills ev, the result of a write c made to hermit's stdio,
// and reports whether it must be kept: not when it wrote all it was
// given. A part written is kept as ResultForce (replay writes that part:
// player.go).
func (r *Recorder) stdioExit(c *detcore.Call, ev *trace.Event) bool {
	if c.Result < 0 {
		return true // an error, replayed without writing
	}
	total, ok := r.sendLength(c)
	if ok && c.Result >= total {
		return false
	}
	ev.Digest = ResultForce
	if own, _, _, err := r.host.Signals(c.Tid); err == nil && own&(1<<(abi.SIGPIPE-1)) != 0 && c.Result > 0 {
		// The kernel sent SIGPIPE with the part it wrote (the reader
		// went as it wrote): replay's write, to its own stdout, does
		// not, so replay sends it.
		ev.Mem = []trace.MemWrite{{Addr: 0, Data: []byte{abi.SIGPIPE}}}
	}
	return true
}

// sendLength returns how many bytes send call c was given: its count, or
// the sum of its iovecs' lengths.
func (r *Recorder) sendLength(c *detcore.Call) (int64, bool) {
	switch c.Nr {
	case abi.SYS_WRITE, abi.SYS_PWRITE64, abi.SYS_SENDTO:
		return int64(c.Args[2]), true
	case abi.SYS_WRITEV:
		return r.iovLength(c.Tid, c.Args[1], c.Args[2])
	case abi.SYS_SENDMSG:
		var hdr [32]byte // msg_name, msg_namelen, msg_iov, msg_iovlen
		if r.host.ReadMem(c.Tid, c.Args[1], hdr[:]) != nil {
			return 0, false
		}
		return r.iovLength(c.Tid, binary.LittleEndian.Uint64(hdr[16:]), binary.LittleEndian.Uint64(hdr[24:]))
	}
	return 0, false
}

// uioMaxIOV is the most iovecs a call takes (UIO_MAXIOV).
const uioMaxIOV = 1024

// iovLength sums the lengths of the n iovecs at addr in tid's memory.
func (r *Recorder) iovLength(tid int, addr, n uint64) (int64, bool) {
	if n > uioMaxIOV {
		return 0, false
	}
	b := make([]byte, 16*n)
	if r.host.ReadMem(tid, addr, b) != nil {
		return 0, false
	}
	var total int64
	for i := uint64(0); i < n; i++ {
		total += int64(binary.LittleEndian.Uint64(b[16*i+8:]))
	}
	return total, true
}
