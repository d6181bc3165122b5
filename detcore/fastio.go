package detcore

import (
	"github.com/hermitdbg/hermit/detcore/abi"
)

// Fast writes (and reads). A write to a regular file needs nothing from
// the engine but the file's new mtime, a read of one nothing at all, yet
// each costs a ptrace stop. So, in a program
// whose clock page the tracer could put where it wanted (FastWrites), the
// page is followed by a table of descriptors, by number, that the engine
// lets the program write without a stop, and by the tracer's code
// (detcore/ptrace/testdata/fastio.S) that does so:
//
//   - at a write to a regular file (not in /proc or /sys), or a read of a
//     descriptor that never blocks (FdOther), that runs in the kernel, the
//     engine enters the descriptor in the table for that call with the
//     file's identity on the host (FastWrites.FdID, which also marks its
//     open file description), and patches the libc site of the call
//     (FastWrites.Site) to enter that code from then on;
//   - the code writes without a stop when the engine allowed it at the
//     thread's last resume (vcFast: it runs alone, uncounted, untraced by
//     a guest's tracer, without a seccomp filter of its own: count.go,
//     guestptrace.go), the page's clock is below its limit and the
//     descriptor is still the one entered (hermit's mark on its open file
//     description, F_SETSIG, and the file's identity: a number closed and
//     opened again fails the comparison); it
//     moves the page's clock on by a step, as a stop's turn would, and
//     marks the entry written at the clock's value. Otherwise it makes the
//     call as before, from a page the filter traces;
//   - the engine folds the marks into the files' mtimes at every stop,
//     with the page's clock (foldClock), as noteWrite would have.
//
// Which calls take the fast path depends only on the engine's state and
// the guest's (its code, its descriptors), so it is the same in every
// run, record and replay; in record, a call whose result the journal
// keeps makes no entry.
//
// What such writes wrote is in no journal entry, so the code keeps a
// digest of it in the page (vcWDigest); at an intercepted call after one,
// a recording keeps the digest and its replay checks it
// (FastWriteJournal): a replay whose program writes other bytes there (a
// file it prints to, stdout redirected to a file) stops, as at a write
// it stops at.

// A FastWriteJournal is a Journal that keeps the digest of what a
// process's writes without a stop wrote.
type FastWriteJournal interface {
	Journal
	// FastWrites is called at an intercepted call of guest thread vtid,
	// before Enter, when the digest of what its process wrote without a
	// stop (since its page was made) is no longer the one given last: a
	// recording keeps it, a replay checks it against its recording's.
	FastWrites(vtid int, digest uint64) error
}

// checkFastWrites gives the journal the digest of what t's process wrote
// without a stop, if it changed.
func (e *Engine) checkFastWrites(t *thread, j FastWriteJournal) error {
	c := t.proc.clock
	if c == nil || c.fast == nil {
		return nil
	}
	d := c.word(vcWDigest)
	if d == c.digested {
		return nil
	}
	c.digested = d
	return j.FastWrites(t.vtid, d)
}

// Offsets in a clock page with fast writes (fastio.S).
const (
	vcFast      = 32    // nonzero: the running thread may write without a stop
	vcFastCalls = 40    // writes made without a stop
	vcDirty     = 48    // nonzero: some entry is marked written
	vcFastReads = 56    // reads made without a stop
	vcWDigest   = 0x138 // the digest of the bytes written without a stop

	fioTable   = 0x1000 // the table: fioFds entries of fioEntry bytes
	fioEntry   = 32     // st_dev, st_ino, flags, the clock at the last write
	fioFds     = 256
	fioRead    = 1 // flags: the descriptor may be read
	fioWrite   = 2 // flags: the descriptor may be written
	fioWritten = 4 // flags: written since the engine looked
	fioPipe    = 8 // flags: a pipe (fastio.S: only for the guest's only thread)
)

// FastPipeTracer is implemented by tracers that tell the pipes whose data
// comes only from the guest.
type FastPipeTracer interface {
	// InternalPipe reports whether descriptor fd of thread tid is a pipe
	// or FIFO that the guest made and holds alone: not hermit's stdio,
	// not one that leads outside.
	InternalPipe(tid, fd int) bool
}

