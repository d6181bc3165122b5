package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// A blocking sendmmsg to a Unix datagram socket whose reader the guest
// holds blocks in the kernel, half done, once the reader's queue is full,
// while the reader is parked (one guest thread runs at a time): a hang.
// sysSendmmsg makes it in parts instead: each part runs with MSG_DONTWAIT
// and sends the messages that fit; the call is made again for the rest
// once the socket is writable, until all are sent, as the kernel's
// blocking call does. The guest sees one call that returns vlen (or, if a
// signal comes between the parts, the count sent: the kernel's answer
// then).

// mmsgPart is a blocking sendmmsg made in parts.
type mmsgPart struct {
	orig abi.Regs // the registers at the call's entry
	done uint64   // messages the parts before sent
}

func sysSendmmsg(e *Engine, t *thread) {
	if t.regs.R10&msgDontwait != 0 {
		t.mmsg = nil
		return
	}
	var end func(*Engine, *thread)
	if t.mmsg != nil {
		end = endSendmmsg
	}
	e.whenWritable(t, sendmmsgPart, end)
}

// sendmmsgPart makes t's sendmmsg, to a descriptor that is writable now,
// one part, when its reader is inside the guest.
func sendmmsgPart(e *Engine, t *thread) {
	p := t.mmsg
	t.mmsg = nil
	fd := int(int32(t.regs.Rdi))
	pw, ok := e.t.(PartWriteTracer)
	if t.ioKind != FdPollable || !ok || !pw.WriteEnd(t.tid, fd).partsOfMessages() {
		if p != nil {
			// No longer the guest's alone: the rest as the kernel sends
			// it, and the call returns the count of all the parts.
			t.act = actExitStop
			t.onExit = func(e *Engine, t *thread) { e.sendmmsgEnd(t, p, false) }
		}
		return
	}
	if p == nil {
		p = &mmsgPart{orig: t.regs}
	}
	t.regs.R10 |= msgDontwait
	if e.t.SetRegs(t.tid, &t.regs) != nil {
		return
	}
	t.act = actExitStop
	t.inPart = true
	t.onExit = func(e *Engine, t *thread) { e.sendmmsgEnd(t, p, true) }
}

// sendmmsgEnd, at the exit of a part of p, makes the call again for the
// messages left, or ends it with the count of all its parts (more false:
// the last part, sent as the kernel sends it).
func (e *Engine) sendmmsgEnd(t *thread, p *mmsgPart, more bool) {
	t.inPart = false
	ret := int64(t.regs.Rax)
	sent := p.done
	if ret > 0 {
		sent += uint64(ret)
	}
	vlen := min(p.orig.Rdx, uioMaxiov)
	if more && (ret == -abi.EAGAIN || ret > 0 && sent < vlen) && e.signalEnds(t, &blocker{})&^stopSignals == 0 {
		next := p.orig
		next.Rsi += sent * mmsghdrSize
		next.Rdx -= sent
		if e.rewind(t, next) {
			p.done = sent
			t.mmsg = p
			return
		}
	}
	// The guest's registers as they were, and the whole count.
	t.regs.Rsi, t.regs.Rdx, t.regs.R10 = p.orig.Rsi, p.orig.Rdx, p.orig.R10
	if sent > 0 {
		t.regs.Rax = sent
	}
	_ = e.t.SetRegs(t.tid, &t.regs)
}

// endSendmmsg ends t's sendmmsg, whose rest waits for room, when a signal
// comes: it returns the count sent, as the kernel's does.
func endSendmmsg(e *Engine, t *thread) {
	p := t.mmsg
	t.mmsg = nil
	t.regs.Rsi, t.regs.Rdx, t.regs.R10 = p.orig.Rsi, p.orig.Rdx, p.orig.R10
	t.emulate(int64(p.done))
}
