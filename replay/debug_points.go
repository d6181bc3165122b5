package replay

import (
	"errors"
	"fmt"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
)

// Breakpoints, watchpoints and the memory view of the debug layer.

// watch is one hardware watchpoint slot.
type watch struct {
	on   bool
	addr uint64
	size int
	kind WatchKind
}

// dr7 returns the DR7 bits that enable w in slot i: the local enable bit,
// then the access type and length fields (Intel SDM vol. 3, 18.2.4).
func (w watch) dr7(i int) uint64 {
	rw := uint64(1) // DR_RW_WRITE
	switch w.kind {
	case WatchReadWrite:
		rw = 3 // DR_RW_READ: reads and writes
	case WatchExec:
		rw = 0 // DR_RW_EXECUTE, whose length must be 1 (DR_LEN_1)
	}
	var ln uint64
	switch w.size {
	case 2:
		ln = 1 // DR_LEN_2
	case 4:
		ln = 3 // DR_LEN_4
	case 8:
		ln = 2 // DR_LEN_8
	}
	return 1<<(2*i) | rw<<(16+4*i) | ln<<(18+4*i)
}

// checkWatch validates a watchpoint as the hardware requires.
func checkWatch(addr uint64, size int, kind WatchKind) error {
	switch {
	case size != 1 && size != 2 && size != 4 && size != 8:
		return fmt.Errorf("watchpoint at %#x: size %d: want 1, 2, 4 or 8", addr, size)
	case addr%uint64(size) != 0:
		return fmt.Errorf("watchpoint at %#x: the address must be aligned to the size (%d)", addr, size)
	case kind == WatchExec && size != 1:
		return fmt.Errorf("instruction breakpoint at %#x: size %d: want 1", addr, size)
	case kind != WatchWrite && kind != WatchReadWrite && kind != WatchExec:
		return fmt.Errorf("watchpoint at %#x: unknown kind %d", addr, kind)
	}
	return nil
}

// watchMask has bit n set for each slot n in use.
func (l *layer) watchMask() uint64 {
	var m uint64
	for i, w := range l.wps {
		if w.on {
			m |= 1 << i
		}
	}
	return m
}

// takeDR6 reads tid's DR6 and clears the bits the layer looks at, so that
// a later int3 trap, which leaves DR6 alone, does not look like a step.
func (l *layer) takeDR6(tid int) uint64 {
	if l.dr == nil {
		return 0
	}
	v, err := l.dr.DebugReg(tid, 6)
	if err != nil {
		return 0
	}
	if v&(dr6Step|dr6TrapBits) != 0 {
		_ = l.dr.SetDebugReg(tid, 6, 0)
	}
	return v
}

// applyDR gives th the debug registers of the current watchpoints.
func (l *layer) applyDR(th *lthread) error {
	if l.dr == nil {
		th.drGen = l.wpGen
		return nil
	}
	mask := l.watchMask()
	if mask == 0 && !th.drSet {
		th.drGen = l.wpGen
		return nil
	}
	// Disable everything first: the kernel checks each enabled slot's
	// address against its length as it changes.
	if err := l.dr.SetDebugReg(th.tid, 7, 0); err != nil {
		return err
	}
	th.drSet = false
	var dr7 uint64
	for i, w := range l.wps {
		if !w.on {
			continue
		}
		if err := l.dr.SetDebugReg(th.tid, i, w.addr); err != nil {
			return err
		}
		dr7 |= w.dr7(i)
	}
	if dr7 != 0 {
		if err := l.dr.SetDebugReg(th.tid, 7, dr7); err != nil {
			return err
		}
		th.drSet = true
	}
	th.drGen = l.wpGen
	return nil
}

// setWatch puts w in slot i (an unset w clears it) in every live thread.
func (l *layer) setWatch(i int, w watch) error {
	if l.dr == nil {
		return ErrNoDebugRegs
	}
	old := l.wps[i]
	l.wps[i] = w
	l.wpGen++
	for _, tid := range l.liveTids() {
		if err := l.applyDR(l.thread(tid)); err != nil && !errors.Is(err, detcore.ErrGone) {
			l.wps[i] = old
			l.wpGen++
			for _, tid := range l.liveTids() {
				_ = l.applyDR(l.thread(tid))
			}
			return fmt.Errorf("watchpoint at %#x: %w", w.addr, err)
		}
	}
	return nil
}

