// Package detcoretest provides a scripted, in-memory detcore.Tracer for
// scheduler tests, after net/http/httptest.
//
// A test describes the guest as scripts. Each thread's script is a list of
// Steps: a syscall (its number, arguments and, when it runs natively, its
// result), a clone of a child thread with the child's own script, a fatal
// signal, or a store to memory. The fake plays the kernel: when the engine
// resumes a thread, the thread runs its script up to its next stop (the
// seccomp stop of its next syscall, a clone event, a signal-delivery stop,
// its exit), and Wait reports that stop. On resume from a seccomp stop the
// fake applies the engine's emulated result (OrigRax = -1, result in Rax)
// or runs the syscall itself. It records every resume and every completed
// syscall, so tests can assert the schedule.
//
// The model is deliberately small. Every scripted thread belongs to one
// thread group sharing one address space, a sparse byte map. The only file
// descriptors are pipes: a native read consumes buffered bytes and a native
// write appends them; a read of an empty pipe blocks in the kernel, which
// the fake reports as an error, since the engine must never let it happen.
// Every delivered signal is fatal. The root thread is tid 1; children get
// tids 2, 3, ... in the order they are cloned, and GuestTid is the identity.
//
// All methods must be called from one goroutine.
package detcoretest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
)

// MaxIdlePolls is how many times Poll may be asked to wait between two
// resumes before the fake fails the run: the real engine would be stuck,
// waiting for the outside world forever or spinning.
const MaxIdlePolls = 10

// enosys is what Rax holds at a seccomp stop.
var enosys = int64(-abi.ENOSYS)

// at says where a thread is stopped.
type at int

const (
	atRunning     at = iota // resumed: its next stop is queued, or it is blocked in the kernel
	atStart                 // a new thread's first stop, or the root after its exec
	atSyscall               // the seccomp stop of steps[pc]
	atSyscallExit           // the syscall-exit stop of steps[pc]
	atClone                 // the clone event of steps[pc]
	atSignal                // the signal-delivery stop of steps[pc]
	atZombie                // a leader that exited before its other threads
	atGone                  // exited or killed; its report may still be queued
)

type thread struct {
	tid      int
	steps    []Step
	pc       int
	at       at
	regs     abi.Regs
	clearTid uint64
	code     int
	// unreported counts its queued stops.
	unreported int
	// blockedIn names the syscall it is blocked in, in the kernel.
	blockedIn string
	// zapped is set when another thread's exit_group or fatal signal
	// killed it: SIGKILL is pending until its exit is reported.
	zapped bool
	// readsLeft counts the reads of its ReadClock step still to make.
	readsLeft int
}

type pipe struct{ buffered int }

type fd struct {
	p     *pipe
	write bool
}

// Tracer is a scripted detcore.Tracer.
type Tracer struct {
	// Idle, when set, plays the outside world: Poll calls it when it is
	// asked to wait and nothing is ready, then looks again.
	Idle func()

	threads map[int]*thread
	order   []*thread // creation order; order[0] is the leader
	queue   []detcore.Stop
	mem     map[uint64]byte
	fds     map[int]*fd
	err     error

	resumes  []Resume
	calls    []Call
	atRandom [][16]byte
	// page is the clock page (UseClockPage); clockReads the values the
	// ReadClock steps read.
	page       []byte
	clockReads []ClockRead
	idlePolls  int
	// waits counts the Poll calls with a timeout since the last Resume.
	waits int
}

var _ detcore.Tracer = (*Tracer)(nil)

// New returns a Tracer whose root thread, tid 1, is stopped after its exec
// and will run root.
func New(root ...Step) *Tracer {
	f := &Tracer{threads: map[int]*thread{}, mem: map[uint64]byte{}, fds: map[int]*fd{}}
	f.spawn(root).at = atStart
	return f
}

// Root returns the root thread's tid, for detcore.NewEngine.
func (f *Tracer) Root() int { return 1 }

func (f *Tracer) spawn(steps []Step) *thread {
	th := &thread{tid: len(f.order) + 1, steps: steps, at: atStart}
	f.threads[th.tid] = th
	f.order = append(f.order, th)
	return th
}

