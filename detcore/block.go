package detcore

import (
	"fmt"
	"strings"

	"github.com/hermitdbg/hermit/detcore/abi"
)

type blockKind int

const (
	bkFutex  blockKind = iota // woken by a futex wake
	bkFd                      // waits until one of fds is ready
	bkChild                   // wait4/waitid: retried when a child changes state
	bkSleep                   // waits for its deadline only
	bkSignal                  // pause, sigsuspend, sigtimedwait
	bkRetry                   // retries its call after another thread's turn (kwait.go)
	bkSpin                    // spins until memory it reads changes (spin.go)
)

// blocker describes what a blocked thread waits for.
type blocker struct {
	kind   blockKind
	key    futexKey
	bitset uint32
	fds    []FdWait
	epoch  uint64
	// deadline is the logical time at which the wait times out; -1: never.
	deadline int64
	// onTimeout sets the thread's result when the deadline passes.
	onTimeout func(e *Engine, t *thread)
	// check, for bkChild, says whether the wait is over; nil means the
	// thread was rewound and retries its call whenever a child changes.
	// For bkRetry, it says whether a thread that waits at its call (not
	// rewound) may go on, looked at after every other thread's turn.
	check func(e *Engine) bool
	// onReady, when set, prepares a bkChild, bkFd or bkRetry thread whose
	// wait is over.
	onReady func(e *Engine, t *thread)
	// wakeMask, when set, returns the signals that end this wait given the
	// thread's blocked mask; by default every unblocked signal does.
	wakeMask func(blocked uint64) uint64
	// rem, for a relative sleep, is where the call writes the time left
	// when a signal interrupts it.
	rem uint64
	// onSignal, when set, prepares the thread when a signal ends its wait
	// (instead of letting its syscall run natively).
	onSignal func(e *Engine, t *thread)
	// onInterrupt, when set, is called as a signal ends the wait and
	// the call runs natively, for the kernel to interrupt it (the
	// virtual time left of a select, timeLeft).
	onInterrupt func(e *Engine, t *thread)
}

// emulate makes t skip its syscall and return ret.
func (t *thread) emulate(ret int64) {
	t.act = actEmulate
	t.ret = ret
}

func emulateResult(ret int64) func(*Engine, *thread) {
	return func(_ *Engine, t *thread) { t.emulate(ret) }
}

// blockOn parks t until b is satisfied. A signal that must interrupt the
// call is noticed when the scheduler next looks at t (see wake): then the
// syscall runs natively and the kernel interrupts it as it would without
// hermit.
func (e *Engine) blockOn(t *thread, b *blocker) {
	t.block = b
	t.state = tsBlocked
	if b.wakeMask != nil {
		// Signals already pending were looked at under another mask
		// (sigtimedwait takes blocked ones): look again.
		t.sigChecked = 0
	}
	if b.kind == bkFutex {
		e.futexes[b.key] = append(e.futexes[b.key], t)
	}
}

// unblock removes t from whatever wait it is in.
func (e *Engine) unblock(t *thread) {
	b := t.block
	if b == nil {
		return
	}
	if b.kind == bkFutex {
		ws := e.futexes[b.key]
		for i, w := range ws {
			if w == t {
				e.setWaiters(b.key, append(ws[:i:i], ws[i+1:]...))
				break
			}
		}
	}
	t.block = nil
	if t.state == tsBlocked {
		t.state = tsReady
	}
}

