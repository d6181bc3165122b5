package detcore

import (
	"math"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// POSIX timers (timer_create and friends) and timerfds, in virtual time.

// sysTimerCreate emulates timer_create(clockid, sevp, timerid).
func sysTimerCreate(e *Engine, t *thread) {
	r := &t.regs
	clock := int(int32(r.Rdi))
	if _, ok := e.now(clock); !ok {
		t.emulate(-abi.EINVAL)
		return
	}
	p := t.proc
	tm := &vtimer{kind: tkPosix, proc: p, id: p.nextTimer, deadline: -1, clock: clock,
		signo: abi.SIGALRM, notify: sigevSignal, value: uint64(p.nextTimer)}
	if src, cpu, found := e.cpuClock(t, clock); cpu {
		if !found {
			t.emulate(-abi.EINVAL)
			return
		}
		tm.cpu = &src
	}
	if r.Rsi != 0 {
		// struct sigevent { sigval value; int signo; int notify; int tid; }
		var b [20]byte
		if e.t.ReadMem(t.tid, r.Rsi, b[:]) != nil {
			t.emulate(-abi.EFAULT)
			return
		}
		tm.value = le64(b[0:])
		tm.signo = int(int32(le32(b[8:])))
		tm.notify = int(int32(le32(b[12:])))
		if tm.notify == sigevThreadID {
			target := e.threadByVtid(int(int32(le32(b[16:]))))
			if target == nil || target.proc != p {
				t.emulate(-abi.EINVAL)
				return
			}
			tm.tid = target.tid
		}
		if tm.notify != sigevNone && (tm.signo < 1 || tm.signo > 64) {
			t.emulate(-abi.EINVAL)
			return
		}
	}
	var id [4]byte
	putLE32(id[:], uint32(tm.id))
	if e.t.WriteMem(t.tid, r.Rdx, id[:]) != nil {
		t.emulate(-abi.EFAULT)
		return
	}
	p.nextTimer++
	e.addTimer(tm)
	t.emulate(0)
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func (e *Engine) threadByVtid(vtid int) *thread {
	for _, t := range e.threads {
		if t.vtid == vtid {
			return t
		}
	}
	return nil
}

// timerArg finds the timer a timer_* or timerfd_* call names in arg 0; nil
// means the call is not about one of the engine's timers.
func (e *Engine) timerArg(t *thread) *vtimer {
	kind := tkPosix
	switch t.nr {
	case abi.SYS_TIMERFD_SETTIME, abi.SYS_TIMERFD_GETTIME:
		kind = tkTimerfd
	}
	return e.timer(t.proc, kind, int(int32(t.regs.Rdi)))
}

// sysTimerSettime emulates timer_settime and timerfd_settime:
// (id, flags, new, old).
func sysTimerSettime(e *Engine, t *thread) {
	tm := e.timerArg(t)
	if tm == nil {
		if t.nr == abi.SYS_TIMER_SETTIME {
			t.emulate(-abi.EINVAL)
		}
		return
	}
	r := &t.regs
	interval, value, ok := e.readPair(t, r.Rdx, 1)
	if !ok {
		t.emulate(-abi.EFAULT)
		return
	}
	oldI, oldV := tm.interval, e.remaining(tm)
	if !e.writePair(t, r.R10, 1, oldI, oldV) {
		t.emulate(-abi.EFAULT)
		return
	}
	e.arm(tm, value, interval, r.Rsi&abi.TIMER_ABSTIME != 0)
	if tm.kind == tkTimerfd && tm.fired && !e.cfg.OldTimerfdSettime {
		// Setting it (arming, disarming) drops the expirations not
		// read yet, and the descriptor is no longer readable: BEAM
		// re-arms its timerfd without reading it, and its epoll_wait
		// returned at once, again and again. (One that has not fired
		// since it was last set has none: no syscalls to ask.)
		tm.fired = false
		_ = e.t.AddTimerfdTicks(t.tid, tm.id, 0)
	}
	t.emulate(0)
}

// sysTimerGettime emulates timer_gettime and timerfd_gettime: (id, cur).
func sysTimerGettime(e *Engine, t *thread) {
	tm := e.timerArg(t)
	if tm == nil {
		if t.nr == abi.SYS_TIMER_GETTIME {
			t.emulate(-abi.EINVAL)
		}
		return
	}
	if !e.writePair(t, t.regs.Rsi, 1, tm.interval, e.remaining(tm)) {
		t.emulate(-abi.EFAULT)
		return
	}
	t.emulate(0)
}

func sysTimerGetoverrun(e *Engine, t *thread) {
	tm := e.timerArg(t)
	if tm == nil {
		t.emulate(-abi.EINVAL)
		return
	}
	if e.cfg.OldTimerOverrun {
		t.emulate(0)
		return
	}
	e.timerTaken(tm)
	t.emulate(min(tm.lastOverrun, math.MaxInt32)) // DELAYTIMER_MAX
}

// Overruns. The kernel queues one signal of a POSIX timer at a time:
// while it is pending (blocked, say), the timer's expirations are counted
// as overruns, which timer_getoverrun says once the signal is taken. Here
// the engine sends the signal; it looks whether the last one is still
// pending instead.

// timerOverrun reports whether tm's expiration (ticks of them at once)
// only counts, its last signal still pending; otherwise the signal it
// sends next carries ticks-1 overruns.
func (e *Engine) timerOverrun(tm *vtimer, ticks int64) bool {
	if tm.sent {
		if e.timerSignalPending(tm) {
			tm.overrun += ticks
			return true
		}
		tm.lastOverrun = tm.overrun // taken since: one look tells both
	}
	tm.sent, tm.overrun = true, ticks-1
	return false
}

// timerTaken notes that tm's last signal was taken, if it was: its
// overruns become those timer_getoverrun says.
func (e *Engine) timerTaken(tm *vtimer) {
	if tm.sent && !e.timerSignalPending(tm) {
		tm.lastOverrun, tm.overrun, tm.sent = tm.overrun, 0, false
	}
}

// timerSignalPending says whether tm's signal is pending at its target.
func (e *Engine) timerSignalPending(tm *vtimer) bool {
	tid := tm.tid
	if tid == 0 {
		if len(tm.proc.threads) == 0 {
			return false
		}
		tid = tm.proc.threads[0].tid
	}
	own, shared, _, err := e.t.Signals(tid)
	return err == nil && (own|shared)&(1<<(tm.signo-1)) != 0
}

func sysTimerDelete(e *Engine, t *thread) {
	tm := e.timerArg(t)
	if tm == nil {
		t.emulate(-abi.EINVAL)
		return
	}
	delete(e.timers, timerKey{tm.proc, tm.kind, tm.id})
	t.emulate(0)
}

// sysTimerfdCreate lets the kernel make the timerfd (a real descriptor the
// guest can read and poll) and registers it when the call returns; the
// kernel's timer is never armed.
func sysTimerfdCreate(e *Engine, t *thread) {
	clock := int(int32(t.regs.Rdi))
	t.act = actExitStop
	t.onExit = func(e *Engine, t *thread) {
		fd := int(int64(t.regs.Rax))
		if fd < 0 {
			return
		}
		e.addTimer(&vtimer{kind: tkTimerfd, proc: t.proc, id: fd, deadline: -1, clock: clock})
	}
}

// dropTimers forgets the timers of a process that has exited.
func (e *Engine) dropTimers(p *process) {
	e.lateTimer(p)
	for k := range e.timers {
		if k.proc == p {
			delete(e.timers, k)
		}
	}
}
