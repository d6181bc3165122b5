package detcore

import (
	"encoding/binary"
	"math"
)

// Clock reads without stops. In every guest process that has a vDSO, the
// tracer replaces the vDSO's clock_gettime, gettimeofday and time with
// code of hermit's own (detcore/ptrace/testdata/vclock.S) that answers
// from a page hermit shares with the process: the page holds the logical
// clock, which a read returns and then advances by one quantum, as a
// trapped read's turn does. So a read costs a few instructions, and its value depends
// only on the program's own reads and the schedule.
//
// The engine keeps the page and its clock in step: at every stop it folds
// the page's clock into its own (folding the page of the thread it resumed
// last, and the stopping thread's), and before resuming a thread it writes
// its clock into the thread's page with a limit. A read of the page's clock
// at the limit or past it makes the real syscall instead, which the
// engine answers at a scheduling point. The limit is decided at the
// thread's scheduling point from the engine's state alone, as count mode
// is (count.go), so the same reads trap in every run, record and replay:
//   - the next deadline (a sleep, a timer), so that it fires at the read
//     that reaches it;
//   - when another thread is ready to run or spins waiting for one,
//     vclockReads reads from now, so that a thread that polls the clock
//     while it waits for another makes scheduling points;
//   - otherwise none: a thread that runs alone reads the clock freely.
//
// Processes forked from one share its page (it is a MAP_SHARED mapping)
// until they exec. Clocks the page does not serve (the CPU-time clocks,
// clock ids the engine refuses), and processes whose vDSO the tracer could
// not replace, take the trapped syscall, answered from the same clock.

// Offsets in a clock page (vclock.S): little-endian 64-bit words.
const (
	vcNow   = 0
	vcLimit = 8
	vcStep  = 16
	vcReads = 24
	vcBase  = 64 // [16]: what clock id i adds to now; 0: the syscall

	// ClockPageSize is the least size of a clock page.
	ClockPageSize = vcBase + 16*8
)

// vclockReads is how many reads a thread may make from a clock page
// between scheduling points while another thread waits to run.
const vclockReads = 1024

// ClockPage is hermit's mapping of the page through which a guest
// process's clock functions read virtual time.
type ClockPage struct {
	mem     []byte
	release func()
	// refs counts the processes that have the page mapped.
	refs int
	// fast is set for a page with fast writes (fastio.go); vinos are
	// the virtual inodes of its table's entries.
	fast  *FastWrites
	vinos []uint64
	// code bounds the clock code in the vDSO (SetCode).
	code [2]uint64
	// noSites are the sites of trapped calls found not to be patchable
	// (fastio.go: patchSite).
	noSites map[siteKey]struct{}
	// futex is what the engine last wrote in its futex table
	// (fastfutex.go).
	futex futexTable
	// digested is the digest of its fast writes the journal has.
	digested uint64
}

// NewClockPage returns the clock page backed by mem, hermit's view of a
// page shared with the guest; release, if not nil, is called once no
// process has it any longer.
func NewClockPage(mem []byte, release func()) *ClockPage {
	if len(mem) < ClockPageSize {
		panic("detcore: clock page too small")
	}
	return &ClockPage{mem: mem, release: release}
}

// SetCode tells c where its clock code lies in the guest, [start, end).
func (c *ClockPage) SetCode(start, end uint64) { c.code = [2]uint64{start, end} }

// inCode reports whether pc lies in hermit's code for c: the clock code,
// the fast page's code or a site's stub.
func (c *ClockPage) inCode(pc uint64) bool {
	if pc >= c.code[0] && pc < c.code[1] {
		return true
	}
	return c.inStubs(pc)
}

// inStubs reports whether pc lies in c's fast code or a site's stub, in
// either copy.
func (c *ClockPage) inStubs(pc uint64) bool {
	f := c.fast
	return f != nil && (pc >= f.CodeStart && pc < f.CodeEnd || f.NearCode != 0 && pc >= f.NearCode && pc < f.NearCode+NearCodeSize)
}

// NearCodeSize is the size of the second copy of a page's code
// (FastWrites.NearCode).
const NearCodeSize = 0x2000

func (c *ClockPage) word(off int) uint64     { return binary.LittleEndian.Uint64(c.mem[off:]) }
func (c *ClockPage) put(off int, v uint64)   { binary.LittleEndian.PutUint64(c.mem[off:], v) }
func (c *ClockPage) setBase(id int, v int64) { c.put(vcBase+8*id, uint64(v)) }

// Exec is what Tracer.OnExec prepared in a new program.
type Exec struct {
	// Clock is the page the program's clock functions read, or nil when
	// they make the syscall; NoClock then says why.
	Clock   *ClockPage
	NoClock string
	// Returned: the thread has returned from execve already (hermit's
	// code ran in it), so no syscall-exit stop of execve comes.
	Returned bool
	// Images are where the program's ELF images may have their header,
	// as the kernel mapped them at the exec: the interpreter's (AT_BASE)
	// and the executable's (its program headers' address, AT_PHDR, less
	// the 64 bytes of the header they normally follow). 0: none.
	Images [2]uint64
}

