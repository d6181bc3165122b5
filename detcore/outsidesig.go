package detcore

import (
	"fmt"
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
//   - at a thread that stands where hermit has just resumed it (after the
//     call it stopped at), the recording keeps it (trace.KindSignal) and
//     the replay sends it as it resumes the thread;
//   - at a thread that runs, the signal stops it at a point no replay can
//     find without a PMU, so the recording does not give it there: it
//     gives it at the entry of the thread's next call, before the call,
//     which the thread makes again after the handler, as after a signal
//     that came just before it (trace.KindSignal AtCall; the replay does
//     the same at the same call). A thread that makes no call within
//     deferGrace of CPU time is preempted, as the watchdog does, and gets
//     it there (a trace.KindPreempt with the CPU time it had run, then
//     the KindSignal): the replay stops it after as much CPU time, at a
//     point that may differ, as a preemption's may, and record warns.
// The signal is sent by hermit (tgkill), and given the recording's
// siginfo as it is delivered.

// SignalPoint is where a recording gives a signal from outside to a
// thread that was running.
type SignalPoint int

const (
	// AtResume: it came where hermit had just resumed the thread.
	AtResume SignalPoint = iota
	// AtCall: it came as the thread ran, and hermit gives it at the
	// entry of the thread's next call, which is made again after it.
	AtCall
	// AtPreemption: hermit preempted the thread (the journal has just
	// kept the preemption) and gives it there.
	AtPreemption
)

// OutsideSignalRecorder is a Journal that keeps the signals from outside
// that reached a running thread (hermit record).
type OutsideSignalRecorder interface {
	Journal
	// OutsideSignal keeps signal sig, with siginfo info, from outside,
	// which guest thread vtid gets at point at.
	OutsideSignal(vtid, sig int, info []byte, at SignalPoint) error
}

// OutsideSignalPlayer is a Journal that gives them again (a replay).
type OutsideSignalPlayer interface {
	Journal
	// SignalDue returns the signal that guest thread vtid is to get now,
	// as it is resumed or preempted where the recording's got one from
	// outside, and its siginfo; ok is false if the recording has none
	// there.
	SignalDue(vtid int) (sig int, info []byte, ok bool)
	// SignalAtCall is SignalDue at the entry of a call of vtid's (AtCall).
	SignalAtCall(vtid int) (sig int, info []byte, ok bool)
}

// outsideSig is a signal from outside a recording gives later.
type outsideSig struct {
	sig  int
	info []byte
}

// deferGrace is how much CPU time a thread that got a signal from
// outside as it ran may run on to its next call, where the recording
// gives it the signal, before it is preempted and gets it there. It is
// the watchdog's tick: a look comes about that soon anyway.
const deferGrace = watchdogTick

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
// delivered: a recording keeps one from outside that reached t running,
// or defers it to t's next call (deferred: it is not delivered now); a
// replay gives the one it sent (SignalDue) the recording's siginfo.
func (e *Engine) outsideSignal(t *thread, sig int) (deferred bool, err error) {
	if sig <= 0 || sig > 64 || syncSignal(sig) {
		return false, nil
	}
	si, ok := e.t.(SiginfoTracer)
	if !ok {
		return false, nil
	}
	if t.given == sig {
		t.given = 0
		if t.givenInfo != nil {
			_ = si.SetSiginfo(t.tid, t.givenInfo)
		}
		return false, nil
	}
	rj, ok := e.cfg.Journal.(OutsideSignalRecorder)
	if !ok || e.running != t {
		return false, nil
	}
	info, err := si.Siginfo(t.tid)
	if err != nil || !e.fromOutside(t, sig, info) {
		return false, nil
	}
	var r abi.Regs
	if e.t.GetRegs(t.tid, &r) == nil && r.Rip == t.resumeRip {
		return false, rj.OutsideSignal(t.vtid, sig, info, AtResume)
	}
	if !isStopSignal(sig) && sig != abi.SIGCONT {
		t.deferred = append(t.deferred, outsideSig{sig, info})
		// This stop restarts the watchdog's count, which a preemption
		// that gives the signal (giveDeferred) counts from; a replay's
		// counts from t's last resume.
		if d, ok := e.lastLook.since(e.progress.Load() - 1); ok {
			t.deferRan += d
		}
		return true, nil
	}
	// A stop or a SIGCONT acts at once. It came after so much running:
	// the watchdog's last look since t's last stop tells (up to a look's
	// interval less), and a thread that ran less than that ran at least
	// a moment.
	ran := time.Nanosecond
	if d, ok := e.lastLook.since(e.progress.Load() - 1); ok {
		ran = max(d, ran)
	}
	if pj, ok := rj.(PreemptJournal); ok {
		if _, err := pj.Preempted(t.vtid, ran); err != nil {
			return false, err
		}
	}
	return false, rj.OutsideSignal(t.vtid, sig, info, AtPreemption)
}

// signalAtCall gives t, stopped at the entry of a call, a signal from
// outside that came as it ran: a recording, the first it deferred; a
// replay, the one its recording gave there. The call is not made now:
// t stands at its syscall instruction again with the call's number in
// rax, so it makes it after the handler (or not, as the recording's did,
// if the handler jumps elsewhere). It reports whether it gave one. A
// call from hermit's own code, or one t makes while it counts calls or a
// guest tracer steps it, gets none (a recording gives the signal at a
// later call or a preemption).
func (e *Engine) signalAtCall(t *thread) (bool, error) {
	var sig int
	var info []byte
	switch j := e.cfg.Journal.(type) {
	case OutsideSignalRecorder:
		if len(t.deferred) == 0 || !e.rewindable(t) {
			return false, nil
		}
		sig, info = t.deferred[0].sig, t.deferred[0].info
		t.deferred, t.deferRan = t.deferred[1:], 0
		if err := j.OutsideSignal(t.vtid, sig, info, AtCall); err != nil {
			return true, err
		}
	case OutsideSignalPlayer:
		var ok bool
		if sig, info, ok = j.SignalAtCall(t.vtid); !ok {
			return false, nil
		}
		if !e.rewindable(t) {
			return true, fmt.Errorf("thread %d: the recording gave a signal from outside at the entry of a call where this replay cannot", t.vtid)
		}
	default:
		return false, nil
	}
	if err := e.t.SetRegs(t.tid, &t.regs); err != nil {
		return true, e.gone(t, err)
	}
	e.give(t, sig, info)
	if err := e.resumeLooked(t, ResumeCont, 0); err != nil {
		return true, e.gone(t, err)
	}
	return true, nil
}

// rewindable reports whether t, stopped at the entry of a call, may be
// given a signal before it (signalAtCall), and if so sets t.regs to what
// makes the kernel skip the call and t make it again.
func (e *Engine) rewindable(t *thread) bool {
	if e.running != t || t.contMode() != ResumeCont || e.t.GetRegs(t.tid, &t.regs) != nil {
		return false
	}
	r := &t.regs
	if r.Rip < 2 || t.proc.clock != nil && t.proc.clock.inCode(r.Rip) {
		return false
	}
	var insn [2]byte
	if e.t.ReadMem(t.tid, r.Rip-2, insn[:]) != nil || insn != [2]byte{0x0f, 0x05} {
		return false // not a syscall instruction
	}
	r.Rip -= 2
	r.Rax = r.OrigRax
	r.OrigRax = ^uint64(0)
	return true
}

// giveDeferred gives t, which hermit has just preempted, the first signal
// from outside a recording deferred (none reached a call in time), and
// reports whether it did.
func (e *Engine) giveDeferred(t *thread) (bool, error) {
	rj, ok := e.cfg.Journal.(OutsideSignalRecorder)
	if !ok || len(t.deferred) == 0 {
		return false, nil
	}
	d := t.deferred[0]
	t.deferred = t.deferred[1:]
	if err := rj.OutsideSignal(t.vtid, d.sig, d.info, AtPreemption); err != nil {
		return false, err
	}
	e.give(t, d.sig, d.info)
	return true, nil
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
	e.give(t, sig, info)
	return true
}

// give sends t signal sig from outside, as the recording's thread got it,
// to be delivered with siginfo info (outsideSignal).
func (e *Engine) give(t *thread, sig int, info []byte) {
	if e.t.Signal(t.proc.pid, t.tid, sig, nil) == nil {
		t.given, t.givenInfo = sig, info
	}
}
