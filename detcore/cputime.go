package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// CPU time, in virtual time. A thread is charged the virtual time that
// passes while it runs: the quantum of each turn it is given, and the
// clock page's steps for the reads it makes there (or the trapped rdtsc
// it executes). Time that passes while every thread waits (a sleep, a
// timer) is no one's, as natively. A process's time is its threads',
// those that exited included; a forked child starts at zero.

// charge adds d of virtual time to t's CPU time (t nil: no one's).
func (t *thread) charge(d int64) {
	if t != nil && d > 0 {
		t.cpu += d
	}
}

// cpuTime returns p's CPU time in ns.
func (p *process) cpuTime() int64 {
	ns := p.cpuGone
	for _, t := range p.threads {
		ns += t.cpu
	}
	return ns
}

// cpuSource is a CPU-time clock: a thread's, or (thread nil) a process's.
type cpuSource struct {
	proc   *process
	thread *thread
}

// ns returns the clock's value: a thread that has exited keeps the time
// it had.
func (c cpuSource) ns() int64 {
	if c.thread != nil {
		return c.thread.cpu
	}
	return c.proc.cpuTime()
}

// cpuClock returns the CPU-time clock id names as thread t reads it, and
// whether id is such a clock: CLOCK_PROCESS_CPUTIME_ID,
// CLOCK_THREAD_CPUTIME_ID or one clock_getcpuclockid and
// pthread_getcpuclockid make (~pid << 3 | which, with 4 for a thread;
// pid 0 is the caller). cpu true and found false: a clock of no such
// process or thread.
func (e *Engine) cpuClock(t *thread, id int) (src cpuSource, cpu, found bool) {
	switch {
	case id == clockProcessCputime:
		return cpuSource{proc: t.proc}, true, true
	case id == clockThreadCputime:
		return cpuSource{proc: t.proc, thread: t}, true, true
	case id >= 0 || id&3 == 3:
		return cpuSource{}, false, false // not a CPU clock (3: a descriptor's)
	}
	pid := ^(id >> 3)
	if id&4 != 0 {
		if pid == 0 {
			return cpuSource{proc: t.proc, thread: t}, true, true
		}
		for _, o := range e.order {
			if o.vtid == pid {
				return cpuSource{proc: o.proc, thread: o}, true, true
			}
		}
		return cpuSource{}, true, false
	}
	if pid == 0 {
		return cpuSource{proc: t.proc}, true, true
	}
	for _, o := range e.order {
		if o.proc.vpid == pid {
			return cpuSource{proc: o.proc}, true, true
		}
	}
	return cpuSource{}, true, false
}

// cpuClockGettime answers clock_gettime of a CPU-time clock, and reports
// whether the clock was one.
func cpuClockGettime(e *Engine, t *thread) bool {
	src, cpu, found := e.cpuClock(t, int(int32(t.regs.Rdi)))
	switch {
	case !cpu:
		return false
	case !found:
		t.emulate(-abi.EINVAL)
	default:
		e.reply(t, t.regs.Rsi, timespecBytes(src.ns()), 0)
	}
	return true
}
