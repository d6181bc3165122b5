package recorder

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hermitdbg/hermit/detcore"
)

// Header flags: the settings a replay must repeat, as strings in
// trace.Header.Flags.
const (
	FlagPath       = "path"             // the program hermit executed, absolute
	FlagSeed       = "seed"             // --seed
	FlagTimeslice  = "timeslice"        // --timeslice
	FlagEpoch      = "epoch"            // --epoch, RFC 3339 with nanoseconds
	FlagRealMtimes = "real-mtimes"      // --real-mtimes prefixes, colon-separated
	FlagTrapTSC    = "trap-rdtsc"       // "true" unless --no-trap-rdtsc
	FlagStdin      = "stdin"            // what fd 0 was: null, file, pipe, socket, tty, other, closed
	FlagJournal    = "journal"          // JournalVersion of the recorder
	FlagCPUID      = "virtualize-cpuid" // "true" with --virtualize-cpuid
	FlagCPU        = "cpu"              // the CPU the run was pinned to; absent if not pinned
	FlagHeuristic  = "sched-heuristic"  // --sched-heuristic or --chaos; absent for round robin
	FlagPoints     = "chaos-points"     // PCT's change points (--chaos-points); absent unless pct
	FlagStarve     = "pct-starve"       // PCT's starvation guard (detcore.PCTStarve); absent: none (recorded before it)
	FlagFastIO     = "fast-io"          // "false" with --no-fast-io; absent: true
	FlagFds        = "fds"              // the descriptors from 3 on the guest inherited, comma-separated (ptrace.StandIn)
	FlagCPUs       = "num-cpus"         // --num-cpus; absent: legacyCPUs
	FlagWatchdog   = "watchdog"         // --watchdog, a Go duration; absent: recorded before it (Settings.Watchdog -1)
)

// legacyCPUs is how many CPUs the guest of a trace without FlagCPUs was
// told it had: hermit said 4 before --num-cpus.
const legacyCPUs = 4

// StdinPath names, among a trace's captured files, a regular file that
// was the program's stdin; replay gives it the same content.
const StdinPath = "/.hermit-stdin"

