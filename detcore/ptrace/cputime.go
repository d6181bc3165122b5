package ptrace

import (
	"encoding/binary"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// taskClocks holds a perf task-clock counter per guest thread: a
// software event, which needs no PMU, that counts the thread's time on a
// CPU. Read while the thread runs, the kernel brings it up to date on
// that CPU first, so it is exact to the microsecond. The kernel's other
// measures of another thread's CPU time (/proc/TID/schedstat, a
// process's CPU clock) count a running thread's time only at the
// scheduler's tick: 4 ms here, twice the budget of a thread found
// spinning before, which the watchdog then found spent up to 6 ms late.
type taskClocks struct {
	mu  sync.Mutex
	fds map[int]int
	// off: perf_event_open is refused (a container's seccomp profile,
	// perf_event_paranoid), and the process clock stands in.
	off bool
}

// CPUTime implements detcore.CPUTimeTracer: thread tid's task clock, or,
// where perf events are refused, the CPU-time clock of its process pid
// (CPUCLOCK_SCHED, ~pid<<3|2), which the kernel lets a tracer read where
// it refuses another process's thread clocks: one guest thread runs at a
// time, so what the process's clock gains while tid runs is tid's.
func (t *Tracer) CPUTime(pid, tid int) (time.Duration, bool) {
	if ns, ok := t.clocks.read(tid); ok {
		return time.Duration(ns), true
	}
	var ts unix.Timespec
	if pid <= 0 || unix.ClockGettime(int32(^pid<<3|2), &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// read returns tid's task clock in ns, opening its counter the first time.
func (c *taskClocks) read(tid int) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return 0, false
	}
	fd, ok := c.fds[tid]
	if !ok {
		attr := unix.PerfEventAttr{
			Type:   unix.PERF_TYPE_SOFTWARE,
			Config: unix.PERF_COUNT_SW_TASK_CLOCK,
			Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		}
		var err error
		fd, err = unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		switch {
		case err == unix.ESRCH:
			return 0, false
		case err != nil:
			c.off = true
			return 0, false
		}
		if c.fds == nil {
			c.fds = map[int]int{}
		}
		c.fds[tid] = fd
	}
	var b [8]byte
	if n, err := unix.Read(fd, b[:]); err != nil || n != len(b) {
		return 0, false
	}
	return binary.NativeEndian.Uint64(b[:]), true
}

// forget closes the counter of tid, which is gone.
func (c *taskClocks) forget(tid int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fd, ok := c.fds[tid]; ok {
		unix.Close(fd)
		delete(c.fds, tid)
	}
}

// close closes every counter.
func (c *taskClocks) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, fd := range c.fds {
		unix.Close(fd)
	}
	c.fds = nil
}