// UseClockPage gives the guest a clock page at its exec.
func (f *Tracer) UseClockPage() { f.page = make([]byte, detcore.ClockPageSize) }

// ClockRead is one read of a ReadClock step: the thread, the CLOCK_MONOTONIC
// value it read, and whether it took the syscall.
type ClockRead struct {
	Tid     int
	Ns      int64
	Trapped bool
}

// ClockReads returns the reads of the ReadClock steps so far, in order.
func (f *Tracer) ClockReads() []ClockRead { return append([]ClockRead(nil), f.clockReads...) }

// Resumes returns the Resume calls so far, in order.
func (f *Tracer) Resumes() []Resume { return append([]Resume(nil), f.resumes...) }

// ResumedTids returns the tids of the Resume calls so far, in order.
func (f *Tracer) ResumedTids() []int {
	tids := make([]int, len(f.resumes))
	for i, r := range f.resumes {
		tids[i] = r.Tid
	}
	return tids
}

// Calls returns the completed syscalls so far, in order of completion.
func (f *Tracer) Calls() []Call { return append([]Call(nil), f.calls...) }

// AtRandom returns the AT_RANDOM bytes of each OnExec call.
func (f *Tracer) AtRandom() [][16]byte { return append([][16]byte(nil), f.atRandom...) }

// IdlePolls counts the Poll calls that were asked to wait and found
// nothing ready: times the engine waited for the outside world.
func (f *Tracer) IdlePolls() int { return f.idlePolls }

// Finished returns nil when every thread has exited and every stop has
// been reported, or says what is left.
func (f *Tracer) Finished() error {
	if f.err != nil {
		return f.err
	}
	for _, th := range f.order {
		if th.at != atGone {
			return fmt.Errorf("detcoretest: thread %d has not exited (step %d of %d)", th.tid, th.pc, len(th.steps))
		}
	}
	if len(f.queue) > 0 {
		return fmt.Errorf("detcoretest: %d stops not reported, first %+v", len(f.queue), f.queue[0])
	}
	return nil
}

func (f *Tracer) fail(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("detcoretest: "+format, args...)
	}
}

// live returns thread tid, or an error wrapping detcore.ErrGone when it
// has exited.
func (f *Tracer) live(tid int) (*thread, error) {
	th := f.threads[tid]
	if th == nil {
		return nil, fmt.Errorf("detcoretest: no thread %d", tid)
	}
	if th.at == atGone || th.at == atZombie {
		return nil, fmt.Errorf("thread %d: %w", tid, detcore.ErrGone)
	}
	return th, nil
}

func (f *Tracer) report(st detcore.Stop) {
	f.threads[st.Tid].unreported++
	f.queue = append(f.queue, st)
}

// Wait implements detcore.Tracer.Wait. It fails when no stop is queued:
// the real Wait would block forever.
func (f *Tracer) Wait() (detcore.Stop, error) {
	if f.err != nil {
		return detcore.Stop{}, f.err
	}
	if len(f.queue) == 0 {
		for _, th := range f.order {
			if th.blockedIn != "" {
				return detcore.Stop{}, fmt.Errorf("detcoretest: Wait would block forever: thread %d blocked in the kernel in %s", th.tid, th.blockedIn)
			}
		}
		return detcore.Stop{}, errors.New("detcoretest: Wait would block forever: no thread is running")
	}
	st := f.queue[0]
	f.queue = f.queue[1:]
	f.threads[st.Tid].unreported--
	return st, nil
}

