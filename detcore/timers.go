package detcore

import (
	"fmt"
	"sort"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Timers in virtual time: alarm, setitimer, POSIX timers (timer_create)
// and timerfds live in the engine, never in the kernel. A timer expires
// when the logical clock passes its deadline — at a scheduling point, or
// because every thread waits and time jumps to it — so its signal or its
// timerfd tick arrives at the same point of every run. A timer on a
// CPU-time clock (ITIMER_VIRTUAL, ITIMER_PROF, a POSIX timer on a
// process's or thread's CPU clock) counts the virtual time charged to
// what it measures (cputime.go) instead: it expires at the scheduling
// point where that passes its deadline, and never while its process only
// waits.

// Timer kinds.
const (
	tkItimer  = iota // alarm and setitimer: one per process and which
	tkPosix          // timer_create
	tkTimerfd        // timerfd_create
)

// sigevent notify values from <asm-generic/siginfo.h>.
const (
	sigevSignal   = 0
	sigevNone     = 1
	sigevThreadID = 4
	siTimer       = -2 // SI_TIMER
)

// vtimer is one timer.
type vtimer struct {
	kind int
	proc *process
	id   int // itimer which, POSIX timer id or timerfd fd
	seq  int // creation order: ties between equal deadlines
	// deadline is the time of the next expiry, on the logical clock or,
	// for a timer on a CPU-time clock, on cpu; -1: disarmed.
	deadline, interval int64
	clock              int
	cpu                *cpuSource
	// For signals: the signal, the thread (host tid; 0: the process) and
	// the sigevent value.
	signo  int
	tid    int
	value  uint64
	notify int
	// armedAt and armedWall are the virtual and the real time it was
	// last armed (lateTimer).
	armedAt   int64
	armedWall time.Time
	// fired: a timerfd got expirations since it was last set, which
	// setting it again drops.
	fired bool
	// A POSIX timer's signal: sent, it may still be pending; overrun
	// counts the expirations since, and lastOverrun is what
	// timer_getoverrun says (timerOverrun).
	sent                 bool
	overrun, lastOverrun int64
}

// timerKey finds a timer.
type timerKey struct {
	proc *process
	kind int
	id   int
}

func (e *Engine) timer(p *process, kind, id int) *vtimer {
	return e.timers[timerKey{p, kind, id}]
}

func (e *Engine) addTimer(tm *vtimer) {
	e.timerSeq++
	tm.seq = e.timerSeq
	e.timers[timerKey{tm.proc, tm.kind, tm.id}] = tm
}

// timeOf returns the time on tm's clock: the logical clock, or the CPU
// time it counts.
func (e *Engine) timeOf(tm *vtimer) int64 {
	if tm.cpu != nil {
		return tm.cpu.ns()
	}
	return e.clock
}

// nextTimer returns the earliest armed deadline on the logical clock (a
// timer on a CPU-time clock has none: its time does not pass while every
// thread waits).
func (e *Engine) nextTimer() (int64, bool) {
	best, ok := int64(0), false
	for _, tm := range e.timers {
		if tm.deadline >= 0 && tm.cpu == nil && (!ok || tm.deadline < best) {
			best, ok = tm.deadline, true
		}
	}
	return best, ok
}

// cpuTimerDue returns how much more CPU time t may use before a timer on
// a CPU-time clock that counts it (its own, or its process's) expires, in
// ns (at least 1); 0 when no such timer is armed.
func (e *Engine) cpuTimerDue(t *thread) int64 {
	best := int64(0)
	for _, tm := range e.timers {
		if tm.deadline < 0 || tm.cpu == nil || tm.cpu.proc != t.proc || tm.cpu.thread != nil && tm.cpu.thread != t {
			continue
		}
		if d := max(tm.deadline-tm.cpu.ns(), 1); best == 0 || d < best {
			best = d
		}
	}
	return best
}

// fireTimers expires, in deadline order, every timer whose deadline has
// passed.
func (e *Engine) fireTimers() {
	var due []*vtimer
	for _, tm := range e.timers {
		if tm.deadline >= 0 && tm.deadline <= e.timeOf(tm) {
			due = append(due, tm)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if due[i].cpu == nil && due[j].cpu == nil && due[i].deadline != due[j].deadline {
			return due[i].deadline < due[j].deadline
		}
		return due[i].seq < due[j].seq
	})
	for _, tm := range due {
		ticks := int64(1)
		if tm.interval > 0 {
			ticks += (e.timeOf(tm) - tm.deadline) / tm.interval
			tm.deadline += ticks * tm.interval
		} else {
			tm.deadline = -1
		}
		e.expire(tm, ticks)
	}
}

func (e *Engine) expire(tm *vtimer, ticks int64) {
	if len(tm.proc.threads) == 0 {
		return
	}
	e.digest.add(-4, int64(tm.proc.vpid), int64(tm.kind), int64(tm.id))
	if tm.kind != tkTimerfd && tm.notify != sigevNone && e.ignores(tm) {
		return
	}
	switch {
	case tm.kind == tkTimerfd:
		tm.fired = true
		_ = e.t.AddTimerfdTicks(tm.proc.threads[0].tid, tm.id, uint64(ticks))
	case tm.kind == tkItimer:
		// From the kernel (SI_KERNEL, no sender: Go's profiler tells
		// setitimer's SIGPROF from its per-thread timers' by it), to
		// the thread whose time expired it: for a CPU-time one the one
		// that ran last, if it is the process's, as the kernel's goes to
		// the thread that is running.
		t := tm.proc.threads[0]
		if tm.cpu != nil && e.last != nil && e.last.proc == tm.proc && e.last.state != tsDying {
			t = e.last
		}
		e.sendAs(t, tm.signo, siKernel)
	case tm.notify == sigevNone:
		return
	default:
		if !e.cfg.OldTimerOverrun && e.timerOverrun(tm, ticks) {
			return
		}
		// struct siginfo for SI_TIMER: signo, errno, code, then timer id,
		// overrun and the sigevent value.
		var info [128]byte
		putLE32(info[0:], uint32(tm.signo))
		putLE32(info[8:], uint32(siTimerCode))
		putLE32(info[16:], uint32(tm.id))
		putLE32(info[20:], uint32(ticks-1))
		putLE64(info[24:], tm.value)
		_ = e.signal(tm.proc.pid, tm.tid, tm.signo, info[:])
	}
	e.sigEpoch++
}

// ignores reports whether the kernel would discard tm's signal: its
// target ignores it (not sent, it would stay pending at a traced thread
// and cut short the call it waits in).
func (e *Engine) ignores(tm *vtimer) bool {
	tid := tm.tid
	if tid == 0 || tm.kind == tkItimer {
		tid = tm.proc.threads[0].tid
	}
	// A timer's signal is most often caught: then one read tells.
	bit := uint64(1) << (tm.signo - 1)
	caught, ignored, err := e.t.Caught(tid)
	if err != nil || ignoring(caught, ignored)&bit == 0 {
		return false
	}
	_, _, blocked, err := e.t.Signals(tid)
	return err == nil && blocked&bit == 0
}

func putLE32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// remaining returns how long until tm expires (0 when disarmed).
func (e *Engine) remaining(tm *vtimer) int64 {
	if tm == nil || tm.deadline < 0 {
		return 0
	}
	return max(tm.deadline-e.timeOf(tm), 1)
}

// arm sets tm from a value and interval in ns (value 0 disarms); an
// absolute value is a time on tm's clock.
func (e *Engine) arm(tm *vtimer, value, interval int64, absolute bool) {
	tm.interval = interval
	base := e.timeOf(tm)
	switch {
	case value == 0:
		tm.deadline = -1
	case absolute && tm.cpu != nil:
		tm.deadline = max(value, base)
	case absolute:
		now, _ := e.now(tm.clock)
		tm.deadline = base + max(value-now, 0)
	default:
		tm.deadline = base + value
	}
	if tm.deadline >= 0 {
		tm.armedAt, tm.armedWall = base, time.Now()
	}
}

// lateTimer notes, the first time, that p exits with a signal timer
// still armed that would have fired natively by now: more real time has
// passed since it was armed than it was set for. Computation between
// calls takes no virtual time, so a loop that computes until a timer's
// signal comes (alarm(1) beside a counting loop) sees it only after its
// calls add up the time. The note is a warning only if the guest fails
// (reportStarved): a timeout armed as a safety net, still pending at a
// successful exit, needs no word.
func (e *Engine) lateTimer(p *process) {
	if e.late != "" {
		return
	}
	for _, tm := range e.timers {
		if tm.proc != p || tm.deadline < 0 || !tm.signals() {
			continue
		}
		set := time.Duration(tm.deadline - tm.armedAt)
		if time.Since(tm.armedWall) <= set {
			continue
		}
		// The real time is not named: the warning is the same on every
		// run, as the rest of hermit's output.
		e.late = fmt.Sprintf("the guest failed, and process %d exited with %s armed for %v, unexpired: more real time than that had passed since it was set, "+
			"but only %v of virtual time, which moves at syscalls: with no PMU to count instructions, computation between calls takes no virtual time, "+
			"so a timer fires only as the calls made add up to it", p.vpid, timerName(tm), set, time.Duration(e.timeOf(tm)-tm.armedAt))
		return
	}
}

// signals reports whether tm sends a signal when it expires (a timerfd
// and a POSIX timer with SIGEV_NONE do not).
func (tm *vtimer) signals() bool {
	return tm.kind != tkTimerfd && (tm.kind != tkPosix || tm.notify != sigevNone)
}

// timerName names tm in a warning.
func timerName(tm *vtimer) string {
	if tm.kind == tkPosix {
		return fmt.Sprintf("a POSIX timer (signal %d)", tm.signo)
	}
	return [3]string{"alarm/ITIMER_REAL (SIGALRM)", "ITIMER_VIRTUAL (SIGVTALRM)", "ITIMER_PROF (SIGPROF)"}[tm.id]
}

// Time structures: timeval {sec, usec} and timespec {sec, nsec}; an
// itimerval or itimerspec is {interval, value}.
func (e *Engine) readPair(t *thread, addr uint64, unit int64) (interval, value int64, ok bool) {
	var b [32]byte
	if e.t.ReadMem(t.tid, addr, b[:]) != nil {
		return 0, 0, false
	}
	interval = int64(le64(b[0:]))*1e9 + int64(le64(b[8:]))*unit
	value = int64(le64(b[16:]))*1e9 + int64(le64(b[24:]))*unit
	return interval, value, true
}

func (e *Engine) writePair(t *thread, addr uint64, unit, interval, value int64) bool {
	if addr == 0 {
		return true
	}
	var b [32]byte
	putLE64(b[0:], uint64(interval/1e9))
	putLE64(b[8:], uint64(interval%1e9/unit))
	putLE64(b[16:], uint64(value/1e9))
	putLE64(b[24:], uint64(value%1e9/unit))
	return e.t.WriteMem(t.tid, addr, b[:]) == nil
}

// itimerSignals are the signals of ITIMER_REAL, _VIRTUAL and _PROF. The
// last two count the process's CPU time (hermit charges no system time
// apart: both count all of it).
var itimerSignals = [3]int{abi.SIGALRM, 26, 27}

func (e *Engine) itimer(t *thread, which int) *vtimer {
	tm := e.timer(t.proc, tkItimer, which)
	if tm == nil {
		tm = &vtimer{kind: tkItimer, proc: t.proc, id: which, deadline: -1,
			clock: clockMonotonic, signo: itimerSignals[which]}
		if which != 0 {
			tm.clock = clockProcessCputime
			tm.cpu = &cpuSource{proc: t.proc}
		}
		e.addTimer(tm)
	}
	return tm
}

func sysAlarm(e *Engine, t *thread) {
	tm := e.itimer(t, 0)
	left := e.remaining(tm)
	e.arm(tm, int64(uint32(t.regs.Rdi))*1e9, 0, false)
	// alarm returns the seconds left, rounded up.
	t.emulate((left + 1e9 - 1) / 1e9)
}

func sysSetitimer(e *Engine, t *thread) {
	which := int(int32(t.regs.Rdi))
	if which < 0 || which > 2 {
		t.emulate(-abi.EINVAL)
		return
	}
	tm := e.itimer(t, which)
	oldI, oldV := tm.interval, e.remaining(tm)
	if t.nr == abi.SYS_SETITIMER && t.regs.Rsi != 0 {
		interval, value, ok := e.readPair(t, t.regs.Rsi, 1000)
		if !ok {
			t.emulate(-abi.EFAULT)
			return
		}
		e.arm(tm, value, interval, false)
	}
	out := t.regs.Rdx // setitimer's old value
	if t.nr == abi.SYS_GETITIMER {
		out = t.regs.Rsi
	}
	if !e.writePair(t, out, 1000, oldI, oldV) {
		t.emulate(-abi.EFAULT)
		return
	}
	t.emulate(0)
}

// siTimerCode is SI_TIMER as the 32-bit field holds it.
var siTimerCode = func() uint32 { v := int32(siTimer); return uint32(v) }()