// JournalVersion numbers what a recording logs and how (the query codes,
// the result codes, which calls are kept): a replay needs one it knows.
// Version 2 adds the process events (processes.go), which replay skips.
// Version 3: a call intercepted only for the journal is no scheduling
// point (the schedule is run's), so earlier recordings would not replay.
// Version 4 intercepts mremap, mount and the other calls of classes.go
// that version 3 let through, and adds ResultStandIn and ResultRefused.
// Version 5 intercepts splice, tee and sendfile and adds ResultSplice.
// Version 6 asks about FIFOs at every open (QueryFifo and the others).
// Version 7: clock reads through the vDSO make no scheduling point (the
// clock page), nor does rseq (the filter fails it), so the schedule of an
// earlier recording is not this hermit's.
// Version 8: writes to regular files make no scheduling point once their
// descriptor has a fast-write entry (detcore/fastio.go).
// Version 9: a pending sleep no longer makes the running thread count its
// calls (detcore/count.go), and a thread computing while the others wait
// for a child, a futex or a deadline is not examined for a spin: both
// change where scheduling points fall.
// Version 10: a thread counts its calls only for threads it may share
// memory with, or right after a call that may wake one
// (detcore/sharedmem.go).
// Version 11: a blocking write of more than a page to a pipe the guest
// holds alone is made in parts (detcore/io.go), each asking whether the
// pipe is internal, and one to hermit's stdio pipe is not cut (the
// stdio-pipe query); a read or write asks a descriptor's access mode; and
// readlink and access may be answered at their entry (recorder/query.go).
// Version 12: writev and sendto, and writes to Unix stream sockets, are
// made in parts too, and a write of more than a page asks where its data
// goes (the write-end query, which replaces stdio-pipe and internal-pipe
// there).
// Version 13: the argument digest covers only the arguments a call takes.
// Version 14: a write of a page or less to a descriptor that is neither
// a pipe nor a Unix socket asks where its data goes (a pty's is made in
// parts), as does a splice with SPLICE_F_NONBLOCK; a terminal's stand-in
// keeps the open's access mode; a write to a pty master keeps the signals
// its ^C, ^\ or ^Z sent (replay sends them), and blocked threads look at
// their signals after any pty write; a kept call the watchdog's stop
// interrupted is ResultPreempted; a pipe a kept splice filled is written
// again (ptrace.PipeRewrite), in recording and replay alike; a blocking
// sendmmsg to a Unix socket the guest holds is made in parts, and the
// write-end query answers WriteDatagrams for its datagram sockets.
// Version 15: a FUTEX_WAKE_PRIVATE from a patched site is answered in the
// guest without a scheduling point (detcore/fastfutex.go).
// Version 16 keeps the watchdog's preemptions (trace.KindPreempt), which
// a replay repeats, a digest of the bytes each write writes (in its
// entry's result), and where a file stat found is (the statx answer); a
// version-15 trace has none of them, and replays as before.
// Version 17: a futex wake that wakes a waiter ends the waker's turn,
// timers on CPU-time clocks count CPU time, and a watchdog preemption
// moves virtual time on by the CPU time the thread ran (the recorded
// one, in replay): the schedule of an earlier recording is not this
// hermit's; an open that may truncate or create a
// file, and truncate, look the file up (a statx query); a large write to
// a loopback TCP connection between guest sockets is made in parts.
// Version 18: creat and openat2 set file times as open does; a FIFO,
// node, symbolic link or Unix socket that mknod, symlink or bind makes
// gets the time of its making, and bind moves its directory's; mkdir,
// mknod and symlink move their directory's at their exit, if they
// succeeded (statx queries); a version-17 trace has none of them, and
// replays as before.
// Version 19 keeps the guest's pending signals each time the engine looks
// (the signals query), so that a signal from outside that ended a wait
// replays, and a signal from outside that reached a running thread
// (trace.KindSignal, after a KindPreempt with the CPU time it had run
// unless it had barely run); a version-18 or -17 trace has none, and
// replays as before.
// Version 20: a signal from outside that reaches a running thread is
// given at the entry of the thread's next call (trace.Event.AtCall),
// unless the thread makes none soon, the trace keeps the digest of what
// writes without a stop wrote (QueryFastWrites), and copy_file_range's
// result (clCopy), and a wait for the outside world that a thread's wake
// ends moves the clock on by the time it waited (detcore.Config.
// OldOutsideClock); a version-19 trace has none of them, and replays as
// before.
// Version 21: a thread that signals for its whole process woke looks
// again, before it runs, whether they are still pending (a signals query;
// detcore.Config.OldSignalWake); a version-20 trace has no such look, and
// replays as before.
// Version 22: a futex wake wakes a thread that signals for its whole
// process woke from a wait on the word and that has not run since
// (detcore.Config.OldSigWokenFutex); a version-21 trace passed over it,
// and replays as before.
// Version 23: a readlink of procfs's link to a pipe, socket or namespace
// keeps the host's answer as ResultForce, which replay reads again and
// the engine rewrites with the virtual inode, and the engine asks the
// devices of those filesystems (QueryPseudoDev); a version-22 trace has
// none, and replays as before. Also, what a stat that runs natively wrote
// is kept (QueryCallOutput, detcore.Config.OldCallOutput), and a thread
// counts its calls while another that may share its memory waits on a
// futex with a timeout (detcore.Config.OldTimedFutexCount).
// Version 24: a select, pselect6 or ppoll that a signal interrupts
// returns the virtual time left, not the host's
// (detcore.Config.OldInterruptedTimeLeft), timerfd_settime drops the
// expirations not read (detcore.Config.OldTimerfdSettime), and a call on
// a socket that waits asks its SO_RCVTIMEO or SO_SNDTIMEO
// (QuerySockTimeout, detcore.Config.OldSockTimeout); a version-23 trace
// replays as before.
// Version 25: a POSIX timer whose signal is still pending counts its
// expirations as overruns rather than queue a signal for each, and
// timer_getoverrun says them (detcore.Config.OldTimerOverrun); a thread's
// death wakes a waiter on each robust mutex it held
// (detcore.Config.OldOwnerDied); a version-24 trace replays as before.
// Version 26: an rdtsc or rdtscp site that trapped once, or that trapped
// in an earlier program of the same ELF image, reads the clock page
// without a stop (detcore/tscsite.go), which moves the clock on by the
// page's step; a version-25 trace trapped at every rdtsc
// (detcore.Config.OldTSCTraps), and replays as before.
const JournalVersion = "26"

