package detcore

import (
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Virtual time. The guest never sees the host clock: every clock it can
// read is derived from the engine's logical clock, which starts at 0,
// advances by Config.Quantum at every scheduler turn, and jumps to the
// next deadline when every thread is waiting for one. CLOCK_REALTIME and
// its variants read Epoch + logical time; CLOCK_MONOTONIC and BOOTTIME
// read MonotonicStart + logical time. clock_gettime of a CPU-time clock
// reads the virtual time the thread or process ran (cputime.go); timers
// on one run on the monotonic clock. The vDSO time functions are patched
// to make the real syscall, which the engine answers.

// DefaultEpoch is the wall-clock time at which every run starts unless
// told otherwise.
var DefaultEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// MonotonicStart is CLOCK_MONOTONIC at the start of a run: as if the
// machine had been up for two minutes.
const MonotonicStart = 120 * int64(time.Second)

// Clock ids from <linux/time.h>.
const (
	clockRealtime        = 0
	clockMonotonic       = 1
	clockProcessCputime  = 2
	clockThreadCputime   = 3
	clockMonotonicRaw    = 4
	clockRealtimeCoarse  = 5
	clockMonotonicCoarse = 6
	clockBoottime        = 7
	clockRealtimeAlarm   = 8
	clockBoottimeAlarm   = 9
	clockTAI             = 11
)

// now returns the virtual value of clock in ns, and false for a clock id
// that does not exist.
func (e *Engine) now(clock int) (int64, bool) {
	switch clock {
	case clockRealtime, clockRealtimeCoarse, clockRealtimeAlarm, clockTAI:
		return e.epoch() + e.clock, true
	case clockMonotonic, clockMonotonicRaw, clockMonotonicCoarse, clockBoottime, clockBoottimeAlarm,
		clockProcessCputime, clockThreadCputime:
		return MonotonicStart + e.clock, true
	}
	if clock < 0 {
		// Dynamic clocks (another process's CPU time, an fd clock).
		return MonotonicStart + e.clock, true
	}
	return 0, false
}

func (e *Engine) epoch() int64 {
	if e.cfg.Epoch.IsZero() {
		return DefaultEpoch.UnixNano()
	}
	return e.cfg.Epoch.UnixNano()
}

func timespecBytes(ns int64) []byte {
	var b [16]byte
	putLE64(b[0:], uint64(ns/1e9))
	putLE64(b[8:], uint64(ns%1e9))
	return b[:]
}

func putLE64(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

func sysClockGettime(e *Engine, t *thread) {
	if cpuClockGettime(e, t) {
		return
	}
	ns, ok := e.now(int(int32(t.regs.Rdi)))
	if !ok {
		t.emulate(-abi.EINVAL)
		return
	}
	e.reply(t, t.regs.Rsi, timespecBytes(ns), 0)
}

func sysGettimeofday(e *Engine, t *thread) {
	ns, _ := e.now(clockRealtime)
	if tv := t.regs.Rdi; tv != 0 {
		b := timespecBytes(ns)
		putLE64(b[8:], uint64(ns%1e9/1000))
		if e.t.WriteMem(t.tid, tv, b) != nil {
			t.emulate(-abi.EFAULT)
			return
		}
	}
	if tz := t.regs.Rsi; tz != 0 {
		var zero [8]byte
		if e.t.WriteMem(t.tid, tz, zero[:]) != nil {
			t.emulate(-abi.EFAULT)
			return
		}
	}
	t.emulate(0)
}

func sysTime(e *Engine, t *thread) {
	ns, _ := e.now(clockRealtime)
	sec := ns / 1e9
	if p := t.regs.Rdi; p != 0 {
		var b [8]byte
		putLE64(b[:], uint64(sec))
		if e.t.WriteMem(t.tid, p, b[:]) != nil {
			t.emulate(-abi.EFAULT)
			return
		}
	}
	t.emulate(sec)
}

// struct timex (<sys/timex.h>, x86-64): the fields adjtimex reads and
// fills, at their offsets, and its status and return values.
const (
	timexSize      = 208
	timexStatus    = 40 // int status
	timexMaxerror  = 24 // long maxerror (µs)
	timexEsterror  = 32 // long esterror (µs)
	timexConstant  = 48 // long constant
	timexPrecision = 56 // long precision (µs)
	timexTolerance = 64 // long tolerance
	timexTime      = 72 // struct timeval time
	timexTick      = 88 // long tick (µs)
	staUnsync      = 0x0040
	timeError      = 5 // TIME_ERROR: the clock is not synchronized
	eOpNotSupp     = 95
)

// sysAdjtimex answers adjtimex and clock_adjtime for CLOCK_REALTIME from
// the virtual clock: a read (modes 0) gets the virtual time, as clock_gettime
// shows it, on a clock that says it is not synchronized (fixed values, the
// same every run); changing the clock is refused (EPERM), as for a process
// without CAP_SYS_TIME: the guest's time is hermit's.
func sysAdjtimex(e *Engine, t *thread) {
	buf := t.regs.Rdi
	if t.nr == abi.SYS_CLOCK_ADJTIME {
		if clk := int32(t.regs.Rdi); clk != clockRealtime {
			t.emulate(-eOpNotSupp)
			return
		}
		buf = t.regs.Rsi
	}
	modes, ok := e.readU32(t, buf)
	switch {
	case !ok:
		t.emulate(-abi.EFAULT)
		return
	case modes != 0:
		t.emulate(-abi.EPERM)
		return
	}
	ns, _ := e.now(clockRealtime)
	b := make([]byte, timexSize)
	putLE64(b[timexMaxerror:], 16000000)
	putLE64(b[timexEsterror:], 16000000)
	putLE64(b[timexStatus:], staUnsync)
	putLE64(b[timexConstant:], 2)
	putLE64(b[timexPrecision:], 1)
	putLE64(b[timexTolerance:], 32768000)
	putLE64(b[timexTime:], uint64(ns/1e9))
	putLE64(b[timexTime+8:], uint64(ns%1e9/1000))
	putLE64(b[timexTick:], 10000)
	e.reply(t, buf, b, timeError)
}

// sysSettime refuses clock_settime and settimeofday as the kernel refuses
// a process without CAP_SYS_TIME (EPERM), after the checks it makes first
// (a clock that cannot be set, a bad pointer, a bad value): the guest's
// time is hermit's, and the host's clock is not the guest's to set (as
// root, the call would set it).
func sysSettime(e *Engine, t *thread) {
	var b [16]byte
	le := func(b []byte) int64 { return int64(le64(b)) }
	switch t.nr {
	case abi.SYS_CLOCK_SETTIME:
		clk := int32(t.regs.Rdi)
		if clk >= 0 && clk != clockRealtime {
			t.emulate(-abi.EINVAL)
			return
		}
		if e.t.ReadMem(t.tid, t.regs.Rsi, b[:]) != nil {
			t.emulate(-abi.EFAULT)
			return
		}
		if sec, nsec := le(b[0:]), le(b[8:]); clk == clockRealtime && (sec < 0 || nsec < 0 || nsec >= 1e9) {
			t.emulate(-abi.EINVAL)
			return
		}
	case abi.SYS_SETTIMEOFDAY:
		if tv := t.regs.Rdi; tv != 0 {
			if e.t.ReadMem(t.tid, tv, b[:]) != nil {
				t.emulate(-abi.EFAULT)
				return
			}
			if sec, usec := le(b[0:]), le(b[8:]); sec < 0 || usec < 0 || usec >= 1e6 {
				t.emulate(-abi.EINVAL)
				return
			}
		}
		if tz := t.regs.Rsi; tz != 0 && e.t.ReadMem(t.tid, tz, b[:8]) != nil {
			t.emulate(-abi.EFAULT)
			return
		}
	}
	t.emulate(-abi.EPERM)
}
