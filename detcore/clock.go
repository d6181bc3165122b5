package detcore

import (
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Virtual time. The guest never sees the host clock: every clock it can
// read is derived from the engine's logical clock, which starts at 0,
// advances by Config.Quantum at every scheduler turn, and jumps to the
// next deadline when every thread is waiting for one. CLOCK_REALTIME and
// its variants read Epoch + logical time; CLOCK_MONOTONIC, BOOTTIME and the
// CPU-time clocks read MonotonicStart + logical time. The vDSO time
// functions are patched to make the real syscall, which the engine answers.

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