// FastWrites is what the tracer gives a clock page it set up for fast
// writes (see above). Its functions reach the host, never a journal: what
// they return changes no decision of the engine's.
type FastWrites struct {
	// FdID returns the st_dev and st_ino of descriptor fd of thread tid,
	// as the guest's fstat reports them.
	FdID func(tid, fd int) (dev, ino uint64, ok bool)
	// Site returns, for the call whose syscall instruction ends at pc,
	// code being the 13 bytes before pc, the bytes to write at at so
	// that the call's site enters the fast code from then on (its stub
	// ready in the page); ok is false for code that is no site it knows,
	// or one it cannot reach.
	Site func(pc uint64, code []byte) (at uint64, patch []byte, ok bool)
	// FutexSite is Site for a FUTEX_WAKE_PRIVATE's site, which enters
	// the page's futex code (fastfutex.go); nil if the page has none.
	FutexSite func(pc uint64, code []byte) (at uint64, patch []byte, ok bool)
	// TSCSite is Site for an rdtsc or rdtscp at pc, code being the
	// bytes around it, from pc - TSCSiteBefore to pc + TSCSiteAfter: its
	// stub reads the page (tscsite.go).
	TSCSite func(pc uint64, code []byte) (at uint64, patch []byte, ok bool)
	// Undispatch turns thread tid's syscall user dispatch off, which the
	// page's futex code turns on when it leaves a wake (fastfutex.go),
	// and reports whether the kernel could (Linux 6.4): the engine asks
	// once per thread and page before it lets the code run.
	Undispatch func(tid int) bool
	// Unmark takes hermit's mark off the open file description of
	// descriptor fd of thread tid, and reports whether it had one.
	Unmark func(tid, fd int) bool
	// CodeStart and CodeEnd bound the page's code and its sites' stubs;
	// NearCode, if not 0, is where the program has them a second time
	// (NearCodeSize bytes), for sites out of the first copy's reach.
	CodeStart, CodeEnd, NearCode uint64
	// SlowCall is the address of the slow page's syscall instruction,
	// which makes, traced, the calls the fast path does not, and leaves
	// the page's words alone.
	SlowCall uint64
}

// maxCodeSteps bounds the steps that take a thread out of the page's
// code (its longest path, the futex table's search, is some 700).
const maxCodeSteps = 4096

// leaveFastCode single-steps t, stopped at an arbitrary point (a signal
// from outside, the watchdog's preemption), out of hermit's code for its
// page (ClockPage.inCode): a signal handler's own fast call, or another
// thread's after a preemption, would find the page's words half written
// (a clock read not yet stored, a wake not yet left). A thread that a
// signal interrupted as it waited in the slow page's syscall (a read of
// an empty pipe) stays there: the page's words are whole, and a step
// would make the call again (the signal consumed), where the handler must
// interrupt it as it would libc's. It reports a stop of t's that ended
// the steps (not a trap), which the caller handles instead, with ok
// false.
//
// While it steps, every signal t may block waits (MaskTracer): one from
// outside would stop a step, and the signal t was stopped with, which
// the caller delivers once t is out, would be lost (a second realtime
// signal close behind the first, or SIGTERM behind SIGUSR1).
func (e *Engine) leaveFastCode(t *thread) (Stop, bool, error) {
	c := t.proc.clock
	if c == nil {
		return Stop{}, true, nil
	}
	restore := func() error { return nil }
	defer func() { _ = restore() }()
	for i := 0; i < maxCodeSteps; i++ {
		var r abi.Regs
		if err := e.t.GetRegs(t.tid, &r); err != nil {
			return Stop{}, false, err
		}
		if !c.inCode(r.Rip) || (i == 0 && c.inSlowCall(&r)) {
			if i > 0 && e.cfg.Debug != nil {
				e.cfg.Debug("tid=%d stepped %d instructions out of the fast code to %#x", t.tid, i, r.Rip)
			}
			return Stop{}, true, restore()
		}
		if i == 0 {
			restore = e.blockAll(t)
		}
		if st, trapped, err := e.stepOnce(t); err != nil || !trapped {
			return st, false, err
		}
	}
	return Stop{}, true, restore()
}

// MaskTracer is implemented by tracers that read and set a stopped
// thread's signal mask.
type MaskTracer interface {
	SignalMask(tid int) (uint64, error)
	SetSignalMask(tid int, mask uint64) error
}

// blockAll blocks every signal of stopped thread t that can be blocked,
// and returns what gives it its mask back (once).
func (e *Engine) blockAll(t *thread) func() error {
	mt, ok := e.t.(MaskTracer)
	none := func() error { return nil }
	if !ok {
		return none
	}
	old, err := mt.SignalMask(t.tid)
	if err != nil || mt.SetSignalMask(t.tid, ^uint64(0)) != nil {
		return none
	}
	done := false
	return func() error {
		if done {
			return nil
		}
		done = true
		return mt.SetSignalMask(t.tid, old)
	}
}

// inSlowCall reports whether r, a stopped thread's registers, show the
// slow page's syscall interrupted: the kernel makes it again (a restart
// code in rax) unless a handler runs and ends it with EINTR.
func (c *ClockPage) inSlowCall(r *abi.Regs) bool {
	if c.fast == nil || c.fast.SlowCall == 0 || r.Rip != c.fast.SlowCall+2 {
		return false
	}
	res := int64(r.Rax)
	return preemptedResult(res) || res == -abi.ERESTART_RESTARTBLOCK
}

