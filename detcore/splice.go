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
		in, out = int(int32(r.Rdi)), int(int32(r.Rdx))
		if r.R9&spliceNonblock != 0 {
			e.spliceToTerminal(t, in, out)
			return
		}
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
	if !e.spliceWait(t, in, POLLIN) || !e.spliceWait(t, out, POLLOUT) || out < 0 {
		return
	}
	if pw, ok := e.t.(PartWriteTracer); ok && pw.WriteEnd(t.tid, out).inside() {
		e.spliceNonblock(t, out, pw)
	}
}

// spliceWait waits until t's descriptor fd (none if negative) is ready
// for events, and reports whether the call may go on now.
func (e *Engine) spliceWait(t *thread, fd int, events int16) bool {
	if fd < 0 {
		return true
	}
	e.ioWaitKind(t, fd, events, e.t.FdKind(t.tid, fd))
	if t.state == tsBlocked {
		if t.block != nil && t.block.kind == bkFd {
			e.retryWhenReady(t)
		}
		return false
	}
	return t.state == tsReady && t.act == actCont
}

// spliceToTerminal handles a splice with SPLICE_F_NONBLOCK into a pty:
// the flag makes only its pipe end non-blocking, and its write into the
// terminal waits for the reader (Go's os.File.ReadFrom into a tty). If
// the pipe it reads has data, it waits in hermit until the pty is
// writable and then takes only what fits; otherwise the kernel fails it
// at once (EAGAIN), as natively.
func (e *Engine) spliceToTerminal(t *thread, in, out int) {
	pw, ok := e.t.(PartWriteTracer)
	if !ok || e.t.FdKind(t.tid, out) != FdPollable || pw.WriteEnd(t.tid, out) != WriteTerminal {
		return
	}
	if ready, err := e.t.Poll([]FdWait{{Tid: t.tid, Fd: in, Events: POLLIN, Read: true}}, 0); err != nil || !ready[0] {
		return
	}
	if e.spliceWait(t, out, POLLOUT) {
		e.spliceNonblock(t, out, pw)
	}
}

// spliceNonblock makes t's call, which writes descriptor out, take only
// what fits, when out is one whose reader may be parked (a pty: a splice
// into a terminal writes all it has before it returns, waiting for the
// reader): it runs with O_NONBLOCK, and is made again, to wait in hermit,
// if nothing fits.
func (e *Engine) spliceNonblock(t *thread, out int, pw PartWriteTracer) {
	if t.ioKind != FdPollable || t.ioKindFd != out {
		return // O_NONBLOCK already: the guest's own EAGAIN
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