// Resume implements detcore.Tracer.Resume.
func (f *Tracer) Resume(tid int, mode detcore.ResumeMode, sig int) error {
	th, err := f.live(tid)
	if err != nil {
		return err
	}
	if th.unreported > 0 || th.at == atRunning || th.at == atZombie {
		return fmt.Errorf("detcoretest: resume of thread %d, which is not at a reported stop", tid)
	}
	if mode == detcore.ResumeStep {
		return errors.New("detcoretest: single-stepping is not modelled")
	}
	if sig != 0 && th.at != atSignal {
		return fmt.Errorf("detcoretest: thread %d resumed with signal %d outside a signal-delivery stop", tid, sig)
	}
	f.resumes = append(f.resumes, Resume{Tid: tid, Mode: mode, Sig: sig})
	f.waits = 0
	switch th.at {
	case atSignal:
		if sig != 0 {
			f.endGroup(th, detcore.Stop{Kind: detcore.StopKilled, Sig: sig})
			return nil
		}
		th.pc++
	case atSyscall:
		if int64(th.regs.OrigRax) == -1 && th.regs.Rip == syscallRip-abi.SyscallInsnLen {
			// Skipped and rewound to the syscall instruction: the
			// call is made again.
		} else if int64(th.regs.OrigRax) == -1 {
			f.complete(th, int64(th.regs.Rax), true)
		} else if !f.native(th, mode) {
			return nil
		}
	case atSyscallExit, atClone:
		f.complete(th, int64(th.regs.Rax), false)
	}
	f.run(th)
	return nil
}

func (f *Tracer) complete(th *thread, ret int64, emulated bool) {
	s := th.steps[th.pc]
	nr := s.nr
	switch s.kind {
	case stepClone:
		nr = abi.SYS_CLONE
	case stepClockRead:
		f.calls = append(f.calls, Call{Tid: th.tid, Nr: abi.SYS_CLOCK_GETTIME, Args: [6]uint64{1, clockBuf}, Ret: ret, Emulated: emulated})
		f.clockReads = append(f.clockReads, ClockRead{Tid: th.tid, Ns: int64(f.Word64(clockBuf)*1e9 + f.Word64(clockBuf+8)), Trapped: true})
		if th.readsLeft--; th.readsLeft > 0 {
			return
		}
		th.pc++
		return
	}
	f.calls = append(f.calls, Call{Tid: th.tid, Nr: nr, Args: s.args, Ret: ret, Emulated: emulated})
	th.pc++
}

// syscallRip is where a script's syscall stops are: after the syscall
// instruction.
const syscallRip = 0x401002

// clockBuf is where a trapped ReadClock read's timespec goes.
const clockBuf = 0x7f00

// readPage makes one read through the clock page as hermit's vDSO code
// does; false when the read must take the syscall instead.
func (f *Tracer) readPage(th *thread) bool {
	const now, limit, step, reads, base = 0, 8, 16, 24, 64 + 8 // base: CLOCK_MONOTONIC's
	if f.page == nil {
		return false
	}
	word := func(off int) uint64 { return binary.LittleEndian.Uint64(f.page[off:]) }
	v := word(now)
	if word(base) == 0 || v >= word(limit) {
		return false
	}
	binary.LittleEndian.PutUint64(f.page[now:], v+word(step))
	binary.LittleEndian.PutUint64(f.page[reads:], word(reads)+1)
	f.clockReads = append(f.clockReads, ClockRead{Tid: th.tid, Ns: int64(v + word(base))})
	return true
}

// native runs the syscall th is stopped at. It reports whether th goes on
// running its script.
func (f *Tracer) native(th *thread, mode detcore.ResumeMode) bool {
	r := &th.regs
	th.at = atRunning
	var ret int64
	switch th.steps[th.pc].nr {
	case abi.SYS_EXIT:
		f.exit(th, int(r.Rdi))
		return false
	case abi.SYS_EXIT_GROUP:
		f.endGroup(th, detcore.Stop{Kind: detcore.StopExited, Code: int(r.Rdi)})
		return false
	case abi.SYS_READ, abi.SYS_WRITE:
		d := f.fds[int(int32(r.Rdi))]
		if d == nil {
			break
		}
		if d.write {
			d.p.buffered += int(r.Rdx)
			ret = int64(r.Rdx)
			break
		}
		if d.p.buffered == 0 {
			th.blockedIn = fmt.Sprintf("read(%d)", int32(r.Rdi))
			return false
		}
		ret = int64(min(d.p.buffered, int(r.Rdx)))
		d.p.buffered -= int(ret)
	}
	if mode == detcore.ResumeSyscall {
		r.Rax = uint64(ret)
		th.at = atSyscallExit
		f.report(detcore.Stop{Tid: th.tid, Kind: detcore.StopSyscallExit})
		return false
	}
	f.complete(th, ret, false)
	return true
}