// wake reports whether blocked thread t can run now, and sets how.
func (e *Engine) wake(t *thread) bool {
	b := t.block
	timedOut := b.deadline >= 0 && e.clock >= b.deadline
	if timedOut && b.kind == bkSignal {
		// A signal already pending ends the wait whatever its timeout
		// (sigtimedwait with a zero timeout polls for one).
		if pending := e.signalEnds(t, b); pending != 0 {
			return e.signalWake(t, b, pending)
		}
	}
	if timedOut {
		e.unblock(t)
		if b.onTimeout != nil {
			b.onTimeout(e, t)
		}
		return true
	}
	switch b.kind {
	case bkFd:
		if len(b.fds) > 0 && b.fds[0].Signals {
			// A signalfd is readable as a signal is pending: the
			// pending signals are looked at first, so that a recording
			// keeps one from outside (the signals answer), and its
			// replay sends it there, for the guest's read to find.
			if pending := e.signalEnds(t, b); pending != 0 {
				return e.signalWake(t, b, pending)
			}
		}
		ready, err := e.t.Poll(b.fds, 0)
		if err != nil {
			// The descriptor went away: let the syscall report it.
			e.unblock(t)
			t.act = actCont
			return true
		}
		for _, r := range ready {
			if r {
				e.unblock(t)
				t.act = actCont
				if b.onReady != nil {
					b.onReady(e, t)
				}
				return true
			}
		}
	case bkRetry:
		if uint64(e.result.Stats.Turns) != b.epoch {
			if b.check != nil && !b.check(e) {
				b.epoch = uint64(e.result.Stats.Turns)
				break
			}
			e.unblock(t)
			t.act = actCont
			if b.onReady != nil {
				b.onReady(e, t)
			}
			return true
		}
	case bkSpin:
		if b.check(e) {
			e.unblock(t)
			t.act = actCont
			return true
		}
	case bkChild:
		if e.childEpoch != b.epoch {
			b.epoch = e.childEpoch
			if b.check == nil || b.check(e) {
				e.unblock(t)
				t.act = actCont
				if b.onReady != nil {
					b.onReady(e, t)
				}
				return true
			}
		}
	}
	if pending := e.signalEnds(t, b); pending != 0 {
		return e.signalWake(t, b, pending)
	}
	return false
}

// signalWake wakes blocked thread t, whose wait b the pending signals end
// (signalEnds), and reports whether it may run.
func (e *Engine) signalWake(t *thread, b *blocker, pending uint64) bool {
	if pending&^stopSignals == 0 && t.atSyscall && !e.catches(t, pending) {
		// Only a stop is pending: the threads of the process join
		// it without their calls, which they make again once
		// continued. All of them at once: which one takes the
		// signal is then the kernel's affair, not the schedule's.
		for _, o := range t.proc.threads {
			e.joinStop(o)
		}
		return false
	}
	// The call runs natively and the kernel interrupts it. Another
	// thread of the process woken by the same signal for the whole
	// process may take it first: sigTaken looks again before it runs.
	e.unblock(t)
	t.act = actCont
	if b.onInterrupt != nil {
		b.onInterrupt(e, t)
	}
	if b.onSignal != nil {
		b.onSignal(e, t)
		return true
	}
	if pending&t.sigOwn == 0 && !e.cfg.OldSignalWake {
		t.sigWoken, t.sigShared = b, pending
		if b.kind == bkFutex && !e.cfg.OldSigWokenFutex {
			e.sigWoken = append(e.sigWoken, t)
		}
	}
	if b.kind == bkSleep && b.rem != 0 {
		// The kernel writes the time left of its own, native sleep;
		// the guest must see the virtual time left of its wait.
		t.act = actExitStop
		t.onExit = remainingSleep(b.rem, b.deadline)
	}
	return true
}

// sigTaken reports whether thread t, about to run because signals for
// its whole process ended its wait, finds them gone (another thread of
// the process took them), and if so puts it back in that wait: run, its
// call would wait in the kernel, with no signal to end it, while the
// engine waited for its next stop (a Go server's SIGTERM, taken by the
// thread in epoll_pwait while the main thread was woken in a futex wait,
// was lost until a second one). A futex wake made in between has woken it
// (futexSigWoken).
func (e *Engine) sigTaken(t *thread) bool {
	b := t.sigWoken
	if b == nil {
		return false
	}
	t.sigWoken = nil
	e.dropSigWoken(t)
	own, shared, _, err := e.waitSignals(t.tid)
	if err != nil || (own|shared)&t.sigShared != 0 {
		return false
	}
	t.onExit = nil
	e.blockOn(t, b)
	return true
}