// SetFastWrites gives c fast writes; c's memory must hold the table.
func (c *ClockPage) SetFastWrites(f *FastWrites) {
	if len(c.mem) < fioTable+fioFds*fioEntry {
		panic("detcore: clock page too small for fast writes")
	}
	c.fast = f
	c.vinos = make([]uint64, fioFds)
}

// foldWrites brings the files written without a stop through c up to
// date, as noteWrite would have at each write.
func (e *Engine) foldWrites(c *ClockPage) {
	if n := c.word(vcFastCalls); n != 0 {
		e.result.Stats.FastWrites += int64(n)
		c.put(vcFastCalls, 0)
	}
	if n := c.word(vcFastReads); n != 0 {
		e.result.Stats.FastReads += int64(n)
		c.put(vcFastReads, 0)
	}
	if c.word(vcDirty) == 0 {
		return
	}
	c.put(vcDirty, 0)
	latest := map[uint64]int64{}
	var order []uint64
	for fd := 0; fd < fioFds; fd++ {
		off := fioTable + fioEntry*fd
		fl := c.word(off + 16)
		if fl&fioWritten == 0 {
			continue
		}
		c.put(off+16, fl&^fioWritten)
		v, tm := c.vinos[fd], int64(c.word(off+24))
		if old, ok := latest[v]; !ok {
			order = append(order, v)
		} else if old > tm {
			continue
		}
		latest[v] = tm
	}
	fs := e.files()
	for _, v := range order {
		now := e.epoch() + latest[v]
		fs.times[v] = fs.times[v].set(timeKept, now, now)
	}
}

// armFast says, in t's clock page, whether t may write without a stop
// until its next one: only when it runs on freely (mode ResumeCont, not
// counted), no guest's tracer follows it and it has no seccomp filter of
// its own (which could refuse, or kill for, the fcntl and fstat the fast
// code makes: strict mode does). A step (a spin examination, which the
// real time a thread ran decides on) leaves the word as a free run would
// have it: were it off, a write the step reached would take the slow
// path, a stop and a turn the schedule has only when hermit looked.
func (e *Engine) armFast(t *thread, mode ResumeMode) {
	c := t.proc.clock
	if c == nil || c.fast == nil {
		return
	}
	var on uint64
	if (mode == ResumeCont || mode == ResumeStep) && !t.counting && t.pt == nil && t.seccompMode == 0 && !e.cfg.NoFastIO {
		on = 1
		if len(e.threads) == 1 {
			// Pipes too: no other thread could wait for this one's.
			on = 2
		}
	}
	c.put(vcFast, on)
	e.armFutexes(t, on != 0)
}

// fastCandidate notes, at a write of t's to descriptor fd (a regular
// file with virtual inode v if reg), or at a read (write false), that
// the descriptor may get an entry once the call is let run (fastInstall):
// a regular file written, a descriptor that never blocks read, or, for
// the guest's only thread, a pipe the guest holds alone.
func (e *Engine) fastCandidate(t *thread, fd int, v uint64, write, reg bool) {
	c := t.proc.clock
	nr := abi.SYS_READ
	if write {
		nr = abi.SYS_WRITE
	}
	if c == nil || c.fast == nil || e.cfg.NoFastIO || t.nr != nr || fd < 0 || fd >= fioFds ||
		t.ioKindFd != fd || t.pt != nil || t.seccompMode != 0 {
		return
	}
	switch {
	case t.ioKind == FdOther && (reg || !write):
		t.fast = &fastFd{fd: fd, vino: v, write: write}
	case t.ioKind == FdPollable && len(e.threads) == 1:
		if pt, ok := e.t.(FastPipeTracer); ok && pt.InternalPipe(t.tid, fd) {
			t.fast = &fastFd{fd: fd, write: write, pipe: true}
		}
	}
}

// fcntl commands that read or give the signals of an open file
// description: hermit's mark (FastWrites.FdID) is one, F_SETSIG's.
const (
	fSetfl    = 4
	fSetsig   = 10
	fGetsig   = 11
	fSetlease = 1024
	oAsync    = 0o20000
)

// fastSignals handles t's fcntl when it reads or sets the signals of a
// description hermit may have marked: F_GETSIG of a marked one answers 0
// (the guest set none: the tracer marks no other), and F_SETSIG, a lease
// or O_ASYNC take the mark off first, so that the signal the guest gets is
// its own. It reports whether the call is dealt with.
func (e *Engine) fastSignals(t *thread) bool {
	c, fd := t.proc.clock, int(int32(t.regs.Rdi))
	if c == nil || c.fast == nil || fd < 0 {
		return false
	}
	switch t.regs.Rsi {
	case fGetsig:
		if c.fast.Unmark(t.tid, fd) {
			t.emulate(0)
			return true
		}
	case fSetsig, fSetlease:
		c.fast.Unmark(t.tid, fd)
	case fSetfl:
		if t.regs.Rdx&oAsync != 0 {
			c.fast.Unmark(t.tid, fd)
		}
	}
	return false
}