// run runs th's script up to its next stop.
func (f *Tracer) run(th *thread) {
	th.at = atRunning
	for ; th.pc < len(th.steps); th.pc++ {
		s := th.steps[th.pc]
		switch s.kind {
		case stepStore:
			f.SetWord(s.addr, s.val)
			continue
		case stepClockRead:
			if th.readsLeft == 0 {
				th.readsLeft = s.n
			}
			for th.readsLeft > 0 && f.readPage(th) {
				th.readsLeft--
			}
			if th.readsLeft == 0 {
				continue
			}
			th.regs = abi.Regs{OrigRax: abi.SYS_CLOCK_GETTIME, Rax: uint64(enosys), Rdi: 1, Rsi: clockBuf}
			th.at = atSyscall
			f.report(detcore.Stop{Tid: th.tid, Kind: detcore.StopSeccomp})
		case stepSyscall:
			th.regs = abi.Regs{OrigRax: uint64(s.nr), Rax: uint64(enosys), Rip: syscallRip,
				Rdi: s.args[0], Rsi: s.args[1], Rdx: s.args[2], R10: s.args[3], R8: s.args[4], R9: s.args[5]}
			th.at = atSyscall
			f.report(detcore.Stop{Tid: th.tid, Kind: detcore.StopSeccomp})
		case stepClone:
			child := f.spawn(s.child)
			if s.flags&abi.CLONE_CHILD_SETTID != 0 {
				f.SetWord(s.ctid, uint32(child.tid))
			}
			if s.flags&abi.CLONE_CHILD_CLEARTID != 0 {
				child.clearTid = s.ctid
			}
			th.regs = abi.Regs{OrigRax: abi.SYS_CLONE, Rax: uint64(child.tid), Rdi: s.flags, R10: s.ctid}
			th.at = atClone
			f.report(detcore.Stop{Tid: th.tid, Kind: detcore.StopClone, Msg: uint64(child.tid), CloneKind: abi.SYS_CLONE})
			f.report(detcore.Stop{Tid: child.tid, Kind: detcore.StopEvent, Sig: abi.SIGSTOP})
		case stepSignal:
			th.at = atSignal
			f.report(detcore.Stop{Tid: th.tid, Kind: detcore.StopSignal, Sig: s.sig})
		}
		return
	}
	f.fail("thread %d ran past the end of its script", th.tid)
}

// exit ends th alone. A leader that leaves before its other threads is
// reported, as by the kernel, only once they are all gone.
func (f *Tracer) exit(th *thread, code int) {
	leader := f.order[0]
	if th == leader && f.others(leader) > 0 {
		th.code = code
		f.clearTid(th)
		th.at = atZombie
		return
	}
	f.gone(th, detcore.Stop{Kind: detcore.StopExited, Code: code})
	if leader.at == atZombie && f.others(leader) == 0 {
		f.gone(leader, detcore.Stop{Kind: detcore.StopExited, Code: leader.code})
	}
}

// others counts the live threads other than th.
func (f *Tracer) others(th *thread) int {
	n := 0
	for _, o := range f.order {
		if o != th && o.at != atGone && o.at != atZombie {
			n++
		}
	}
	return n
}

// endGroup ends every thread with st, as thread by did exit_group or
// took a fatal signal: the threads other than the leader first, in
// creation order, and the leader last.
func (f *Tracer) endGroup(by *thread, st detcore.Stop) {
	ts := append(append([]*thread(nil), f.order[1:]...), f.order[0])
	for _, th := range ts {
		if th.at != atGone {
			th.zapped = th != by
			f.gone(th, st)
		}
	}
}

func (f *Tracer) gone(th *thread, st detcore.Stop) {
	f.clearTid(th)
	th.blockedIn = ""
	th.at = atGone
	st.Tid = th.tid
	f.report(st)
}

func (f *Tracer) clearTid(th *thread) {
	if th.clearTid != 0 {
		f.SetWord(th.clearTid, 0)
		th.clearTid = 0
	}
}

// GetRegs implements detcore.Tracer.GetRegs.
func (f *Tracer) GetRegs(tid int, r *abi.Regs) error {
	th, err := f.live(tid)
	if err != nil {
		return err
	}
	*r = th.regs
	return nil
}