// replayable are the journal versions this hermit replays.
var replayable = map[string]bool{"17": true, "18": true, "19": true, "20": true, "21": true, "22": true, "23": true, "24": true, "25": true, JournalVersion: true}

// Settings are the recorded run's settings.
type Settings struct {
	Path      string
	Seed      uint64
	Timeslice int
	Epoch     time.Time
	Mtimes    []string
	TrapTSC   bool
	// CPUID: cpuid faults and is answered (from the trace, in replay).
	CPUID bool
	// Heuristic and ChaosPoints are the chaos scheduler's (detcore/chaos.go).
	Heuristic   detcore.Heuristic
	ChaosPoints []int64
	// PCTStarve is detcore.Config.PCTStarve (-1 in a recording made
	// before the guard).
	PCTStarve int64
	// NoFastIO: every read and write took its stop (--no-fast-io).
	NoFastIO bool
	// CPUs is how many CPUs the guest was told it had (--num-cpus).
	CPUs int
	// OldEntryTimes: recorded with journal version 17
	// (detcore.Config.OldEntryTimes).
	OldEntryTimes bool
	// SignalAnswers: the trace keeps the guest's pending signals (journal
	// version 19).
	SignalAnswers bool
	// FastWriteDigests: the trace keeps the digest of what writes without
	// a stop wrote (journal version 20; detcore.FastWriteJournal).
	FastWriteDigests bool
	// SignalTaken: a thread that signals for its whole process woke
	// looks again before it runs (journal version 21).
	SignalTaken bool
	// SigWokenFutex: a futex wake wakes a thread a signal woke from a wait
	// on the word that has not run since (journal version 22).
	SigWokenFutex bool
	// CallOutputs: the trace keeps what a stat that ran natively wrote,
	// and procfs's links to pipes, sockets and namespaces (journal
	// version 23).
	CallOutputs bool
	// InterruptedTimeLeft: a select, pselect6 or ppoll a signal
	// interrupted returned the virtual time left (journal version 24).
	InterruptedTimeLeft bool
	// TimerOverruns: POSIX timers counted overruns, and robust mutexes'
	// owners' deaths woke waiters (journal version 25).
	TimerOverruns bool
	// TSCSites: rdtsc sites were patched to read the clock page
	// (journal version 26).
	TSCSites bool
	// Watchdog is the recording's --watchdog (0: it preempted nothing);
	// -1 in a recording made before hermit kept it.
	Watchdog time.Duration
}

// Flags encodes s for the trace header.
func (s Settings) Flags() map[string]string {
	f := map[string]string{
		FlagPath:       s.Path,
		FlagSeed:       strconv.FormatUint(s.Seed, 10),
		FlagTimeslice:  strconv.Itoa(s.Timeslice),
		FlagEpoch:      s.Epoch.Format(time.RFC3339Nano),
		FlagRealMtimes: strings.Join(s.Mtimes, ":"),
		FlagTrapTSC:    strconv.FormatBool(s.TrapTSC),
		FlagJournal:    JournalVersion,
		FlagCPUID:      strconv.FormatBool(s.CPUID),
		FlagCPUs:       strconv.Itoa(s.CPUs),
		FlagWatchdog:   s.Watchdog.String(),
	}
	if s.Heuristic != "" && s.Heuristic != detcore.RoundRobin {
		f[FlagHeuristic] = string(s.Heuristic)
	}
	if s.Heuristic == detcore.PCT {
		f[FlagPoints] = detcore.FormatPoints(s.ChaosPoints)
		f[FlagStarve] = strconv.FormatInt(cmp.Or(s.PCTStarve, detcore.PCTStarve), 10)
	}
	if s.NoFastIO {
		f[FlagFastIO] = "false"
	}
	return f
}

