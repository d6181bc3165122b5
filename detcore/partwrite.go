package detcore

import (
	"slices"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// A write to a pipe or a Unix stream socket must not block half done in
// the kernel while its reader is parked (one guest thread runs at a
// time). sysWrite sees to it by where the data goes (WriteEnd):
//
//   - WriteInside: a blocking write, writev, sendto or sendmsg (without
//     MSG_DONTWAIT) of more than a page to a pipe, FIFO or Unix stream
//     socket whose ends the guest holds, or to a pty (whose other side
//     the guest may read), is made in parts. Each part runs
//     with O_NONBLOCK and takes what fits; the call is made again for the
//     rest once there is room, until all of it is written, as the
//     kernel's blocking write does. A write to a pty (WriteTerminal)
//     is made in parts however small. The guest sees one call that returns
//     the whole count (or, if a signal comes between the parts, the
//     count written: the kernel's answer then).
//   - WriteOutside: the reader is outside the guest (hermit's own stdout
//     pipe, a socket to a host process), where no schedule parks it: the
//     write may wait in the kernel, as natively.
//   - WriteUnknown (a tracer that cannot tell): a write larger than the
//     space left is cut to that space, a short write.

// WriteEnd says where the data written to a pipe or socket goes.
type WriteEnd int

const (
	WriteUnknown WriteEnd = iota // neither of the below, or not known
	WriteOutside                 // to a reader outside the guest
	WriteInside                  // a pipe, FIFO or Unix stream socket within the guest
	// WriteTerminal: a pty other than hermit's own terminal, whose other
	// side the guest may read. Unlike a pipe's, a pty's room is not a
	// page once it polls writable (the reader's line discipline may be
	// full, and output processing turns a newline into two bytes): a
	// write of any size is made in parts.
	WriteTerminal
	// WriteDatagrams: a Unix datagram or seqpacket socket whose reader
	// the guest holds. A write is one message and is never cut; a
	// sendmmsg is made in parts of whole messages (sendmmsg.go).
	WriteDatagrams
)

// partsOfMessages reports whether a sendmmsg to a descriptor of end w is
// made in parts.
func (w WriteEnd) partsOfMessages() bool { return w == WriteInside || w == WriteDatagrams }

// inside reports whether a write to a descriptor of end w is made in
// parts.
func (w WriteEnd) inside() bool { return w == WriteInside || w == WriteTerminal }

// PartWriteTracer is implemented by tracers that can make a write to a
// pipe or socket non-blocking for one call (partWrite).
type PartWriteTracer interface {
	// WriteEnd tells where data written to descriptor fd of thread tid
	// goes.
	WriteEnd(tid, fd int) WriteEnd
	// SetNonblock sets or clears O_NONBLOCK on the open file description
	// of descriptor fd of thread tid, one that WriteEnd calls WriteInside.
	SetNonblock(tid, fd int, on bool) error
}

// PtyTracer is implemented by tracers that can see the bytes a write put
// into a pty across to its other side.
type PtyTracer interface {
	// PtyFlush returns once the bytes written to descriptor fd of thread
	// tid, a pty's side, are in its other side's line discipline (where
	// a read, poll or FIONREAD finds them), and what that echoed is back,
	// if a process of procs (host pids) holds the other side.
	PtyFlush(tid, fd int, procs []int)
}

// ptyFlush sees the bytes t's write to pty descriptor fd wrote to the
// other side, so that whether a thread that runs next finds them does not
// depend on when the host runs its kernel worker.
func (e *Engine) ptyFlush(t *thread, fd int) {
	pt, ok := e.t.(PtyTracer)
	if !ok {
		return
	}
	procs := make([]int, 0, len(e.procs))
	for pid := range e.procs {
		procs = append(procs, pid)
	}
	slices.Sort(procs)
	pt.PtyFlush(t.tid, fd, procs)
}

// partWrite is a blocking write made in parts.
type partWrite struct {
	orig  abi.Regs // the registers at the call's entry
	total uint64   // the bytes the call writes
	done  uint64   // bytes the parts before wrote
	iovAt uint64   // writev, sendmsg: the address of the iovec array
	iov   []byte   // and its entries as they were
	hdr   []byte   // sendmsg: the struct msghdr as it was (at orig.Rsi)
	moved bool     // the guest's iovec array (or msghdr) is changed
	pty   bool     // to a pty (WriteTerminal): each part is flushed (ptyFlush)
}

// Offsets in struct msghdr (msghdrSize is its size).
const (
	msgIov        = 16
	msgIovlen     = 24
	msgControl    = 32
	msgControllen = 40
)

// pageSize is the size of a pipe's buffers: a writable pipe has one free.
const pageSize = 4096

func sysWrite(e *Engine, t *thread) {
	if t.nr == abi.SYS_SENDTO && t.regs.R10&msgDontwait != 0 || t.nr == abi.SYS_SENDMSG && t.regs.Rdx&msgDontwait != 0 {
		return
	}
	// Once writable, it takes what fits then.
	var end func(*Engine, *thread)
	if t.part != nil {
		end = endPartWrite
	}
	e.whenWritable(t, cutWrite, end)
}

// whenWritable runs part for t's call once its descriptor is writable:
// now, or when its wait in the engine ends. A signal ends that wait with
// end, if t has made parts of the call already (nil: none).
func (e *Engine) whenWritable(t *thread, part, end func(*Engine, *thread)) {
	e.ioWait(t, POLLOUT)
	switch {
	case t.state == tsBlocked:
		t.block.onReady = part
		if end != nil {
			t.block.onSignal = end
		}
		return
	case t.state != tsReady || t.act != actCont:
		return
	}
	part(e, t)
}

// cutWrite makes t's write, to a descriptor that is writable now, a part
// of a blocking write, or cuts it to the space the descriptor has, or
// lets it be, as its WriteEnd says.
func cutWrite(e *Engine, t *thread) {
	fd := int(int32(t.regs.Rdi))
	pw, _ := e.t.(PartWriteTracer)
	if p := t.part; p != nil {
		// The rest of a write made in parts.
		t.part = nil
		if pw != nil {
			if end := pw.WriteEnd(t.tid, fd); end.inside() {
				e.sigAfter = e.sigAfter || end == WriteTerminal
				p.pty = end == WriteTerminal
				e.partStart(t, fd, pw, p)
				return
			}
		}
		// The descriptor is no longer the guest's alone: the rest is
		// written as the kernel writes it, and the call returns the
		// count of all the parts.
		t.act = actExitStop
		t.inPart = true
		t.onExit = func(e *Engine, t *thread) { e.partEnd(t, fd, nil, p) }
		return
	}
	if t.ioKind != FdPollable {
		return
	}
	p, ok := e.newPart(t)
	if !ok {
		return
	}
	big := p.total > pageSize
	if big && pw != nil {
		switch pw.WriteEnd(t.tid, fd) {
		case WriteTerminal:
			e.sigAfter, p.pty = true, true
			e.partStart(t, fd, pw, p)
			return
		case WriteInside:
			e.partStart(t, fd, pw, p)
			return
		case WriteOutside:
			return
		}
	}
	if t.nr == abi.SYS_SENDMSG {
		return
	}
	space := e.t.PipeSpace(t.tid, fd)
	if space < 0 && !big && pw != nil && pw.WriteEnd(t.tid, fd) == WriteTerminal {
		// Not a pipe nor a Unix socket: a pty may take less than a
		// page. (And what is written to a master may be a ^C, which
		// signals the slave's foreground process group: blocked threads
		// look at their signals again.)
		e.sigAfter, p.pty = true, true
		e.partStart(t, fd, pw, p)
		return
	}
	if space <= 0 || p.total <= uint64(space) {
		return
	}
	if p.iov != nil {
		e.cutWritev(t, p.iov, uint64(space))
		return
	}
	count := t.regs.Rdx
	t.regs.Rdx = uint64(space)
	if e.t.SetRegs(t.tid, &t.regs) != nil {
		return
	}
	t.act = actExitStop
	t.onExit = func(e *Engine, t *thread) {
		t.regs.Rdx = count
		_ = e.t.SetRegs(t.tid, &t.regs)
	}
}

// newPart returns t's write, writev, sendto or sendmsg as the first part
// of a write made in parts, with the count of bytes it writes (as the
// kernel, at most MAX_RW_COUNT), or false if the guest's iovec array or
// msghdr cannot be read, or the kernel fails the call.
func (e *Engine) newPart(t *thread) (*partWrite, bool) {
	r := &t.regs
	p := &partWrite{orig: *r}
	switch t.nr {
	case abi.SYS_WRITEV:
		p.iovAt = r.Rsi
		if !e.readIov(t, p, r.Rdx) {
			return nil, false
		}
	case abi.SYS_SENDMSG:
		p.hdr = make([]byte, msghdrSize)
		if e.t.ReadMem(t.tid, r.Rsi, p.hdr) != nil {
			return nil, false
		}
		p.iovAt = le64(p.hdr[msgIov:])
		if !e.readIov(t, p, le64(p.hdr[msgIovlen:])) {
			return nil, false
		}
	default:
		p.total = min(r.Rdx, maxRWCount)
	}
	return p, true
}

// readIov reads p's iovec array of n entries and sums their lengths.
func (e *Engine) readIov(t *thread, p *partWrite, n uint64) bool {
	if n == 0 || n > uioMaxiov {
		return false
	}
	p.iov = make([]byte, 16*n)
	if e.t.ReadMem(t.tid, p.iovAt, p.iov) != nil {
		return false
	}
	for i := 0; i < len(p.iov); i += 16 {
		l := le64(p.iov[i+8:])
		if l > maxRWCount {
			return false // EINVAL, or the rest cut by the kernel
		}
		p.total += l
	}
	p.total = min(p.total, maxRWCount)
	return true
}

// partStart makes t's write to descriptor fd, as its registers are now,
// one part of the blocking write p.
func (e *Engine) partStart(t *thread, fd int, pw PartWriteTracer, p *partWrite) {
	// A pty of the guest's own may send its foreground a terminal's
	// signals (outsidesig.go).
	e.ptyWrites = e.ptyWrites || p.pty
	// Whether it worked is not asked: WriteEnd's answer (a recording's)
	// decided, and a replay's pipe is the recording's.
	_ = pw.SetNonblock(t.tid, fd, true)
	t.act = actExitStop
	t.inPart = true
	t.onExit = func(e *Engine, t *thread) { e.partEnd(t, fd, pw, p) }
}

// partEnd, at the exit of a part of p, makes the call again for the rest,
// or ends the write with the count of all its parts (pw nil: a part made
// blocking, the last).
func (e *Engine) partEnd(t *thread, fd int, pw PartWriteTracer, p *partWrite) {
	t.inPart = false
	if pw != nil {
		_ = pw.SetNonblock(t.tid, fd, false)
	}
	ret := int64(t.regs.Rax)
	if p.pty && ret > 0 {
		e.ptyFlush(t, fd)
	}
	more := ret == -abi.EAGAIN || ret > 0 && p.done+uint64(ret) < p.total
	if more && e.signalEnds(t, &blocker{})&^stopSignals != 0 {
		// A signal came while the part ran: the kernel's write ends
		// there, with what it wrote, and the signal is delivered.
		more = false
		if ret == -abi.EAGAIN && p.done == 0 {
			// The kernel restarts it, or fails it with EINTR, as the
			// signal's handler asks.
			res := -int64(abi.ERESTARTSYS)
			t.regs.Rax = uint64(res)
			_ = e.t.SetRegs(t.tid, &t.regs)
			return
		}
	}
	if pw != nil && more {
		if ret > 0 {
			p.done += uint64(ret)
		}
		if next, ok := e.partRest(t, p); ok && e.rewind(t, next) {
			t.part = p
			return
		}
	}
	if p.done == 0 {
		return // one part: the kernel's answer as it is
	}
	res := int64(p.done)
	if ret > 0 {
		res += ret
	}
	e.partPutBack(t, p)
	t.regs.Rax = uint64(res)
	_ = e.t.SetRegs(t.tid, &t.regs)
}

// partRest returns the registers of the call that writes the rest of p.
// For writev and sendmsg, the first entry of the guest's iovec array not
// written whole is changed to start at what is left of it, and sendmsg's
// msghdr to start at that entry, without the ancillary data (the first
// part sent it).
func (e *Engine) partRest(t *thread, p *partWrite) (abi.Regs, bool) {
	next := p.orig
	if p.iov == nil {
		next.Rsi += p.done
		next.Rdx -= p.done
		return next, true
	}
	skip := p.done
	for i := 0; i < len(p.iov); i += 16 {
		l := le64(p.iov[i+8:])
		if skip >= l {
			skip -= l
			continue
		}
		var ent [16]byte
		putLE64(ent[:], le64(p.iov[i:])+skip)
		putLE64(ent[8:], l-skip)
		p.moved = true
		if e.t.WriteMem(t.tid, p.iovAt+uint64(i), ent[:]) != nil {
			return next, false
		}
		at, n := p.iovAt+uint64(i), uint64(len(p.iov)-i)/16
		if p.hdr == nil {
			next.Rsi, next.Rdx = at, n
			return next, true
		}
		h := append([]byte(nil), p.hdr...)
		putLE64(h[msgIov:], at)
		putLE64(h[msgIovlen:], n)
		putLE64(h[msgControl:], 0)
		putLE64(h[msgControllen:], 0)
		return next, e.t.WriteMem(t.tid, p.orig.Rsi, h) == nil
	}
	return next, false
}

// partPutBack gives t's registers, and the guest's iovec array and
// msghdr, back the values of p's call.
func (e *Engine) partPutBack(t *thread, p *partWrite) {
	if p.moved {
		_ = e.t.WriteMem(t.tid, p.iovAt, p.iov)
		if p.hdr != nil {
			_ = e.t.WriteMem(t.tid, p.orig.Rsi, p.hdr)
		}
		p.moved = false
	}
	t.regs.Rsi, t.regs.Rdx = p.orig.Rsi, p.orig.Rdx
}

// endPartWrite ends t's write, whose rest waits for room, when a signal
// comes: it returns the count written, as the kernel's write does.
func endPartWrite(e *Engine, t *thread) {
	p := t.part
	t.part = nil
	e.partPutBack(t, p)
	t.emulate(int64(p.done))
}

// cutWritev cuts a writev, whose iovec array is iov, to space bytes: the
// array in the guest's memory is shortened for the call (fewer entries,
// the last one cut) and put back at its exit.
func (e *Engine) cutWritev(t *thread, iov []byte, space uint64) {
	r := &t.regs
	addr, n := r.Rsi, r.Rdx
	left, changed := space, false
	cut := append([]byte(nil), iov...)
	for i := uint64(0); i < n; i++ {
		l := le64(cut[16*i+8:])
		if l <= left {
			left -= l
			continue
		}
		// Entry i does not fit: it is cut to what is left, or left out.
		n, changed = i, true
		if left > 0 {
			putLE64(cut[16*i+8:], left)
			n = i + 1
		}
		break
	}
	if !changed || n == 0 {
		return
	}
	if e.t.WriteMem(t.tid, addr, cut[:16*n]) != nil {
		return
	}
	count := r.Rdx
	r.Rdx = n
	if e.t.SetRegs(t.tid, r) != nil {
		_ = e.t.WriteMem(t.tid, addr, iov)
		return
	}
	t.act = actExitStop
	t.onExit = func(e *Engine, t *thread) {
		_ = e.t.WriteMem(t.tid, addr, iov[:16*n])
		t.regs.Rdx = count
		_ = e.t.SetRegs(t.tid, &t.regs)
	}
}
