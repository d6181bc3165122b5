package detcore

import (
	"strings"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// MSG_DONTWAIT from <linux/socket.h>.
const msgDontwait = 0x40

// maxRWCount is MAX_RW_COUNT, the most a read or write moves at once.
const maxRWCount = 0x7ffff000

// ioIn handles a call that reads from descriptor arg 0 and may block until
// data arrives: if the descriptor is not ready, the thread waits.
func ioIn(e *Engine, t *thread) { e.ioWait(t, POLLIN) }

// sysRead is ioIn, except that reads of /dev/urandom and /dev/random are
// answered from the thread's seeded generator, and those of /dev/zero and
// /dev/full by hermit too: the kernel cuts a long one short when a signal
// is pending, and hermit's own (the watchdog's look at a thread that has
// been out of sight a while) would make what the guest reads depend on
// the host's timing.
func sysRead(e *Engine, t *thread) {
	t.fast = nil
	fd := int(int32(t.regs.Rdi))
	kind := e.t.FdKind(t.tid, fd)
	if kind == FdProc && e.readProc(t, fd) {
		return
	}
	if kind == FdRandom {
		n := min(t.regs.Rdx, 1<<25-1)
		if !e.fillRandom(t, t.regs.Rsi, n) {
			t.emulate(-abi.EFAULT)
			return
		}
		t.emulate(int64(n))
		return
	}
	if kind == FdZero {
		// As the kernel: up to MAX_RW_COUNT, and as far as the buffer
		// goes.
		if n := e.fillZero(t, t.regs.Rsi, min(t.regs.Rdx, maxRWCount)); n > 0 || t.regs.Rdx == 0 {
			t.emulate(int64(n))
		} else {
			t.emulate(-abi.EFAULT)
		}
		return
	}
	e.ioWaitKind(t, fd, POLLIN, kind)
	if (kind == FdOther || kind == FdPollable) && t.state == tsReady && t.act == actCont {
		// A regular file (or a directory), or a pipe: later reads may
		// go without a stop (fastio.go).
		e.fastCandidate(t, fd, 0, false, false)
	}
}

// ioOut handles a call that writes to descriptor arg 0.
func ioOut(e *Engine, t *thread) { e.ioWait(t, POLLOUT) }

func (e *Engine) ioWait(t *thread, events int16) {
	r := &t.regs
	switch t.nr {
	case abi.SYS_RECVFROM, abi.SYS_SENDTO:
		if r.R10&msgDontwait != 0 {
			return
		}
	case abi.SYS_RECVMSG, abi.SYS_SENDMSG:
		if r.Rdx&msgDontwait != 0 {
			return
		}
	}
	fd := int(int32(r.Rdi))
	e.ioWaitKind(t, fd, events, e.t.FdKind(t.tid, fd))
}

// ioWaitKind blocks t until descriptor fd, of the given kind, is ready for
// events, if it is pollable and not ready now (if it is, readyDecided
// sees that it still is when t runs).
func (e *Engine) ioWaitKind(t *thread, fd int, events int16, kind FdKind) {
	t.ioKind, t.ioKindFd = kind, fd
	if kind != FdPollable {
		return
	}
	w := []FdWait{{Tid: t.tid, Fd: fd, Events: events, Read: events == POLLIN}}
	if ready, err := e.t.Poll(w, 0); err != nil || ready[0] {
		t.readyTurn = e.result.Stats.Turns
		return
	}
	if am, ok := e.t.(AccessModeTracer); ok {
		// A write to a descriptor open only for reading, or a read of
		// one open only for writing (a pipe's other end): the kernel
		// fails it at once (EBADF), and it waits for nothing.
		if m := am.FdAccessMode(t.tid, fd); events == POLLOUT && m == abi.O_RDONLY || events == POLLIN && m == abi.O_WRONLY {
			return
		}
	}
	if pt, ok := e.t.(ProcTracer); ok && events == POLLIN {
		path, err := pt.FdPath(t.tid, fd)
		if tt, ok := e.t.(TtyTracer); ok && err == nil && isTerminal(path) && tt.InBackground(t.tid) {
			// A read from a terminal by a background process: the
			// kernel stops it with SIGTTIN (or fails it): let it.
			return
		}
		if err == nil && path == "anon_inode:[signalfd]" {
			// hermit's poll would ask about its own signals: the read
			// waits for a signal of the guest's (any: one the descriptor
			// does not take is delivered, or ends the read, as natively).
			e.blockOn(t, &blocker{kind: bkSignal, deadline: -1, wakeMask: func(uint64) uint64 { return ^uint64(0) }})
			return
		}
	}
	b := &blocker{kind: bkFd, fds: w, deadline: e.sockDeadline(t, fd, events)}
	if b.deadline >= 0 {
		b.onTimeout = emulateResult(-abi.EAGAIN)
	}
	e.blockOn(t, b)
}

// AccessModeTracer is implemented by tracers that tell how a descriptor
// was opened.
type AccessModeTracer interface {
	// FdAccessMode returns the O_ACCMODE bits of descriptor fd of thread
	// tid (O_RDONLY, O_WRONLY or O_RDWR), or -1.
	FdAccessMode(tid, fd int) int
}

// sysPoll handles poll and ppoll: the thread waits until one of its
// descriptors is ready (then the kernel runs the call) or the timeout
// passes in logical time (then hermit returns 0 as the kernel would).
func sysPoll(e *Engine, t *thread) {
	r := &t.regs
	fdsAddr, nfds := r.Rdi, int(r.Rsi)
	deadline := int64(-1)
	if t.nr == abi.SYS_POLL {
		deadline = e.relDeadline(int64(int32(r.Rdx)))
	} else if r.Rdx != 0 {
		d, ok := e.readDeadline(t, r.Rdx, false, 0)
		if !ok {
			return
		}
		deadline = d
	}
	if deadline == e.clock || nfds > 4096 {
		return
	}
	buf := make([]byte, 8*nfds)
	if e.t.ReadMem(t.tid, fdsAddr, buf) != nil {
		return
	}
	ws := make([]FdWait, 0, nfds)
	for i := 0; i < nfds; i++ {
		fd := int32(uint32(buf[8*i]) | uint32(buf[8*i+1])<<8 | uint32(buf[8*i+2])<<16 | uint32(buf[8*i+3])<<24)
		ev := int16(uint16(buf[8*i+4]) | uint16(buf[8*i+5])<<8)
		if fd >= 0 {
			ws = append(ws, FdWait{Tid: t.tid, Fd: int(fd), Events: ev})
		}
	}
	onTimeout := func(e *Engine, t *thread) {
		// revents are all zero after a timeout.
		for i := 0; i < nfds; i++ {
			buf[8*i+6], buf[8*i+7] = 0, 0
		}
		_ = e.t.WriteMem(t.tid, fdsAddr, buf)
		if t.nr == abi.SYS_PPOLL && t.regs.Rdx != 0 {
			var zero [16]byte
			_ = e.t.WriteMem(t.tid, t.regs.Rdx, zero[:])
		}
		t.emulate(0)
	}
	e.waitFds(t, ws, deadline, onTimeout)
	if t.nr == abi.SYS_PPOLL {
		e.timeLeft(t, r.Rdx, deadline, false)
	}
}

// sysSelect handles select and pselect6 like sysPoll.
func sysSelect(e *Engine, t *thread) {
	r := &t.regs
	nfds := int(int32(r.Rdi))
	if nfds < 0 || nfds > 1024 {
		return
	}
	deadline := int64(-1)
	if r.R8 != 0 {
		var b [16]byte
		if e.t.ReadMem(t.tid, r.R8, b[:]) != nil {
			return
		}
		sub := int64(le64(b[8:])) // timeval: µs; timespec: ns
		if t.nr == abi.SYS_SELECT {
			sub *= 1000
		}
		deadline = e.clock + max(int64(le64(b[0:]))*1e9+sub, 0)
	}
	if deadline == e.clock {
		return
	}
	setBytes := (nfds + 63) / 64 * 8
	sets := [3]uint64{r.Rsi, r.Rdx, r.R10}
	events := [3]int16{POLLIN, POLLOUT, POLLERR}
	var ws []FdWait
	for i, addr := range sets {
		if addr == 0 {
			continue
		}
		b := make([]byte, setBytes)
		if e.t.ReadMem(t.tid, addr, b) != nil {
			return
		}
		for fd := 0; fd < nfds; fd++ {
			if b[fd/8]&(1<<(fd%8)) != 0 {
				ws = append(ws, FdWait{Tid: t.tid, Fd: fd, Events: events[i]})
			}
		}
	}
	onTimeout := func(e *Engine, t *thread) {
		zero := make([]byte, setBytes)
		for _, addr := range sets {
			if addr != 0 {
				_ = e.t.WriteMem(t.tid, addr, zero)
			}
		}
		if t.regs.R8 != 0 {
			var z [16]byte
			_ = e.t.WriteMem(t.tid, t.regs.R8, z[:])
		}
		t.emulate(0)
	}
	e.waitFds(t, ws, deadline, onTimeout)
	e.timeLeft(t, r.R8, deadline, t.nr == abi.SYS_SELECT)
}

// timeLeft makes t's call, which waits until deadline, write the virtual
// time left into its timeout at tv (a timeval if usec, else a timespec)
// when it returns, as the kernel writes the host's (ppoll, pselect6,
// select). Nothing is written without a timeout.
func (e *Engine) timeLeft(t *thread, tv uint64, deadline int64, usec bool) {
	if tv == 0 || deadline < 0 {
		return
	}
	left := func(e *Engine, t *thread) {
		t.atExit(func(e *Engine, t *thread) {
			ns := max(deadline-e.clock, 0)
			b := timespecBytes(ns)
			if usec {
				putLE64(b[8:], uint64(ns%1e9/1e3))
			}
			_ = e.t.WriteMem(t.tid, tv, b)
		})
	}
	switch {
	case t.state == tsBlocked:
		t.block.onReady = left
		if !e.cfg.OldInterruptedTimeLeft {
			// Interrupted by a signal, the call returns the time left
			// too (EINTR): the virtual one, not the host's few
			// microseconds, or a loop that selects again after EINTR
			// with what is left never ends.
			t.block.onInterrupt = left
		}
	case t.act == actCont:
		left(e, t)
	}
}

// sysEpollWait handles the epoll_wait family by polling the epoll
// descriptor itself, which is readable when it has events to report.
func sysEpollWait(e *Engine, t *thread) {
	r := &t.regs
	deadline := int64(-1)
	if t.nr == abi.SYS_EPOLL_PWAIT2 {
		if r.R10 != 0 {
			d, ok := e.readDeadline(t, r.R10, false, 0)
			if !ok {
				return
			}
			deadline = d
		}
	} else {
		deadline = e.relDeadline(int64(int32(r.R10)))
	}
	if deadline == e.clock {
		return
	}
	ws := []FdWait{{Tid: t.tid, Fd: int(int32(r.Rdi)), Events: POLLIN}}
	e.waitFds(t, ws, deadline, emulateResult(0))
}

// waitFds blocks t until one of ws is ready or deadline passes, unless one
// is ready now. A signal ends the wait unless blocked, by the thread's
// mask or by the one the call installs for its duration (ppoll, pselect6,
// epoll_pwait).
//
// A call let run because a descriptor is ready is made again if other
// threads run before it does (readyDecided).
func (e *Engine) waitFds(t *thread, ws []FdWait, deadline int64, onTimeout func(*Engine, *thread)) {
	for i := range ws {
		ws[i].Signals = t.proc.signalfds
	}
	if len(ws) > 0 {
		ready, err := e.t.Poll(ws, 0)
		if err != nil {
			return
		}
		for _, r := range ready {
			if r {
				t.readyTurn = e.result.Stats.Turns
				return
			}
		}
	}
	b := &blocker{kind: bkFd, fds: ws, deadline: deadline, onTimeout: onTimeout}
	if mask, ok := e.callMask(t); ok {
		b.wakeMask = func(uint64) uint64 { return ^mask }
	}
	e.blockOn(t, b)
}

// callMask returns the signal mask a waiting call installs while it waits,
// if it has one.
func (e *Engine) callMask(t *thread) (uint64, bool) {
	addr := maskPointer(e, t)
	if addr == 0 {
		return 0, false
	}
	return e.readU64(t, addr)
}

// maskPointer returns where the signal mask of t's call (ppoll, pselect6,
// epoll_pwait) is, or 0.
func maskPointer(e *Engine, t *thread) uint64 {
	r := &t.regs
	switch t.nr {
	case abi.SYS_PPOLL:
		return r.R10
	case abi.SYS_EPOLL_PWAIT, abi.SYS_EPOLL_PWAIT2:
		return r.R8
	case abi.SYS_PSELECT6:
		if r.R9 != 0 {
			addr, _ := e.readU64(t, r.R9) // struct { sigset_t *ss; size_t len; }
			return addr
		}
	}
	return 0
}

// TtyTracer is implemented by tracers that can tell whether a thread's
// process is in the background of its controlling terminal.
type TtyTracer interface {
	InBackground(tid int) bool
}

// isTerminal reports whether a descriptor's path names a terminal.
func isTerminal(path string) bool {
	return strings.HasPrefix(path, "/dev/pts/") || strings.HasPrefix(path, "/dev/tty") || path == "/dev/console"
}

// exitOnlyAfter are the calls whose exit stops (timeLeft, hideRusage,
// receivesNames) change nothing at their entry: one made again needs
// nothing put back.
var exitOnlyAfter = map[int]bool{
	abi.SYS_POLL: true, abi.SYS_PPOLL: true, abi.SYS_SELECT: true, abi.SYS_PSELECT6: true,
	abi.SYS_EPOLL_WAIT: true, abi.SYS_EPOLL_PWAIT: true, abi.SYS_EPOLL_PWAIT2: true,
	abi.SYS_WAIT4: true, abi.SYS_WAITID: true, abi.SYS_ACCEPT: true, abi.SYS_ACCEPT4: true,
	abi.SYS_RECVFROM: true, abi.SYS_RECVMSG: true, abi.SYS_RECVMMSG: true,
}

// readyDecided makes t's call again, from its seccomp stop, if the engine
// let it run in the kernel because a descriptor was ready, and other
// threads had turns since: one of them may have taken the data or the
// room (a thread of the guest's read it), and the call would then wait
// in the kernel while the thread that would end its wait is parked (a
// hang: CPython's multiprocessing pool polled a pipe the result handler
// had just read). Whether other threads ran is the engine's own state,
// the same in every run, record and replay. A thread a guest's tracer
// traces is left as it is: its tracer saw the call's entry once.
func (e *Engine) readyDecided(t *thread) {
	decided := t.readyTurn
	t.readyTurn = 0
	if decided == 0 || e.result.Stats.Turns <= decided+1 || !t.atSyscall || t.sig != 0 || t.pt != nil {
		return
	}
	switch {
	case t.act == actExitStop && t.onExit != nil && exitOnlyAfter[t.nr]:
		// What its exit does (the time left, the peer's address, an
		// empty rusage) the call made again asks for again.
		t.act, t.onExit = actCont, nil
	case t.act != actCont || t.onExit != nil:
		return
	}
	if !e.remake(t) {
		return
	}
	t.fast = nil
	t.retried = true
	e.result.Stats.ReadyRetries++
}