// couldWake reports whether blocked thread t's wait is over, as wake
// would find it, without changing any state: the watchdog's question,
// asked between scheduling points. A pending signal is not looked at.
func (e *Engine) couldWake(t *thread) bool {
	b := t.block
	if b.deadline >= 0 && e.clock >= b.deadline {
		return true
	}
	switch b.kind {
	case bkFd:
		ready, err := e.t.Poll(b.fds, ProbeOnly)
		if err != nil {
			return true
		}
		for _, r := range ready {
			if r {
				return true
			}
		}
	case bkRetry:
		// Its check may ask the host a question a recording keeps
		// (a FIFO's other end): not asked here.
		return b.check == nil
	case bkSpin:
		return b.check == nil || b.check(e)
	case bkChild:
		return e.childEpoch != b.epoch && (b.check == nil || b.check(e))
	}
	return false
}

// remainingSleep writes, at the exit of a sleep a signal interrupted, the
// virtual time left until deadline into the timespec at rem.
func remainingSleep(rem uint64, deadline int64) func(e *Engine, t *thread) {
	return func(e *Engine, t *thread) {
		switch ret := int64(t.regs.Rax); ret {
		case -abi.EINTR, -abi.ERESTART_RESTARTBLOCK:
			_ = e.t.WriteMem(t.tid, rem, timespecBytes(max(0, deadline-e.clock)))
		}
	}
}

// catches reports whether t's process has a handler for one of sigs (a
// stop signal it catches stops nothing: its handler runs, as for any
// other signal).
func (e *Engine) catches(t *thread, sigs uint64) bool {
	caught, _, err := e.t.Caught(t.tid)
	return err == nil && caught&sigs != 0
}

// stopSignals are the signals that stop a process by default.
const stopSignals = 1<<(abi.SIGSTOP-1) | 1<<(abi.SIGTSTP-1) | 1<<(abi.SIGTTIN-1) | 1<<(abi.SIGTTOU-1)

// signalEnds returns t's pending signals that end wait b (0: none): one
// for t itself or, since a thread resumed from a ptrace stop recomputes
// its pending state, one for its process. It reads the thread's signal
// state only when a signal may have been sent since it last looked.
func (e *Engine) signalEnds(t *thread, b *blocker) uint64 {
	if t.sigChecked == e.sigEpoch+1 {
		return 0
	}
	t.sigChecked = e.sigEpoch + 1
	own, shared, blocked, err := e.waitSignals(t.tid)
	if err != nil || own|shared == 0 {
		return 0
	}
	// Seen pending here, a signal from outside is in a recording
	// already (outsidesig.go).
	t.seen |= own | shared
	wake := ^blocked
	if b.wakeMask != nil {
		wake = b.wakeMask(blocked)
	}
	ends := (own | shared) & (wake | 1<<(abi.SIGSTOP-1))
	if ends != 0 {
		ends &^= e.discarded(t.tid, blocked)
	}
	t.sigOwn = own
	return ends
}

// defaultIgnored are the signals whose default action is to ignore them.
const defaultIgnored = 1<<(abi.SIGCHLD-1) | 1<<(abi.SIGCONT-1) | 1<<(abi.SIGURG-1) | 1<<(abi.SIGWINCH-1)

// discarded returns the signals the kernel would throw away when sent to
// thread tid, which blocks blocked: those its process ignores, with
// SIG_IGN or by default, and tid does not block. The kernel discards no
// signal of a traced thread but SIGKILL: it stays pending and would
// interrupt the thread's calls, as it never does natively.
func (e *Engine) discarded(tid int, blocked uint64) uint64 {
	caught, ignored, err := e.t.Caught(tid)
	if err != nil {
		return 0
	}
	return ignoring(caught, ignored) &^ blocked
}

// ignoring returns the signals a process that catches caught and sets
// ignored to SIG_IGN ignores.
func ignoring(caught, ignored uint64) uint64 { return ignored | defaultIgnored&^caught }