// SetRegs implements detcore.Tracer.SetRegs.
func (f *Tracer) SetRegs(tid int, r *abi.Regs) error {
	th, err := f.live(tid)
	if err != nil {
		return err
	}
	th.regs = *r
	return nil
}

// ReadMem implements detcore.Tracer.ReadMem. Reading a byte never written
// is a fault.
func (f *Tracer) ReadMem(tid int, addr uint64, b []byte) error {
	if _, err := f.live(tid); err != nil {
		return err
	}
	for i := range b {
		v, ok := f.mem[addr+uint64(i)]
		if !ok {
			return fmt.Errorf("detcoretest: thread %d read unmapped address %#x", tid, addr+uint64(i))
		}
		b[i] = v
	}
	return nil
}

// WriteMem implements detcore.Tracer.WriteMem.
func (f *Tracer) WriteMem(tid int, addr uint64, b []byte) error {
	if _, err := f.live(tid); err != nil {
		return err
	}
	f.write(addr, b)
	return nil
}

func (f *Tracer) write(addr uint64, b []byte) {
	for i, v := range b {
		f.mem[addr+uint64(i)] = v
	}
}

func (f *Tracer) read(addr uint64, n int) uint64 {
	var v uint64
	for i := range n {
		v |= uint64(f.mem[addr+uint64(i)]) << (8 * i)
	}
	return v
}