// ParseSettings decodes a trace header's flags.
func ParseSettings(f map[string]string) (Settings, error) {
	var s Settings
	var err error
	bad := func(k string) error { return fmt.Errorf("trace header: bad or missing %s flag %q", k, f[k]) }
	if v := f[FlagJournal]; !replayable[v] {
		if v == "" {
			v = "none"
		}
		return s, fmt.Errorf("this trace was recorded with journal version %s; this hermit replays versions 17 to %s only (record it again with this hermit)", v, JournalVersion)
	}
	s.OldEntryTimes = f[FlagJournal] == "17"
	s.SignalAnswers = f[FlagJournal] != "17" && f[FlagJournal] != "18"
	s.FastWriteDigests = s.SignalAnswers && f[FlagJournal] != "19"
	s.SignalTaken = s.FastWriteDigests && f[FlagJournal] != "20"
	s.SigWokenFutex = s.SignalTaken && f[FlagJournal] != "21"
	s.CallOutputs = s.SigWokenFutex && f[FlagJournal] != "22"
	s.InterruptedTimeLeft = s.CallOutputs && f[FlagJournal] != "23"
	s.TimerOverruns = s.InterruptedTimeLeft && f[FlagJournal] != "24"
	s.TSCSites = s.TimerOverruns && f[FlagJournal] != "25"
	if s.Path = f[FlagPath]; s.Path == "" {
		return s, bad(FlagPath)
	}
	if s.Seed, err = strconv.ParseUint(f[FlagSeed], 10, 64); err != nil {
		return s, bad(FlagSeed)
	}
	if s.Timeslice, err = strconv.Atoi(f[FlagTimeslice]); err != nil {
		return s, bad(FlagTimeslice)
	}
	if s.Epoch, err = time.Parse(time.RFC3339Nano, f[FlagEpoch]); err != nil {
		return s, bad(FlagEpoch)
	}
	if s.TrapTSC, err = strconv.ParseBool(f[FlagTrapTSC]); err != nil {
		return s, bad(FlagTrapTSC)
	}
	if v, ok := f[FlagCPUID]; ok {
		if s.CPUID, err = strconv.ParseBool(v); err != nil {
			return s, bad(FlagCPUID)
		}
	}
	if v, ok := f[FlagFastIO]; ok {
		fast, err := strconv.ParseBool(v)
		if err != nil {
			return s, bad(FlagFastIO)
		}
		s.NoFastIO = !fast
	}
	if v, ok := f[FlagHeuristic]; ok {
		if s.Heuristic, err = detcore.ParseHeuristic(v); err != nil {
			return s, bad(FlagHeuristic)
		}
	}
	if s.Heuristic == detcore.PCT {
		if s.ChaosPoints, err = detcore.ParsePoints(f[FlagPoints]); err != nil || f[FlagPoints] == "" {
			return s, bad(FlagPoints)
		}
		s.PCTStarve = -1
		if v, ok := f[FlagStarve]; ok {
			if s.PCTStarve, err = strconv.ParseInt(v, 10, 64); err != nil || s.PCTStarve < -1 {
				return s, bad(FlagStarve)
			}
		}
	}
	s.CPUs = legacyCPUs
	if v, ok := f[FlagCPUs]; ok {
		if s.CPUs, err = strconv.Atoi(v); err != nil || s.CPUs < 1 || s.CPUs > detcore.MaxCPUs {
			return s, bad(FlagCPUs)
		}
	}
	s.Watchdog = -1
	if v, ok := f[FlagWatchdog]; ok {
		if s.Watchdog, err = time.ParseDuration(v); err != nil || s.Watchdog < 0 {
			return s, bad(FlagWatchdog)
		}
	}
	for _, p := range strings.Split(f[FlagRealMtimes], ":") {
		if p != "" {
			s.Mtimes = append(s.Mtimes, p)
		}
	}
	return s, nil
}

// Config returns the engine configuration of these settings.
func (s Settings) Config() detcore.Config {
	return detcore.Config{Seed: s.Seed, Timeslice: s.Timeslice, Epoch: s.Epoch, RealMtimes: s.Mtimes, TrapTSC: s.TrapTSC,
		Heuristic: s.Heuristic, ChaosPoints: s.ChaosPoints, PCTStarve: s.PCTStarve, NoFastIO: s.NoFastIO, CPUs: s.CPUs,
		OldEntryTimes: s.OldEntryTimes, OldOutsideClock: !s.FastWriteDigests, OldSignalWake: !s.SignalTaken,
		OldSigWokenFutex: !s.SigWokenFutex, OldCallOutput: !s.CallOutputs, OldTimedFutexCount: !s.CallOutputs,
		OldInterruptedTimeLeft: !s.InterruptedTimeLeft, OldTimerfdSettime: !s.InterruptedTimeLeft, OldSockTimeout: !s.InterruptedTimeLeft,
		OldTimerOverrun: !s.TimerOverruns, OldOwnerDied: !s.TimerOverruns, OldTSCTraps: !s.TSCSites}
}