// setupClock fills a new clock page with the clocks it serves and the
// step of a read, and gives it to p.
func (e *Engine) setupClock(p *process, x Exec) {
	e.dropClock(p)
	if x.Clock == nil {
		e.result.Stats.TrappedClocks++
		if e.result.Stats.TrappedClockWhy == "" {
			e.result.Stats.TrappedClockWhy = x.NoClock
		}
		return
	}
	c := x.Clock
	c.put(vcStep, uint64(e.cfg.Quantum))
	for id := 0; id < 16; id++ {
		switch id {
		case clockProcessCputime, clockThreadCputime:
			// Per thread in the kernel: left to the engine.
			continue
		}
		if ns, ok := e.now(id); ok && ns-e.clock > 0 {
			c.setBase(id, ns-e.clock)
		}
	}
	e.result.Stats.ClockPages++
	p.clock = c
	c.refs++
}

// shareClock gives child, a process p just created, p's clock page.
func (e *Engine) shareClock(p, child *process) {
	if c := p.clock; c != nil && child.clock == nil {
		child.clock = c
		c.refs++
	}
}

// dropClock takes p's clock page from it (it exited or exec'd).
func (e *Engine) dropClock(p *process) {
	c := p.clock
	if c == nil {
		return
	}
	e.foldClock(c)
	p.clock = nil
	if c.refs--; c.refs == 0 {
		if e.lastClock == c {
			e.lastClock = nil
		}
		// Not while the watchdog reads it (wokeFromPage).
		e.wakeMu.Lock()
		e.wakePage.CompareAndSwap(c, nil)
		e.wakeMu.Unlock()
		if c.release != nil {
			c.release()
		}
	}
}

// foldClock brings the engine's clock up to c's: the reads the guest
// made there since it was last written.
func (e *Engine) foldClock(c *ClockPage) {
	if c == nil {
		return
	}
	if n := int64(c.word(vcNow)); n > e.clock {
		// The steps of the reads the running thread made there.
		run := e.running
		if run == nil {
			run = e.last
		}
		run.charge(n - e.clock)
		e.clock = n
	}
	if r := c.word(vcReads); r != 0 {
		e.result.Stats.ClockPageReads += int64(r)
		c.put(vcReads, 0)
	}
	if c.fast != nil {
		if r := c.word(vcTSCReads); r != 0 {
			e.result.Stats.TSCPageReads += int64(r)
			c.put(vcTSCReads, 0)
		}
		e.foldWrites(c)
	}
}

// foldStop folds, at a stop of thread tid, the pages whose clock the guest
// may have moved since the engine last looked.
func (e *Engine) foldStop(tid int) {
	e.foldClock(e.lastClock)
	if t := e.threads[tid]; t != nil && t.proc.clock != e.lastClock {
		e.foldClock(t.proc.clock)
	}
}

// armClock writes the engine's clock and t's limit into t's page before
// t runs.
func (e *Engine) armClock(t *thread) {
	e.foldClock(e.lastClock)
	c := t.proc.clock
	if c == nil {
		return
	}
	e.foldClock(c)
	c.put(vcNow, uint64(e.clock))
	limit := uint64(t.clockLimit)
	if c.fast != nil && c.word(fxPend) != 0 {
		// Its wake waits in the page (fastfutex.go): the limit its
		// code set stands.
		limit = min(limit, c.word(vcLimit))
	}
	c.put(vcLimit, limit)
	if c.fast != nil {
		c.put(vcTSC, e.tscWord(t))
	}
	e.lastClock = c
}

// clockLimit is the page clock at which t's reads trap until its next
// scheduling point, given how many other threads wait to run (others)
// and the next deadline.
func (e *Engine) clockLimit(others int, deadline int64, timed bool) int64 {
	if timed && deadline <= e.clock {
		// Its thread (or timer) waits for the next turn like a ready
		// thread; while t keeps its turns it comes no sooner.
		others, timed = others+1, false
	}
	limit := int64(math.MaxInt64)
	if others > 0 {
		limit = e.clock + vclockReads*e.cfg.Quantum
	}
	if timed && deadline < limit {
		limit = deadline
	}
	return limit
}

// clockSpent says t's reads reached its page's limit: its turn is over
// (the others' turns, or a deadline, come first).
func (e *Engine) clockSpent(t *thread) bool {
	c := t.proc.clock
	return c != nil && int64(c.word(vcNow)) >= t.clockLimit
}

// resumeThread arms t's clock page and resumes it.
func (e *Engine) resumeThread(t *thread, mode ResumeMode, sig int) error {
	if mode != ResumeStep && mode != ResumeCountStep {
		e.noteResume(t)
	}
	return e.resumeLooked(t, mode, sig)
}

// resumeLooked is resumeThread after a look at t that must change nothing
// (an examination for a spin): t runs on as if it had not stopped.
func (e *Engine) resumeLooked(t *thread, mode ResumeMode, sig int) error {
	if mode != ResumeStep && mode != ResumeCountStep {
		if err := t.tf.Free(e.t, t.tid); err != nil {
			return err
		}
	}
	e.armClock(t)
	e.armFast(t, mode)
	e.offSUD(t)
	return e.t.Resume(t.tid, mode, sig)
}
