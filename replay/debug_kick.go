package replay

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
)

// Kicks. An Interrupt (the debugger's ^C) is served at the run's next
// stop, and a thread that computes without a syscall makes none for as
// long as it computes: a replayed compiler, say, or a numeric loop, runs
// for seconds. When the Interrupt is still waiting kickGrace later, the
// layer sends that thread a SIGSTOP of its own (a kick), and pauses where
// it lands, between two of the recording's stops, as rr does with its
// interrupt; the Timeline knows such a place as inexact.
//
// The kick must change nothing the engine sees:
//   - Only the thread the layer last set running (ResumeCont or
//     ResumeCount) is kicked, and only while the kernel says it runs
//     (state R), not while it sleeps in a call the SIGSTOP would
//     interrupt.
//   - The layer swallows the kick's stop and resumes the thread as the
//     engine last asked; Signals hides a kick still on its way (a thread
//     that reached a syscall stop before it landed), which lands when the
//     thread next runs and is swallowed then.
//   - The engine's watchdog sends SIGSTOPs too (through Preempt), and two
//     do not queue: while one of either is on its way to a thread, the
//     other is not sent, and the one stop goes to the engine if it asked
//     for it.
type kicks struct {
	mu sync.Mutex
	// ours and engine: a SIGSTOP of the layer's, of the engine's, is on
	// its way to the thread.
	ours, engine map[int]bool
}

// kickGrace is how long an Interrupt waits for a stop before a kick, and
// between kicks while it still waits.
const kickGrace = 50 * time.Millisecond

// kickTries bounds the kicks of one Interrupt (some 10 s).
const kickTries = 200

// kickWhileWaiting kicks the layer waiting in slot, until the Interrupt
// in intr is served (or kickTries have passed).
func kickWhileWaiting(intr *atomic.Bool, slot *atomic.Pointer[layer]) {
	for range kickTries {
		time.Sleep(kickGrace)
		if !intr.Load() {
			return
		}
		if l := slot.Load(); l != nil {
			l.kick()
		}
	}
}

// kick stops the thread the layer waits on, if it computes. It runs on
// any goroutine.
func (l *layer) kick() {
	tid := int(l.running.Load())
	if tid == 0 || l.paused.Load() || l.stepping.Load() {
		return
	}
	l.k.mu.Lock()
	defer l.k.mu.Unlock()
	if l.k.ours[tid] || l.k.engine[tid] {
		return
	}
	if state, _, err := l.inner.ProcStat(tid); err != nil || state != 'R' {
		return
	}
	if l.inner.Preempt(tid) == nil {
		l.k.ours[tid] = true
	}
}

// enginePreempt sends the engine's SIGSTOP to tid, or lets a kick on its
// way stand for it.
func (l *layer) enginePreempt(tid int) error {
	l.k.mu.Lock()
	defer l.k.mu.Unlock()
	if !l.k.ours[tid] {
		if err := l.inner.Preempt(tid); err != nil {
			return err
		}
	}
	l.k.engine[tid] = true
	return nil
}

// takeKick reports whether st is a kick's stop alone, which the layer
// swallows; a SIGSTOP the engine sent (too) goes to it.
func (l *layer) takeKick(st detcore.Stop) bool {
	switch {
	case st.Kind == detcore.StopExited || st.Kind == detcore.StopKilled:
		l.k.mu.Lock()
		delete(l.k.ours, st.Tid)
		delete(l.k.engine, st.Tid)
		l.k.mu.Unlock()
		return false
	case st.Kind != detcore.StopSignal || st.Sig != abi.SIGSTOP:
		return false
	}
	l.k.mu.Lock()
	defer l.k.mu.Unlock()
	ours := l.k.ours[st.Tid] && !l.k.engine[st.Tid]
	delete(l.k.ours, st.Tid)
	delete(l.k.engine, st.Tid)
	return ours
}

// kicked serves the Interrupt at the stop of a kick and resumes the
// thread as the engine last asked.
func (l *layer) kicked(st detcore.Stop) error {
	th := l.thread(st.Tid)
	if l.intr.Load() {
		l.pauseStep(th, Stop{Reason: ReasonInterrupt, Tid: st.Tid})
	}
	return l.Resume(st.Tid, th.intent, 0)
}

// kickOnItsWay is SIGSTOP's bit if a kick alone is on its way to tid
// (the engine knows its own), else 0.
func (l *layer) kickOnItsWay(tid int) uint64 {
	l.k.mu.Lock()
	defer l.k.mu.Unlock()
	if l.k.ours[tid] && !l.k.engine[tid] {
		return 1 << (abi.SIGSTOP - 1)
	}
	return 0
}
