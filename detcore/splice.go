package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// spliceNonblock is SPLICE_F_NONBLOCK.
const spliceNonblock = 2

// sysSplice handles splice, tee, sendfile and vmsplice, which move data in
// the kernel and block there when a pipe or socket they read is empty or
// one they write is full: while the thread that would end that wait is
// parked, a hang (Python's os.sendfile to a pipe another guest process
// reads, a splice into a pty). The thread waits in the engine until the
// descriptor it reads is readable, then until the one it writes is
// writable, each time from its seccomp stop again (retryWhenReady), and
// the call runs in the kernel once both are: it moves what fits and
// returns, as natively.
func sysSplice(e *Engine, t *thread) {
	r := &t.regs
	var in, out int
	switch t.nr {
	case abi.SYS_SPLICE:
		if r.R9&spliceNonblock != 0 {
			return
		}
		in, out = int(int32(r.Rdi)), int(int32(r.Rdx))
	case abi.SYS_TEE:
		if r.R10&spliceNonblock != 0 {
			return
		}
		in, out = int(int32(r.Rdi)), int(int32(r.Rsi))
	case abi.SYS_SENDFILE:
		in, out = int(int32(r.Rsi)), int(int32(r.Rdi))
	case abi.SYS_VMSPLICE:
		if r.R10&spliceNonblock != 0 {
			return
		}
		// One pipe end: its read end is read into the iovecs.
		in, out = -1, int(int32(r.Rdi))
		if am, ok := e.t.(AccessModeTracer); ok && am.FdAccessMode(t.tid, out) == abi.O_RDONLY {
			in, out = out, -1
		}
	}
	for _, w := range []struct {
		fd     int
		events int16
	}{{in, POLLIN}, {out, POLLOUT}} {
		if w.fd < 0 {
			continue
		}
		e.ioWaitKind(t, w.fd, w.events, e.t.FdKind(t.tid, w.fd))
		if t.state == tsBlocked {
			if t.block != nil && t.block.kind == bkFd {
				e.retryWhenReady(t)
			}
			return
		}
		if t.state != tsReady || t.act != actCont {
			return
		}
	}
	if out >= 0 {
		e.spliceNonblock(t, out)
	}
}

// spliceNonblock makes t's call, which writes descriptor out, take only
// what fits, when out is one whose reader may be parked (a pty: a splice
// into a terminal writes all it has before it returns, waiting for the
// reader): it runs with O_NONBLOCK, and is made again, to wait in hermit,
// if nothing fits.
func (e *Engine) spliceNonblock(t *thread, out int) {
	pw, ok := e.t.(PartWriteTracer)
	if !ok || pw.WriteEnd(t.tid, out) != WriteInside {
		return
	}
	_ = pw.SetNonblock(t.tid, out, true)
	orig := t.regs
	t.act = actExitStop
	t.inPart = true
	t.onExit = func(e *Engine, t *thread) {
		t.inPart = false
		_ = pw.SetNonblock(t.tid, out, false)
		if int64(t.regs.Rax) == -abi.EAGAIN {
			e.rewind(t, orig)
		}
	}
}