// WaitSignalsTracer is implemented by tracers that keep (hermit record)
// or give back (replay) their answers about the signals pending at a
// thread that waits, which the engine asks each time a signal may have
// been sent since it last looked: one from outside comes when it comes,
// and the answer is an input of the run. The answer leaves out of the
// thread's own pending signals those in drop (the watchdog's).
type WaitSignalsTracer interface {
	WaitSignals(tid int, drop uint64) (own, shared, blocked uint64, err error)
}

// waitSignals is signals for a thread that waits (WaitSignalsTracer).
func (e *Engine) waitSignals(tid int) (own, shared, blocked uint64, err error) {
	wt, ok := e.t.(WaitSignalsTracer)
	if !ok {
		return e.signals(tid)
	}
	return wt.WaitSignals(tid, e.onItsWay(tid))
}

// signals is Tracer.Signals without the watchdog's own SIGSTOP, sent to
// the thread alone, which can be pending at a thread that reached a
// syscall stop before it: no signal of the guest's.
func (e *Engine) signals(tid int) (own, shared, blocked uint64, err error) {
	own, shared, blocked, err = e.t.Signals(tid)
	return own &^ e.onItsWay(tid), shared, blocked, err
}

// onItsWay is the watchdog's own SIGSTOP, if it is on its way to tid.
func (e *Engine) onItsWay(tid int) uint64 {
	if e.stopOnItsWay(tid) {
		return 1 << (abi.SIGSTOP - 1)
	}
	return 0
}

// nextDeadline returns the earliest deadline of a blocked thread or timer.
func (e *Engine) nextDeadline() (int64, bool) {
	best, ok := e.nextTimer()
	if e.orphanEnd >= 0 && (!ok || e.orphanEnd < best) {
		best, ok = e.orphanEnd, true
	}
	for _, t := range e.threads {
		if t.state == tsBlocked && t.block.deadline >= 0 && (!ok || t.block.deadline < best) {
			best, ok = t.block.deadline, true
		}
	}
	return best, ok
}

// readDeadline reads a struct timespec at addr and turns it into a logical
// deadline. An absolute timespec is read against the virtual clock.
func (e *Engine) readDeadline(t *thread, addr uint64, absolute bool, clock int) (int64, bool) {
	var b [16]byte
	if e.t.ReadMem(t.tid, addr, b[:]) != nil {
		return 0, false
	}
	ns := int64(le64(b[0:]))*1e9 + int64(le64(b[8:]))
	if absolute {
		now, ok := e.now(clock)
		if !ok {
			return 0, false
		}
		ns -= now
	}
	return e.clock + max(ns, 0), true
}

// relDeadline returns the logical deadline ms milliseconds from now, or -1
// for a negative (infinite) timeout.
func (e *Engine) relDeadline(ms int64) int64 {
	if ms < 0 {
		return -1
	}
	return e.clock + ms*1e6
}

var _ = abi.SIGKILL

// reply emulates t's syscall: it writes b at addr in the guest and returns
// ret, or -EFAULT if addr cannot be written.
func (e *Engine) reply(t *thread, addr uint64, b []byte, ret int64) {
	if e.t.WriteMem(t.tid, addr, b) != nil {
		t.emulate(-abi.EFAULT)
		return
	}
	t.emulate(ret)
}

func (e *Engine) describeBlocked() string {
	var parts []string
	for _, t := range e.ordered() {
		desc := "ready"
		switch t.state {
		case tsStopped:
			desc = "stopped by a signal"
		case tsTraced:
			desc = "stopped for its tracer"
		}
		if t.state == tsBlocked {
			desc = abi.SyscallName(t.nr)
			if t.block.kind == bkSpin {
				st, _ := e.t.(SpinTracer)
				desc = "spinning at " + where(st, t.tid, t.spinAt)
			}
			if t.block.kind == bkFutex {
				// The address it waits at, as strace shows it (a
				// shared word's key has its offset in the object).
				desc += fmt.Sprintf("(%#x)", t.regs.Rdi)
			}
		}
		parts = append(parts, fmt.Sprintf("thread %d %s", t.vtid, desc))
	}
	return strings.Join(parts, ", ")
}