// liveTids lists the guest threads that are not exiting.
func (l *layer) liveTids() []int {
	var out []int
	for _, t := range l.list() {
		if t.State != "exiting" {
			out = append(out, t.Tid)
		}
	}
	return out
}

// procTids returns one live thread of each guest process, to reach its
// memory through.
// The focused process (Session.Focus) comes first.
func (l *layer) procTids() []int {
	seen := map[int]bool{}
	var out []int
	for _, t := range l.list() {
		if t.State != "exiting" && !seen[t.Pid] {
			seen[t.Pid] = true
			out = append(out, t.Tid)
			if t.Vpid == l.focus {
				copy(out[1:], out)
				out[0] = t.Tid
			}
		}
	}
	return out
}

// byteAt reads the byte at addr in tid's memory.
func (l *layer) byteAt(tid int, addr uint64) (byte, error) {
	var b [1]byte
	err := l.inner.ReadMem(tid, addr, b[:])
	return b[0], err
}

// armedAt reports whether the int3 of a breakpoint is at addr in tid's
// memory.
func (l *layer) armedAt(tid int, addr uint64) bool {
	if _, ok := l.bps[addr]; !ok {
		return false
	}
	b, err := l.byteAt(tid, addr)
	return err == nil && b == int3
}

// errNotExecutable: a pending breakpoint's page is mapped, but not to run
// code yet.
var errNotExecutable = errors.New("not mapped to run code yet")

// insert sets a breakpoint at addr in every guest process that maps it.
// The first process read (the focused one, if it maps addr) gives the
// original byte; a process holding another byte there runs another
// program and is left alone. A pending breakpoint (its page was not
// mapped when the run began) waits until the page may run code: the
// dynamic loader maps a library whole, read-only, before it maps its
// code over that with MAP_FIXED, which would take an int3 written
// earlier away.
func (l *layer) insert(addr uint64) error {
	if _, ok := l.bps[addr]; ok {
		return nil
	}
	var orig byte
	have, armed := false, false
	var err error
	later := 0 // the focused process, where the page is not mapped yet
	for _, tid := range l.procTids() {
		b, rerr := l.byteAt(tid, addr)
		switch {
		case rerr != nil:
			err = rerr
			if l.focus != 0 && tid == l.focusTid() {
				later = tid
			}
			continue
		case l.pending[addr] && !executable(tid, addr):
			// Not code yet: a library's first mapping is read-only, and
			// the loader maps its code over it, int3 and all. It waits
			// in pending until the page is code.
			err = errNotExecutable
			continue
		case !have:
			orig, have = b, true
		case b == int3:
			armed = true // shares memory with a process done already
			continue
		case b != orig:
			continue
		}
		if b == int3 {
			armed = true // the guest's own int3: nothing to write
			continue
		}
		if werr := l.inner.WriteMem(tid, addr, []byte{int3}); werr != nil {
			err = werr
			continue
		}
		armed = true
	}
	if !armed {
		if err == nil {
			err = errors.New("no guest process")
		}
		return fmt.Errorf("breakpoint at %#x: %w", addr, err)
	}
	l.bps[addr] = orig
	delete(l.pending, addr)
	if later != 0 {
		// Armed in another process that maps the same code (a parent,
		// before the focused process execs its program): the focused
		// one gets it once its loader maps the page.
		l.armLater(addr, later, 0)
	}
	return nil
}

// focusTid returns a live thread of the focused process, or 0.
func (l *layer) focusTid() int {
	for _, t := range l.list() {
		if t.Vpid == l.focus && t.State != "exiting" {
			return t.Tid
		}
	}
	return 0
}

// A waiter is a thread whose process waits for a breakpoint's page, until
// event until (0: for as long as it lives).
type waiter struct {
	tid   int
	until uint64
}