func le(v uint64, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

// SetWord writes the 32-bit word v at addr.
func (f *Tracer) SetWord(addr uint64, v uint32) { f.write(addr, le(uint64(v), 4)) }

// Word reads the 32-bit word at addr.
func (f *Tracer) Word(addr uint64) uint32 { return uint32(f.read(addr, 4)) }

// Word64 returns the 64-bit word at addr.
func (f *Tracer) Word64(addr uint64) uint64 { return f.read(addr, 8) }

// SetTimespec writes d as a struct timespec at addr.
func (f *Tracer) SetTimespec(addr uint64, d time.Duration) {
	f.write(addr, le(uint64(d/time.Second), 8))
	f.write(addr+8, le(uint64(d%time.Second), 8))
}

// Timespec reads the struct timespec at addr.
func (f *Tracer) Timespec(addr uint64) time.Duration {
	return time.Duration(f.read(addr, 8))*time.Second + time.Duration(f.read(addr+8, 8))
}

// Pipe makes r and w the read and write ends of a new, empty pipe.
func (f *Tracer) Pipe(r, w int) {
	p := &pipe{}
	f.fds[r] = &fd{p: p}
	f.fds[w] = &fd{p: p, write: true}
}

// Feed makes n more bytes readable from the pipe of fd, as if the outside
// world wrote them.
func (f *Tracer) Feed(fd, n int) { f.fds[fd].p.buffered += n }

// FdKind implements detcore.Tracer.FdKind: pipes are pollable.
func (f *Tracer) FdKind(tid, fd int) detcore.FdKind {
	if f.fds[fd] != nil {
		return detcore.FdPollable
	}
	return detcore.FdOther
}

// PipeSpace implements detcore.Tracer.PipeSpace: pipes are unbounded.
func (f *Tracer) PipeSpace(tid, fd int) int { return -1 }

// Poll implements detcore.Tracer.Poll. It never sleeps: asked to wait
// with nothing ready, it calls Idle and looks again, and reports nothing
// ready if still nothing is. It fails when asked to wait MaxIdlePolls
// times without a Resume in between.
func (f *Tracer) Poll(ws []detcore.FdWait, timeout time.Duration) ([]bool, error) {
	ready, some := f.ready(ws)
	if timeout == 0 {
		return ready, nil
	}
	if f.waits++; f.waits > MaxIdlePolls {
		return nil, fmt.Errorf("detcoretest: the engine polled %d times without resuming a thread", MaxIdlePolls)
	}
	if some {
		return ready, nil
	}
	f.idlePolls++
	if f.Idle != nil {
		f.Idle()
		ready, _ = f.ready(ws)
	}
	return ready, nil
}

func (f *Tracer) ready(ws []detcore.FdWait) ([]bool, bool) {
	ready := make([]bool, len(ws))
	some := false
	for i, w := range ws {
		d := f.fds[w.Fd]
		ready[i] = d == nil || // POLLNVAL
			w.Events&detcore.POLLOUT != 0 && d.write ||
			w.Events&detcore.POLLIN != 0 && !d.write && d.p.buffered > 0
		some = some || ready[i]
	}
	return ready, some
}

// Signals implements detcore.Tracer.Signals. No signal is ever pending on
// a live thread; a thread killed with its group has SIGKILL pending until
// its exit is reported, as in the kernel.
func (f *Tracer) Signals(tid int) (thread, shared, blocked uint64, err error) {
	th := f.threads[tid]
	if th == nil {
		return 0, 0, 0, fmt.Errorf("detcoretest: no thread %d", tid)
	}
	if th.at == atGone {
		if th.zapped && th.unreported > 0 {
			return 1 << (abi.SIGKILL - 1), 0, 0, nil
		}
		return 0, 0, 0, fmt.Errorf("thread %d: %w", tid, detcore.ErrGone)
	}
	return 0, 0, 0, nil
}

// Caught implements detcore.Tracer.Caught: the fake's guests install no
// signal handlers.
func (f *Tracer) Caught(tid int) (caught, ignored uint64, err error) { return 0, 0, nil }

// Preempt implements detcore.Tracer.Preempt. The fake's threads never run
// long enough to need it: the call fails the run.
func (f *Tracer) Preempt(tid int) error { return f.unmodelled("preemption of thread %d", tid) }

// SharedMapping implements detcore.Tracer.SharedMapping: the fake's
// memory is private.
func (f *Tracer) SharedMapping(tid int, addr uint64) (dev, ino, off uint64, ok bool) {
	return 0, 0, 0, false
}

// ProcStat implements detcore.Tracer.ProcStat. The guest is one process,
// pid 1, in process group 1; it is a zombie ('Z') once its leader has
// exited, until the engine has seen the leader's exit report.
func (f *Tracer) ProcStat(pid int) (state byte, pgrp int, err error) {
	if pid != f.Root() {
		return 0, 0, fmt.Errorf("detcoretest: no process %d", pid)
	}
	switch leader := f.order[0]; {
	case leader.at == atZombie || leader.at == atGone && leader.unreported > 0:
		return 'Z', 1, nil
	case leader.at == atGone:
		return 0, 0, fmt.Errorf("process %d: %w", pid, detcore.ErrGone)
	}
	return 'R', 1, nil
}

// Signal implements detcore.Tracer.Signal. Signals sent by the engine
// (timers) are not modelled: the call fails the run.
func (f *Tracer) Signal(pid, tid, sig int, info []byte) error {
	return f.unmodelled("signal %d to process %d thread %d", sig, pid, tid)
}

// AddTimerfdTicks implements detcore.Tracer.AddTimerfdTicks. Timerfds are
// not modelled: the call fails the run.
func (f *Tracer) AddTimerfdTicks(tid, fd int, n uint64) error {
	return f.unmodelled("timerfd %d ticks", fd)
}

func (f *Tracer) unmodelled(format string, args ...any) error {
	f.fail("not modelled: "+format, args...)
	return f.err
}

// GuestTid implements detcore.Tracer.GuestTid as the identity.
func (f *Tracer) GuestTid(tid int) (int, error) {
	if _, err := f.live(tid); err != nil {
		return 0, err
	}
	return tid, nil
}

// OnExec implements detcore.Tracer.OnExec by recording atRandom; the
// program gets the clock page if UseClockPage was called.
func (f *Tracer) OnExec(tid int, atRandom [16]byte, filtered bool) (detcore.Exec, error) {
	if _, err := f.live(tid); err != nil {
		return detcore.Exec{}, err
	}
	f.atRandom = append(f.atRandom, atRandom)
	if f.page == nil || filtered {
		return detcore.Exec{NoClock: "the fake has no clock page"}, nil
	}
	return detcore.Exec{Clock: detcore.NewClockPage(f.page, nil)}, nil
}

// KillAll implements detcore.Tracer.KillAll.
func (f *Tracer) KillAll() {
	f.endGroup(nil, detcore.Stop{Kind: detcore.StopKilled, Sig: abi.SIGKILL})
}