// fastFd is a descriptor that gets a fast entry when its call runs.
type fastFd struct {
	fd    int
	vino  uint64
	write bool
	pipe  bool
}

// fastInstall enters t's pending descriptor in its page's table, and has
// the call's site patched, if the call runs in the kernel as it is.
func (e *Engine) fastInstall(t *thread) {
	f := t.fast
	t.fast = nil
	c := t.proc.clock
	nr, flag := abi.SYS_READ, uint64(fioRead)
	if f != nil && f.write {
		nr, flag = abi.SYS_WRITE, fioWrite
	}
	if f == nil || c == nil || c.fast == nil || t.act != actCont || t.nr != nr || int(int32(t.regs.Rdi)) != f.fd {
		return
	}
	dev, ino, ok := c.fast.FdID(t.tid, f.fd)
	if !ok {
		return
	}
	off := fioTable + fioEntry*f.fd
	if f.pipe {
		flag |= fioPipe
	}
	if c.word(off) == dev && c.word(off+8) == ino {
		flag |= c.word(off+16) & (fioRead | fioWrite | fioPipe)
	}
	c.put(off, dev)
	c.put(off+8, ino)
	c.put(off+16, flag)
	c.put(off+24, 0)
	if f.write && !f.pipe {
		c.vinos[f.fd] = f.vino
	}
	e.patchSite(t, c, siteKey{pc: t.regs.Rip}, c.fast.Site)
}

// maxNoSites bounds a page's set of sites that cannot be patched.
const maxNoSites = 4096

// patchSite has the site of t's trapped call, whose syscall instruction
// ends at its rip, patched as site says, unless an earlier call there
// found that it cannot be (its code is not the pattern, or it is patched
// already and the call came through it): a site that cannot be patched
// costs no read of its code at every call. What decides is the code,
// the same in every run, record and replay, so the set is too.
func (e *Engine) patchSite(t *thread, c *ClockPage, k siteKey, site func(pc uint64, code []byte) (uint64, []byte, bool)) {
	read := func() []byte {
		// Through the Tracer: a debugger's breakpoints (replay) are
		// neither seen nor lost.
		code := make([]byte, 13)
		if e.t.ReadMem(t.tid, k.pc-13, code) != nil {
			return nil
		}
		return code
	}
	if k.pc >= 13 && e.patchCode(t.tid, c, k, read, site) {
		e.result.Stats.FastSites++
	}
}

// patchCode patches the site at k.pc in thread tid's memory as site says
// of its code, which read reads (nil if it cannot), unless an earlier try
// found it cannot be; it reports whether it patched it.
func (e *Engine) patchCode(tid int, c *ClockPage, k siteKey, read func() []byte, site func(pc uint64, code []byte) (uint64, []byte, bool)) bool {
	if _, no := c.noSites[k]; no {
		return false
	}
	if code := read(); code != nil {
		if at, b, ok := site(k.pc, code); ok && e.writeCode(tid, at, b, [][2]uint64{{at, uint64(len(b))}}) == nil {
			return true
		}
	}
	c.noSite(k)
	return false
}

// noSite adds k to c's sites that are not to be patched (a bounded set).
func (c *ClockPage) noSite(k siteKey) {
	if c.noSites == nil {
		c.noSites = make(map[siteKey]struct{})
	}
	if len(c.noSites) < maxNoSites {
		c.noSites[k] = struct{}{}
	}
}

// CodeMover is implemented by tracers that keep a debugger's breakpoints
// in the guest's code (replay's debug layer): before the engine writes a
// site's jmp, it says which bytes the jmp replaces, where an int3 kept
// would land inside the jmp (an instruction after an rdtsc that the jmp
// covers: tscsite.go).
type CodeMover interface {
	MovingCode(tid int, at, n uint64)
}

// writeCode writes b at at in tid's memory, where the sites' jmps are at
// jmps (address and length).
func (e *Engine) writeCode(tid int, at uint64, b []byte, jmps [][2]uint64) error {
	if m, ok := e.t.(CodeMover); ok {
		for _, j := range jmps {
			m.MovingCode(tid, j[0], j[1])
		}
	}
	return e.t.WriteMem(tid, at, b)
}

// siteKey is a site in a page's set of those that cannot be patched: the
// address its syscall instruction ends at, and whether for a futex call
// (glibc's syscall() makes both kinds at one site); for an rdtsc or
// rdtscp (tsc), the instruction's own address.
type siteKey struct {
	pc         uint64
	futex, tsc bool
}