// execWait is how many events after an exec its new program's loader has
// to map a breakpoint's page: each wait costs a read at every event, and
// an address the new program never maps would cost it to the end.
const execWait = 2000

// armLater has the breakpoint at addr armed in tid's process once its
// code is mapped there (armMapped), up to event until (0: no limit).
func (l *layer) armLater(addr uint64, tid int, until uint64) {
	if l.unmapped == nil {
		l.unmapped = map[uint64][]waiter{}
	}
	for i, w := range l.unmapped[addr] {
		if w.tid == tid {
			l.unmapped[addr][i].until = until
			return
		}
	}
	l.unmapped[addr] = append(l.unmapped[addr], waiter{tid, until})
}

// insertSoon inserts a new breakpoint at addr, or, if its page is mapped
// but may not run code yet (a library the loader has begun to map: a
// REPL's pending breakpoint found there), leaves it pending until it may.
func (l *layer) insertSoon(addr uint64) error {
	was := l.pending[addr]
	l.pending[addr] = true
	err := l.insert(addr)
	switch {
	case err == nil || errors.Is(err, errNotExecutable):
		return nil
	case !was:
		delete(l.pending, addr)
	}
	return err
}

// remove clears the breakpoint at addr in every guest process.
func (l *layer) remove(addr uint64) {
	orig, ok := l.bps[addr]
	delete(l.bps, addr)
	delete(l.pending, addr)
	delete(l.unmapped, addr)
	if !ok || orig == int3 {
		return
	}
	for _, tid := range l.procTids() {
		if b, err := l.byteAt(tid, addr); err == nil && b == int3 {
			_ = l.inner.WriteMem(tid, addr, []byte{orig})
		}
	}
}

// rearm puts the int3 back at addr after a step over it by thread tid.
func (l *layer) rearm(addr uint64, tid int) {
	orig, ok := l.bps[addr]
	if !ok || orig == int3 {
		return
	}
	if l.inner.WriteMem(tid, addr, []byte{int3}) == nil {
		return
	}
	// tid is gone (it exited or exec'd); its process may live on.
	for _, p := range l.procTids() {
		if b, err := l.byteAt(p, addr); err == nil && b == orig {
			_ = l.inner.WriteMem(p, addr, []byte{int3})
		}
	}
}

// rearmExec inserts the breakpoints into a process that has just exec'd,
// where its new program has the original bytes.
func (l *layer) rearmExec(tid int) {
	for addr, orig := range l.bps {
		b, err := l.byteAt(tid, addr)
		switch {
		case err != nil:
			l.armLater(addr, tid, l.event+execWait)
		case b == orig && orig != int3:
			_ = l.inner.WriteMem(tid, addr, []byte{int3})
		}
	}
}

// armMapped arms the breakpoints of unmapped where their process has
// mapped their code now, with the same instruction there.
func (l *layer) armMapped() {
	for addr, ws := range l.unmapped {
		orig, ok := l.bps[addr]
		var left []waiter
		for _, w := range ws {
			if !ok || l.ths[w.tid] == nil || w.until != 0 && l.event > w.until {
				continue
			}
			b, err := l.byteAt(w.tid, addr)
			switch {
			case err != nil || !executable(w.tid, addr):
				left = append(left, w) // not mapped yet, or not code yet
			case b == orig && orig != int3:
				_ = l.inner.WriteMem(w.tid, addr, []byte{int3})
			}
		}
		if len(left) == 0 {
			delete(l.unmapped, addr)
		} else {
			l.unmapped[addr] = left
		}
	}
}

// install sets a new run's breakpoints and watchpoints. Breakpoints whose
// page is not mapped yet wait in pending.
func (l *layer) install(bps []uint64, wps [4]watch) {
	for _, addr := range bps {
		if l.insert(addr) != nil {
			l.pending[addr] = true
		}
	}
	for i, w := range wps {
		if w.on {
			_ = l.setWatch(i, w)
		}
	}
}

// retryPending tries the breakpoints a new run could not insert yet.
func (l *layer) retryPending() {
	for addr := range l.pending {
		_ = l.insert(addr)
	}
	l.armMapped()
}

