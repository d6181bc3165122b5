package detcore

import (
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// ErrGone is wrapped by Tracer errors about a thread that no longer exists.
var ErrGone = errors.New("thread is gone")

// Engine is the serialized deterministic scheduler. It owns the thread
// table; all its methods run on the Run goroutine.
type Engine struct {
	t   Tracer
	cfg Config

	threads map[int]*thread
	// order holds the live threads sorted by seq, for round robin.
	order []*thread
	procs map[int]*process
	// early holds first stops of threads whose creation event has not
	// been seen yet.
	early map[int]Stop
	seq   int
	mmSeq int
	// cursor is the seq of the thread picked last (round robin).
	cursor int
	// last is the thread picked last and streak how many turns in a row
	// it has had.
	last   *thread
	streak int
	// wokeBy is the thread whose futex wake woke a waiter since the last
	// pick (wokeWaiters): its turn ends.
	wokeBy *thread
	chaos  chaosState // chaos.go
	// running is the thread resumed last; nil when none runs.
	running *thread
	// dying counts threads whose exit report the engine waits for.
	dying int
	// stopping counts threads resumed to join a group stop (jobctl.go).
	stopping int
	// orphanEnd is when the processes left after the main process exited
	// are killed (virtual time; -1: not set).
	orphanEnd int64

	futexes map[futexKey][]*thread
	// sigWoken are the threads that signals for their whole process woke
	// from a futex wait and that have not run since (futexSigWoken).
	sigWoken []*thread
	// timers are the guest's timers, all in virtual time.
	timers   map[timerKey]*vtimer
	timerSeq int
	// zombies are guest processes that exited and that their (guest)
	// parent has not reaped yet, by host pid.
	zombies map[int]*process
	// sharedKeys caches keyFor's look-ups of shared futex words.
	sharedKeys map[futexKey]futexKey
	// clock is logical time in ns since the start of the run.
	clock int64
	// sigEpoch and childEpoch count events that may have made a signal
	// pending or a child waitable; blocked threads re-check when they move.
	sigEpoch, childEpoch uint64

	root     *process
	rootDone bool
	result   Result
	digest   hashWriter
	warned   map[string]bool
	// names are the host and domain names the guest set (uname's
	// fields 1 and 5), over unameFields.
	names map[int]string

	// progress is bumped at every stop; the watchdog reads it.
	progress atomic.Int64
	// preempts maps each thread the watchdog sent a SIGSTOP that has not
	// arrived yet to whether it was sent to examine it for a spin
	// (spin.go); preemptMu guards it. spinWait is the running thread's
	// examination budget in ns.
	preemptMu sync.Mutex
	preempts  map[int]bool
	spinWait  atomic.Int64
	// preemptDue is how much CPU time the running thread may use before
	// the watchdog preempts it, whoever waits, as the recording's did
	// (PreemptJournal.PreemptDue), or 0; plainRan, how much it had used
	// when the watchdog last preempted a thread.
	preemptDue, plainRan atomic.Int64
	// examCost is how long the last spin examination took (spin.go).
	examCost atomic.Int64
	// deferred holds stops of other threads that came while one was
	// single-stepped; wait returns them first.
	deferred []Stop
	// stopReq asks the run to end (Stop); stopDone says the guest has been
	// killed for it.
	stopReq  atomic.Bool
	stopDone bool
	// kwaitSkip is a tid whose open watchKernelWait leaves alone until
	// its next stop (fifo.go), or 0.
	kwaitSkip atomic.Int64
	// kwaitTid is the tid stopped for sleeping in an open (fifo.go), or 0.
	kwaitTid atomic.Int64
	// fifoReaders counts the guest readers waiting to open each FIFO.
	fifoReaders map[fifoKey]int
	// waitTid is the running thread while the engine waits for it, and
	// waitPid its process; runStart, its CPU time then (watchdog.go).
	waitTid  atomic.Int64
	waitPid  atomic.Int64
	runStart runStart
	lastLook lookedRan
	// others counts live threads other than the running one; timed says
	// a wait or timer has a deadline (virtual time would move it on).
	others atomic.Int64
	timed  atomic.Bool
	// cpuDue is how much more CPU time the running thread has before a
	// timer on its CPU-time clock expires (ITIMER_PROF, ITIMER_VIRTUAL, a
	// POSIX CPU timer), in ns; 0: none. The watchdog preempts it then:
	// its CPU time moves only at its stops, and a loop waiting for the
	// timer's signal never ended.
	cpuDue atomic.Int64
	// blockedOthers says another thread is blocked where the running
	// one may have ended its wait (spin.go asks, lazilyBlocked);
	// wakeable, how many an examination found the running one freed;
	// starved, a new thread that waited behind a computation (spin.go).
	blockedOthers atomic.Bool
	// wakePage is the running thread's clock page while it may wake
	// threads from it (fastfutex.go), or nil. The watchdog reads the page
	// under wakeMu, and a page is unmapped only once it is no longer
	// wakePage, under wakeMu too (dropClock): an exit that unmapped it
	// as the watchdog read it faulted hermit.
	wakePage atomic.Pointer[ClockPage]
	wakeMu   sync.Mutex
	wakeable int
	starved  string
	late     string // lateTimer's note (timers.go)
	// sigAfter bumps sigEpoch at the next stop: a signal-sending syscall
	// has been allowed to run.
	sigAfter bool
	// ptyWrites: the guest wrote to a pty of its own (outsidesig.go).
	ptyWrites bool
	// execs counts successful execs, for AT_RANDOM.
	execs int
	// fstate is the state of the file virtualization (files.go).
	fstate *fileState
	// lastClock is the clock page armed last (vclock.go).
	lastClock *ClockPage
	// tscLearned are the rdtsc sites learned, by image key; tscLearnedN
	// counts them (tscsite.go).
	tscLearned  map[string][]learnedSite
	tscLearnedN int
	// uuids counts the UUIDs /proc/sys/kernel/random/uuid gave, and uuid
	// is the last (procfs.go).
	uuids uint64
	uuid  []byte
}

// atRandom returns the AT_RANDOM bytes for the next exec: a function of
// the seed and of how many execs came before.
func (e *Engine) atRandom() [16]byte {
	e.execs++
	var b [16]byte
	putLE64(b[0:], splitmix64(e.cfg.Seed^uint64(e.execs)*0x9e3779b97f4a7c15))
	putLE64(b[8:], splitmix64(e.cfg.Seed+uint64(e.execs)))
	return b
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

type hashWriter struct{ h uint64 }

func (d *hashWriter) add(vs ...int64) {
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		h.Write(b[:])
	}
	put(d.h)
	for _, v := range vs {
		put(uint64(v))
	}
	d.h = h.Sum64()
}

// NewEngine returns an engine for a guest whose first thread, rootTid, is
// stopped (after its first exec) and ready to run.
func NewEngine(t Tracer, cfg Config, rootTid int) *Engine {
	if cfg.Quantum == 0 {
		cfg.Quantum = 1000
	}
	e := &Engine{
		t:          t,
		cfg:        cfg,
		threads:    map[int]*thread{},
		procs:      map[int]*process{},
		early:      map[int]Stop{},
		preempts:   map[int]bool{},
		futexes:    map[futexKey][]*thread{},
		sharedKeys: map[futexKey]futexKey{},
		zombies:    map[int]*process{},
		timers:     map[timerKey]*vtimer{},
		warned:     map[string]bool{},
		orphanEnd:  -1,
	}
	e.result.Stats.BySyscall = map[int]int64{}
	p := e.newProcess(rootTid, nil, nil)
	e.root = p
	th := e.newThread(rootTid, p)
	p.vpid = th.vtid
	th.started = true
	th.state = tsReady
	return e
}

func (e *Engine) newProcess(pid int, parent *process, mm *addrSpace) *process {
	if mm == nil {
		e.mmSeq++
		mm = &addrSpace{id: e.mmSeq}
	}
	p := &process{pid: pid, mm: mm, parent: parent, born: e.clock}
	e.procs[pid] = p
	e.result.Stats.Processes++
	return p
}

func (e *Engine) newThread(tid int, p *process) *thread {
	e.seq++
	t := &thread{tid: tid, vtid: tid, proc: p, seq: e.seq, state: tsNew}
	if v, err := e.t.GuestTid(tid); err == nil {
		t.vtid = v
	}
	t.rng = splitmix64(e.cfg.Seed ^ uint64(t.vtid)<<32)
	e.threads[tid] = t
	e.order = append(e.order, t)
	p.threads = append(p.threads, t)
	e.result.Stats.Threads++
	if st, ok := e.early[tid]; ok {
		delete(e.early, tid)
		e.noteFirstStop(t, st)
	}
	return t
}

func (e *Engine) warnOnce(key, msg string) {
	if e.warned[key] {
		return
	}
	e.warned[key] = true
	if e.cfg.Warn != nil {
		e.cfg.Warn(msg)
	}
}

// Run schedules the guest until every guest thread has exited.
func (e *Engine) Run() (Result, error) {
	x, err := e.t.OnExec(e.root.pid, e.atRandom(), false)
	if err != nil {
		return e.result, fmt.Errorf("preparing the guest: %w", err)
	}
	e.setupClock(e.root, x)
	e.execImages(e.root, e.root.pid, x)
	if j := e.cfg.Journal; j != nil {
		if err := j.Exec(e.root.pid, e.threads[e.root.pid].vtid); err != nil {
			return e.result, err
		}
	}
	stopWatch := e.startWatchdog()
	defer stopWatch()
	for len(e.threads) > 0 {
		if e.running != nil || e.dying > 0 || e.stopping > 0 || len(e.deferred) > 0 {
			if e.running != nil {
				budget := e.spinBudgetOf(e.running)
				e.spinWait.Store(int64(budget))
				e.preemptDue.Store(e.recordedPreempt(e.running))
				e.waitPid.Store(int64(e.running.proc.pid))
				e.waitTid.Store(int64(e.running.tid))
				n := e.countWaiting()
				// A thread in a spin wait may be waiting for this one.
				e.others.Store(int64(n + e.countSpinning() + e.wakeable))
				e.blockedOthers.Store(len(e.threads) > 1+n && e.lazilyBlocked())
				e.wakePage.Store(nil)
				if e.fastWaiters() {
					e.wakePage.Store(e.running.proc.clock)
				}
				timed := false
				if n == 0 {
					// Only then does the watchdog ask.
					_, timed = e.nextDeadline()
				}
				cpuDue := e.cpuTimerDue(e.running)
				e.cpuDue.Store(cpuDue)
				e.timed.Store(timed || cpuDue > 0)
				if budget < shortBudget {
					// Whether the watchdog may time it, as it asks.
					e.noteRunStart(e.running, e.spinExamWanted() || e.wakePage.Load() != nil)
				}
			}
			st, err := e.wait()
			e.waitTid.Store(0)
			if err != nil {
				return e.result, err
			}
			if _, spin := e.ownStop(st, false); !spin && !e.hopping(st) {
				// The watchdog's own stop for an examination is no
				// progress: if the thread runs on, the plain watchdog
				// still counts from its last stop.
				e.progress.Add(1)
			}
			e.kwaitSkip.CompareAndSwap(int64(st.Tid), 0)
			if e.cfg.Debug != nil {
				e.cfg.Debug("stop tid=%d kind=%v sig=%d code=%d msg=%d", st.Tid, st.Kind, st.Sig, st.Code, st.Msg)
			}
			e.countStop(st)
			if err := e.handleStop(st); err != nil {
				return e.result, err
			}
			continue
		}
		if e.orphanEnd >= 0 && e.clock >= e.orphanEnd {
			e.endRest()
			continue
		}
		e.stopNow()
		if e.lastClock != nil {
			// Whatever the last thread left in its page (fastfutex.go)
			// counts before the next turn.
			e.foldFutexes(e.lastClock)
		}
		next := e.pick()
		if next != nil && e.sigTaken(next) {
			continue
		}
		if e.cfg.Debug != nil {
			if next != nil {
				e.cfg.Debug("turn %d clock %d: run tid=%d vtid=%d (%s act=%d ret=%d)", e.result.Stats.Turns, e.clock, next.tid, next.vtid, abi.SyscallName(next.nr), next.act, next.ret)
			} else {
				e.cfg.Debug("all blocked at clock %d: %s", e.clock, e.describeBlocked())
			}
		}
		if next == nil && e.stopping == 0 {
			if err := e.allBlocked(); err != nil {
				return e.result, err
			}
			continue
		}
		if next == nil {
			continue // threads that pick made join a group stop report it
		}
		if err := e.resume(next); err != nil {
			return e.result, err
		}
	}
	e.result.Stats.Digest = e.digest.h
	e.reportStarved()
	return e.result, nil
}

// Stop asks the run to end as if the guest were killed from outside, once
// the engine is between two stops (so that a journal holds all the guest
// did until then). It may be called from any goroutine.
func (e *Engine) Stop() { e.stopReq.Store(true) }

// stopNow kills the guest if Stop asked, at a point between stops, or
// while every thread waits.
func (e *Engine) stopNow() {
	if e.stopReq.Load() && !e.stopDone {
		e.stopDone = true
		e.t.KillAll()
	}
}

// forget removes t from every table: the engine waits for nothing more
// from it.
func (e *Engine) forget(t *thread) {
	if t.state == tsDying {
		e.dying--
	}
	if t.state == tsStopping {
		e.stopping--
	}
	if t.state == tsBlocked {
		e.unblock(t)
	}
	if t.sigWoken != nil {
		t.sigWoken = nil
		e.dropSigWoken(t)
	}
	delete(e.threads, t.tid)
	e.dropOrder(t)
	t.proc.cpuGone += t.cpu
	t.proc.remove(t)
}

func (e *Engine) dropOrder(t *thread) {
	for i, x := range e.order {
		if x == t {
			e.order = append(e.order[:i], e.order[i+1:]...)
			return
		}
	}
}

// ordered returns the live threads in round-robin (creation) order. The
// slice is the engine's own: callers must not keep or modify it.
func (e *Engine) ordered() []*thread { return e.order }

// resumeParked restarts t according to how it parked.
func (e *Engine) resumeParked(t *thread) error {
	if !t.started {
		// Its first stop has not been reported yet: wait for it.
		if err := e.awaitFirstStop(t); err != nil {
			return err
		}
		if _, ok := e.threads[t.tid]; !ok || t.state == tsDying {
			return nil
		}
	}
	e.readyDecided(t)
	t.nativeAt = 0
	if t.atSyscall && e.cfg.Journal != nil && (t.act == actCont || t.act == actExitStop) {
		e.journalNative(t)
		if !t.journalExit {
			t.nativeAt, t.nativeNr = t.regs.Rip, t.nr
		}
	}
	if t.fast != nil {
		e.fastInstall(t)
	}
	t.traceToExit()
	t.atSyscall = false
	mode := t.contMode()
	switch t.act {
	case actEmulate:
		t.regs.OrigRax = ^uint64(0)
		t.regs.Rax = uint64(t.ret)
		if err := e.t.SetRegs(t.tid, &t.regs); err != nil {
			return e.gone(t, err)
		}
	case actExitStop:
		mode = ResumeSyscall
	}
	sig := t.sig
	t.sig = 0
	t.act = actCont
	t.state = tsRunning
	e.running = t
	if t.spinRecheck {
		t.spinRecheck = false
		if mode != ResumeSyscall && sig == 0 {
			return e.examineSpin(t, true)
		}
	}
	if err := e.resumeThread(t, mode, sig); err != nil {
		return e.gone(t, err)
	}
	if t.exiting {
		e.exiting(t)
	}
	return nil
}

// gone handles a Tracer error on t: a vanished thread is left to its exit
// report; anything else is fatal.
func (e *Engine) gone(t *thread, err error) error {
	if errors.Is(err, ErrGone) {
		e.setDying(t)
		if e.running == t {
			e.running = nil
		}
		return nil
	}
	return fmt.Errorf("thread %d: %w", t.tid, err)
}

func (e *Engine) setDying(t *thread) {
	if t.state == tsDying {
		return
	}
	if t.state == tsBlocked {
		e.unblock(t)
	}
	t.state = tsDying
	e.dying++
}

func (e *Engine) awaitFirstStop(t *thread) error {
	for !t.started {
		if _, ok := e.threads[t.tid]; !ok {
			return nil
		}
		st, err := e.wait()
		if err != nil {
			return err
		}
		e.countStop(st)
		if err := e.handleStop(st); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) noteFirstStop(t *thread, st Stop) {
	t.started = true
	if st.Kind == StopExited || st.Kind == StopKilled {
		// Killed before it ever ran (an exit_group raced its creation).
		e.threadGone(t, st)
	}
}

// handleStop updates the thread table for one stop report.
func (e *Engine) handleStop(st Stop) error {
	t := e.threads[st.Tid]
	if t != nil && t.started && t.proc.mm.hop != nil {
		// An arrival at a hop's int3 is the examination's (which
		// comes when the watchdog looks): it must change nothing, so
		// a wake left in the page is not made there (foldsAt).
		if done, err := e.hopStop(t, st); done {
			return err
		}
	}
	if e.foldsAt(st) {
		e.foldWakes(st.Tid)
	}
	if t == nil {
		if st.Kind == StopExec {
			return e.handleExec(st)
		}
		// The first stop of a thread whose creator has not reported the
		// clone event yet.
		e.early[st.Tid] = st
		return nil
	}
	if !t.started {
		e.noteFirstStop(t, st)
		return nil
	}
	if st.Kind == StopEvent && isStopSignal(st.Sig) {
		e.groupStop(t)
		e.traceGroupStop(t, st.Sig)
		return nil
	}
	if t.state == tsStopping && e.stoppedOther(t, st) {
		return nil
	}
	switch st.Kind {
	case StopExited, StopKilled:
		e.threadGone(t, st)
		return nil
	case StopSeccomp:
		if given, err := e.signalAtCall(t); given || err != nil {
			return err
		}
		reported, remade, err := e.traceSyscallEntry(t, false)
		if reported || err != nil {
			return err
		}
		e.park(t)
		if e.sigAfter {
			e.sigAfter = false
			e.sigEpoch++
		}
		if err := e.syscall(t); err != nil {
			return err
		}
		if !t.policy && t.state == tsReady && (t.act == actCont || t.act == actExitStop && noTurn[t.nr]) && t.sig == 0 {
			// A call intercepted only for the journal (a recording, a
			// replay) is no scheduling point, takes no turn and moves no
			// clock, as in a run, where it is not intercepted at all:
			// the same flags give the same schedule in run and record.
			// Unless the thread counts calls: then the run stops there
			// too (StopUntraced), and so does this.
			if t.counting && !markedOnly[t.nr] && !remade {
				e.countedTurn(t, t.nr)
				return nil
			}
			return e.resumeParked(t)
		}
		return nil
	case StopUntraced:
		reported, remade, err := e.traceSyscallEntry(t, true)
		if reported || err != nil {
			return err
		}
		if remade {
			return e.remadeUntraced(t)
		}
		return e.untraced(t, int(st.Msg))
	case StopSyscallExit:
		e.park(t)
		if err := e.t.GetRegs(t.tid, &t.regs); err != nil {
			return e.gone(t, err)
		}
		if t.inPart && t.journalExit {
			// A part of a write made in parts: the journal keeps what
			// the kernel returned for this part, before partEnd makes
			// the call again or gives the guest the whole count.
			if err := e.journalExit(t); err != nil {
				return err
			}
		}
		if f := t.onExit; f != nil {
			t.onExit = nil
			f(e, t)
		}
		if t.journalExit {
			if err := e.journalExit(t); err != nil {
				return err
			}
		}
		if f := t.afterJournal; f != nil {
			t.afterJournal = nil
			f(e, t)
		}
		if e.traceSyscallExit(t) {
			return nil
		}
		return e.continueAfterExit(t)
	case StopClone:
		return e.handleClone(t, st)
	case StopExec:
		return e.handleExec(st)
	case StopSignal:
		return e.handleSignal(t, st)
	case StopEvent:
		// A group stop or interrupt: park the thread; it runs again when picked.
		e.park(t)
		return nil
	}
	return fmt.Errorf("thread %d: unexpected stop %v", t.tid, st.Kind)
}

// park marks the running thread t as stopped and ready.
func (e *Engine) park(t *thread) {
	if e.running == t {
		e.running = nil
	}
	if t.state == tsDying {
		return
	}
	t.state = tsReady
	t.act = actCont
}

// threadGone removes a thread that exited or was killed.
func (e *Engine) threadGone(t *thread, st Stop) {
	if e.running == t {
		e.running = nil
	}
	e.preemptMu.Lock()
	delete(e.preempts, t.tid) // a SIGSTOP on its way is moot
	e.preemptMu.Unlock()
	e.forget(t)
	e.traceeGone(t, st)
	p := t.proc
	if t.clearTid != 0 {
		// The kernel cleared *clear_child_tid and woke its futex; waiters
		// park in the engine, so wake them here.
		e.futexWake(futexKey{mm: p.mm, addr: t.clearTid}, 1, abi.FUTEX_BITSET_ANY)
	}
	if !e.cfg.OldOwnerDied {
		e.ownersDied(p)
	}
	if len(p.threads) > 0 {
		// A fatal signal kills the whole thread group; and a leader that
		// exited early is reported once its last thread is gone.
		zombies := true
		for _, o := range p.threads {
			zombies = zombies && o.state == tsZombie
		}
		if st.Kind == StopKilled || zombies {
			for _, o := range p.threads {
				e.setDying(o)
			}
		}
		return
	}
	delete(e.procs, p.pid)
	e.dropClock(p)
	e.processExited(p)
	e.tracerGone(p)
	if pj, ok := e.cfg.Journal.(ProcessJournal); ok {
		status := int32(st.Code << 8)
		if st.Kind == StopKilled {
			status = int32(st.Sig)
		}
		pj.ProcessExit(p.vpid, status)
	}
	e.dropTimers(p)
	e.childEpoch++
	e.sigEpoch++
	if vp := p.vforkParent; vp != nil {
		vp.vforkChild = nil
		p.vforkParent = nil
		e.traceVforkDone(vp, p)
	}
	if p == e.root {
		e.rootDone = true
		if st.Kind == StopKilled {
			e.result.Signal = st.Sig
			e.result.ExitCode = 128 + st.Sig
		} else {
			e.result.ExitCode = st.Code
		}
		if len(e.procs) > 0 {
			e.orphanEnd = e.clock + orphanGrace
		}
	}
}
