package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// The waits of a tracer in the guest (guestptrace.go). The kernel knows
// nothing of the emulated ptrace-stops, so the engine answers a wait
// that one of them ends, and keeps a tracer waiting for a tracee that is
// not its own child in the engine. Waits for the tracer's own children
// go on as sysWait handles them, woken also by its tracees' stops.

// traceeStop returns, of p's tracees that sel names, the first (in
// creation order) in a ptrace-stop p has not been told of, or else the
// first that exited, and whether sel names any tracee at all.
func (e *Engine) traceeStop(p *process, sel childSel) (stopped *thread, any bool) {
	for _, o := range e.ordered() {
		if o.pt == nil || o.pt.tracer != p || !e.namesThread(o, sel) {
			continue
		}
		any = true
		if o.state == tsTraced && !o.pt.reported {
			return o, true
		}
	}
	// Exits in creation order: the kernel reports the threads of a group
	// that exits together in an order of its own.
	for _, o := range p.traceExits {
		if e.namesThread(o, sel) && (stopped == nil || o.seq < stopped.seq) {
			stopped = o
		}
	}
	return stopped, any || stopped != nil
}

// traceeGone keeps the exit of t, a tracee, for its tracer's wait, unless
// the kernel reports it there (the tracer's own child).
func (e *Engine) traceeGone(t *thread, st Stop) {
	pt := t.pt
	if pt == nil || (t.proc.parent == pt.tracer && t.vtid == t.proc.vpid) {
		return
	}
	pt.status = int32(st.Code << 8)
	if st.Kind == StopKilled {
		pt.status = int32(st.Sig)
	}
	pt.reported = false
	pt.tracer.traceExits = append(pt.tracer.traceExits, t)
	e.childEpoch++
}

// traces reports whether p traces any guest thread.
func (e *Engine) traces(p *process) bool {
	if len(p.traceExits) > 0 {
		return true
	}
	for _, o := range e.ordered() {
		if o.pt != nil && o.pt.tracer == p {
			return true
		}
	}
	return false
}

func (e *Engine) namesThread(o *thread, sel childSel) bool {
	if sel.vpid > 0 {
		return o.vtid == sel.vpid
	}
	return e.matches(o.proc, sel)
}

// hasChild reports whether p has a child, living or not yet reaped, that
// sel names.
func (e *Engine) hasChild(p *process, sel childSel) bool {
	for _, c := range e.procs {
		if c.parent == p && e.matches(c, sel) {
			return true
		}
	}
	for _, z := range e.zombies {
		if z.parent == p && e.matches(z, sel) {
			return true
		}
	}
	return false
}

// waitTraced handles a wait4 or waitid that names a tracee of the
// caller's process, and reports whether it did.
func (e *Engine) waitTraced(t *thread, optArg int, opts uint64) bool {
	p := t.proc
	if !e.traces(p) {
		// The common case costs no decoding (a process group is read
		// from /proc).
		return false
	}
	sel, ok := e.waitTarget(t)
	if !ok {
		return false
	}
	stopped, any := e.traceeStop(p, sel)
	switch {
	case stopped != nil:
		e.reportTraceStop(t, stopped, optArg, opts)
		return true
	case !any:
		return false
	}
	children := e.hasChild(p, sel)
	if children && (opts&abi.WNOHANG != 0 || opts&(wUntraced|wContinued) != 0 || (t.nr == abi.SYS_WAITID && opts&wExited == 0)) {
		// The kernel answers for the children; a stopped or continued
		// one is looked for by a retry, which comes back here.
		return false
	}
	if opts&abi.WNOHANG != 0 {
		// Only tracees the kernel does not count as children: none is
		// ready.
		if t.nr == abi.SYS_WAITID && t.regs.Rdx != 0 {
			var zero [28]byte
			_ = e.t.WriteMem(t.tid, t.regs.Rdx, zero[:])
		}
		t.emulate(0)
		return true
	}
	e.waitChild(t, sel, optArg, opts, children)
	return true
}

// waitChild makes t wait in the engine until a child sel names can be
// reaped (when children is set) or a tracee of its process that sel
// names stops; a tracer's wait may begin before its child calls
// PTRACE_TRACEME.
func (e *Engine) waitChild(t *thread, sel childSel, optArg int, opts uint64, children bool) {
	p := t.proc
	ready := func(e *Engine) bool {
		o, _ := e.traceeStop(p, sel)
		return o != nil || (children && e.childReady(p, sel))
	}
	b := &blocker{kind: bkChild, epoch: e.childEpoch, deadline: -1, check: ready}
	b.onReady = func(e *Engine, t *thread) {
		if o, _ := e.traceeStop(p, sel); o != nil {
			e.reportTraceStop(t, o, optArg, opts)
			return
		}
		e.hideRusage(t, optArg+1)
	}
	e.blockOn(t, b)
}

// reportTraceStop makes t's wait call return o's ptrace-stop.
func (e *Engine) reportTraceStop(t, o *thread, optArg int, opts uint64) {
	r := &t.regs
	status := o.pt.status
	e.digest.add(-9, int64(t.vtid), int64(o.vtid), int64(status))
	if addr := r.Arg(optArg + 1); addr != 0 {
		var zero [144]byte // struct rusage
		if e.t.WriteMem(t.tid, addr, zero[:]) != nil {
			t.emulate(-abi.EFAULT)
			return
		}
	}
	if t.nr == abi.SYS_WAIT4 {
		if r.Rsi != 0 {
			var b [4]byte
			putLE32(b[:], uint32(status))
			if e.t.WriteMem(t.tid, r.Rsi, b[:]) != nil {
				t.emulate(-abi.EFAULT)
				return
			}
		}
		e.traceReported(t.proc, o)
		t.emulate(int64(o.vtid))
		return
	}
	if r.Rdx != 0 {
		var info [28]byte
		code, st := cldTrapped, uint32(status>>8)
		switch {
		case status&0x7f == 0:
			code, st = cldExited, uint32(status>>8&0xff)
		case status&0xff != 0x7f:
			code, st = cldKilled, uint32(status&0x7f)
		}
		putLE32(info[0:], abi.SIGCHLD)
		putLE32(info[8:], uint32(code))
		putLE32(info[16:], uint32(o.vtid))
		putLE32(info[24:], st)
		if e.t.WriteMem(t.tid, r.Rdx, info[:]) != nil {
			t.emulate(-abi.EFAULT)
			return
		}
	}
	if opts&wNowait == 0 {
		e.traceReported(t.proc, o)
	}
	t.emulate(0)
}

// traceReported notes that tracer p's wait has reported o's stop or exit.
func (e *Engine) traceReported(p *process, o *thread) {
	o.pt.reported = true
	for i, x := range p.traceExits {
		if x == o {
			p.traceExits = append(p.traceExits[:i:i], p.traceExits[i+1:]...)
			return
		}
	}
}