// mask puts the original bytes in place of our int3s in b, read at addr.
func (l *layer) mask(addr uint64, b []byte) {
	for a, orig := range l.bps {
		if a >= addr && a-addr < uint64(len(b)) && b[a-addr] == int3 {
			b[a-addr] = orig
		}
	}
}

// ReadMem implements detcore.Tracer.ReadMem: the engine sees the original
// bytes under breakpoints.
func (l *layer) ReadMem(tid int, addr uint64, b []byte) error {
	if err := l.inner.ReadMem(tid, addr, b); err != nil {
		return err
	}
	if !l.killed {
		l.mask(addr, b)
	}
	return nil
}

// WriteMem implements detcore.Tracer.WriteMem: a write over a breakpoint
// changes the byte the breakpoint restores, and the int3 stays.
func (l *layer) WriteMem(tid int, addr uint64, b []byte) error {
	if len(l.bps) == 0 || len(b) == 0 || l.killed {
		return l.inner.WriteMem(tid, addr, b)
	}
	var data []byte
	for a := range l.bps {
		if a < addr || a-addr >= uint64(len(b)) || !l.armedAt(tid, a) {
			continue
		}
		if l.moving[a] {
			// Inside a site's jmp (MovingCode): the int3 goes, and the
			// original byte stays what other processes have.
			delete(l.moving, a)
			continue
		}
		if data == nil {
			data = append([]byte(nil), b...)
		}
		l.bps[a] = b[a-addr]
		data[a-addr] = int3
	}
	if data == nil {
		data = b
	}
	return l.inner.WriteMem(tid, addr, data)
}

// MovingCode implements detcore.CodeMover: the engine is about to write
// a patched site's jmp over [at, at+n) of tid's memory. A breakpoint on
// an instruction the jmp covers (after an rdtsc) would put its int3 in
// the jmp's bytes: it leaves that process's memory with the write (its
// instruction runs in hermit's stub from then on, and it is not hit
// there, as the README says); one at the site itself stays, on the jmp.
func (l *layer) MovingCode(tid int, at, n uint64) {
	for a := range l.bps {
		if a > at && a < at+n && l.armedAt(tid, a) {
			if l.moving == nil {
				l.moving = map[uint64]bool{}
			}
			l.moving[a] = true
		}
	}
}

var _ detcore.CodeMover = (*layer)(nil)

// pageSize is the unit in which a failed read is retried.
const pageSize = 4096

// readMem reads guest memory for the Session: as much of b as is mapped
// from addr on, with the original bytes under breakpoints.
func (l *layer) readMem(tid int, addr uint64, b []byte) (int, error) {
	err := l.inner.ReadMem(tid, addr, b)
	n := len(b)
	if err != nil {
		n = 0
		for n < len(b) {
			a := addr + uint64(n)
			chunk := min(len(b)-n, int(pageSize-a%pageSize))
			if l.inner.ReadMem(tid, a, b[n:n+chunk]) != nil {
				break
			}
			n += chunk
		}
	}
	l.mask(addr, b[:n])
	if n < len(b) {
		return n, fmt.Errorf("reading %d bytes at %#x: %w", len(b), addr, err)
	}
	return n, nil
}

// emulatedEnd returns where the instruction at thread tid's pointer
// ends if it is one the engine emulates when it faults (rdtsc, rdtscp;
// cpuid under CPUID faulting), else 0.
func (l *layer) emulatedEnd(tid int) uint64 {
	var r abi.Regs
	var insn [3]byte
	if l.inner.GetRegs(tid, &r) != nil || l.ReadMem(tid, r.Rip, insn[:2]) != nil {
		return 0
	}
	switch {
	case insn[0] == 0x0f && (insn[1] == 0x31 || insn[1] == 0xa2): // rdtsc, cpuid
		return r.Rip + 2
	case insn[0] == 0x0f && insn[1] == 0x01 && l.ReadMem(tid, r.Rip+2, insn[2:]) == nil && insn[2] == 0xf9: // rdtscp
		return r.Rip + 3
	}
	return 0
}
