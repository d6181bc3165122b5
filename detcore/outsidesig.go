package detcore

import (
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Signals from outside the guest: a kill(1) from another shell, ^C at the
// terminal hermit shares with the guest, a supervisor's SIGTERM. They come
// when the world sends them, so a recording keeps where they came and a
// replay gives them there again:
//   - at a thread that waits in a call, the signal is pending when the
//     engine looks (the recording keeps every look's answer: the signals
//     query, recorder/tracer.go), and the replay sends it at that look;
//   - at a thread that runs, the signal stops it where it is. The
//     recording keeps the signal (trace.KindSignal) with how long the
//     thread had run since hermit last resumed it (trace.KindPreempt
//     before it, unless it stood where hermit resumed it). The replay
//     sends it as it resumes the thread, or, after it has run that long,
//     stops it as the recording's watchdog would have (a point that may
//     differ, as a preemption's may) and sends it there.
// The signal is sent by hermit (tgkill), and given the recording's
// siginfo as it is delivered.

// OutsideSignalRecorder is a Journal that keeps the signals from outside
// that reached a running thread (hermit record).
type OutsideSignalRecorder interface {
	Journal
	// OutsideSignal is called at the signal-delivery stop of signal sig,
	// with siginfo info, from outside, of guest thread vtid, which had run
	// ran of CPU time since hermit last resumed it (0: it stood where
	// hermit resumed it, after the call it had stopped at).
	OutsideSignal(vtid, sig int, info []byte, ran time.Duration) error
}

// OutsideSignalPlayer is a Journal that gives them again (a replay).
type OutsideSignalPlayer interface {
	Journal
	// SignalDue returns the signal that guest thread vtid is to get now,
	// as it is resumed or preempted where the recording's got one from
	// outside, and its siginfo; ok is false if the recording has none
	// there.
	SignalDue(vtid int) (sig int, info []byte, ok bool)
}

// signal sends sig from hermit (Tracer.Signal) and remembers that it did,
// so that its delivery is not taken for a signal from outside.
func (e *Engine) signal(pid, tid, sig int, info []byte) error {
	if sig > 0 && sig <= 64 {
		bit := uint64(1) << (sig - 1)
		if tid != 0 {
			if t := e.threads[tid]; t != nil {
				t.sent |= bit
			}
		} else if p := e.procs[pid]; p != nil {
			p.sent |= bit
		}
	}
	return e.t.Signal(pid, tid, sig, info)
}

// fromOutside reports whether signal sig, at t's signal-delivery stop with
// siginfo info, came from outside the guest: from a process outside its
// pid namespace (kill, tgkill, sigqueue; si_pid 0), or, where the guest
// writes to no pty of its own, a terminal's SIGINT, SIGQUIT or SIGHUP; not
// one hermit sent, nor one the engine saw pending (the signals query kept
// it).
func (e *Engine) fromOutside(t *thread, sig int, info []byte) bool {
	bit := uint64(1) << (sig - 1)
	if t.sent&bit != 0 || t.proc.sent&bit != 0 {
		t.sent &^= bit
		t.proc.sent &^= bit
		return false
	}
	if t.seen&bit != 0 {
		t.seen &^= bit
		return false
	}
	if len(info) < siPidEnd {
		return false
	}
	code, pid := int32(le32(info[8:])), le32(info[16:])
	switch code {
	case siUser, siQueue, siTkill:
		return pid == 0
	case siKernel:
		return !e.ptyWrites && (sig == abi.SIGINT || sig == abi.SIGQUIT || sig == abi.SIGHUP)
	}
	return false
}

// siQueue is sigqueue's si_code.
const siQueue = -1

// outsideSignal handles the signal-delivery stop of sig at t before it is
// delivered: a recording keeps one from outside that reached t running; a
// replay gives the one it sent (SignalDue) the recording's siginfo.
func (e *Engine) outsideSignal(t *thread, sig int) error {
	if sig <= 0 || sig > 64 || syncSignal(sig) {
		return nil
	}
	si, ok := e.t.(SiginfoTracer)
	if !ok {
		return nil
	}
	if t.given == sig {
		t.given = 0
		if t.givenInfo != nil {
			_ = si.SetSiginfo(t.tid, t.givenInfo)
		}
		return nil
	}
	rj, ok := e.cfg.Journal.(OutsideSignalRecorder)
	if !ok || e.running != t {
		return nil
	}
	info, err := si.Siginfo(t.tid)
	if err != nil || !e.fromOutside(t, sig, info) {
		return nil
	}
	// Where hermit resumed it (after the call it stopped at: exact), or
	// after so much running: the watchdog's last look since its last stop
	// tells (up to a look's interval less), and a thread that ran less
	// than that ran at least a moment.
	var ran time.Duration
	var r abi.Regs
	if e.t.GetRegs(t.tid, &r) != nil || r.Rip != t.resumeRip {
		ran = time.Nanosecond
		if d, ok := e.lastLook.since(e.progress.Load() - 1); ok {
			ran = max(d, ran)
		}
	}
	return rj.OutsideSignal(t.vtid, sig, info, ran)
}

// noteResume is called as t is resumed: a recording notes where; a replay
// sends it the signal its recording's got from outside as it was resumed
// there.
func (e *Engine) noteResume(t *thread) {
	switch j := e.cfg.Journal.(type) {
	case OutsideSignalRecorder:
		t.resumeRip = t.regs.Rip
	case OutsideSignalPlayer:
		e.giveSignal(t, j)
	}
}

// giveSignal sends t the signal the recording's thread got from outside
// here, if it got one, and reports whether it did.
func (e *Engine) giveSignal(t *thread, j OutsideSignalPlayer) bool {
	sig, info, ok := j.SignalDue(t.vtid)
	if !ok {
		return false
	}
	if e.t.Signal(t.proc.pid, t.tid, sig, nil) == nil {
		t.given, t.givenInfo = sig, info
	}
	return true
}
