package replay

import "github.com/hermitdbg/hermit/detcore/abi"

// pauseOut pauses at watchpoint stop st of th, unless th is in hermit's
// stub code for a patched rdtsc site: a store that the site's jmp covers
// runs there, moved, and its trap comes inside the stub. th then steps
// until it has left the stub, and the stop is reported at the program's
// next instruction (stepOutStub), as a single step over the site ends
// there: no position the debugger sees lies in the stub.
func (l *layer) pauseOut(th *lthread, st Stop) {
	var r abi.Regs
	if l.inStub != nil && l.inner.GetRegs(th.tid, &r) == nil && l.inStub(th.tid, r.Rip) {
		th.leave = &st
		return
	}
	l.pause(st)
}

// stepOutStub handles a step of th made to leave hermit's stub: the stop
// it waits to report comes once th is out, or th steps again.
func (l *layer) stepOutStub(th *lthread) {
	var r abi.Regs
	if l.inner.GetRegs(th.tid, &r) != nil || l.inStub(th.tid, r.Rip) {
		return
	}
	st := *th.leave
	th.leave = nil
	l.pauseStep(th, st)
}
