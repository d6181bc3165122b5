package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/ptrace"
)

// Exit statuses hermit itself uses (the guest's own status passes through).
const (
	exitNotFound      = 127
	exitNotExecutable = 126
	// exitHermit: hermit failed, or --verify found the runs differ.
	exitHermit = 125
)

// runFlags are the flags shared by run and record.
type runFlags struct {
	summary   bool
	verify    bool
	seed      uint64
	cpu       string
	pin       int // cpu decoded by runMain: the CPU, or -1
	cpus      int // --num-cpus
	watchdog  time.Duration
	listTrace bool
	debug     string
	noTSC     bool
	noFast    bool
	noTraps   bool
	cpuid     bool
	timeslice int
	tmp       string
	network   string
	epoch     string
	epochTime time.Time
	mtimes    string
	ch        chaosFlags
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.summary, "summary", false, "print threads, processes, syscalls, ptrace stops, turns and the schedule digest to stderr")
	fs.Uint64Var(&f.seed, "seed", 0, "seed `N` for the thread interleaving and the guest's randomness; the same seed gives the same run")
	fs.StringVar(&f.cpu, "cpu", cpuDefault(), cpuUsage)
	fs.IntVar(&f.cpus, "num-cpus", detcore.DefaultCPUs, fmt.Sprintf("tell the guest it has `N` CPUs, 1 to %d (sched_getaffinity, nproc, /proc/cpuinfo, /sys/devices/system/cpu); its threads still take turns on one, so programs that start a thread per CPU (sort, Go's GOMAXPROCS) run fastest with 1; more lets their threads interleave", detcore.MaxCPUs))
	fs.StringVar(&f.epoch, "epoch", detcore.DefaultEpoch.Format(time.RFC3339), "the guest's wall-clock time at start, RFC3339 (`TIME`); its clocks then advance in virtual time")
	fs.BoolVar(&f.cpuid, "virtualize-cpuid", false, "make cpuid trap and hide RDRAND, RDSEED and the APIC ids (needs CPUID faulting; in VMs it makes every ptrace stop several times dearer)")
	fs.StringVar(&f.mtimes, "real-mtimes", strings.Join(detcore.DefaultRealMtimes, ":"), "colon-separated directories whose files keep their real modification times unless the guest writes them (installed software: mtime-keyed caches such as Python's .pyc stay valid); one that begins with */ matches at any depth, with * in names; elsewhere mtimes are virtual")
	fs.BoolVar(&f.noFast, "no-fast-io", false, "stop at every read and write of files and pipes, every futex wake and every rdtsc, as hermit did before it made them in the guest (slower; another schedule); no code of the program is patched, for one that reads its own code or jumps into it where hermit would")
	fs.BoolVar(&f.noTraps, "no-spin-traps", false, "put no int3 in the guest's code: none at a loop a thread was found spinning in, which finds the next spin there at once (each spin is then found after a budget of 2-20 ms), and none for an examination's hops (a computing thread is then stepped, a stop per instruction); the same schedule: use it for a program that reads its own code")
	fs.BoolVar(&f.noTSC, "no-trap-rdtsc", false, "let rdtsc read the host's counter (faster: trapping doubles the cost of every stop on some VMs; not deterministic)")
	fs.StringVar(&f.tmp, "tmp", "private", "`private`: the guest's /tmp shows, of the host's, only the entries the command line, environment or working directory name (/tmp/NAME; all when run in /tmp), and its writes there go to a scratch layer that vanishes with the run; overlay: the same, showing all of the host's /tmp (other programs' files there then reach the guest); host: the guest shares the host's /tmp")
	fs.StringVar(&f.network, "network", "host", "`host`: the guest uses the host's network; local: a network of its own with only loopback, whose TCP is tuned so that a client and server in the guest repeat exactly (nothing outside is reachable)")
	fs.StringVar(&f.debug, "debug", "", "log internals to stderr: `sched` logs every stop and scheduling decision")
	fs.IntVar(&f.timeslice, "timeslice", 32, "let a thread keep running for up to `N` intercepted syscalls in a row before switching (1: switch at every one)")
	fs.DurationVar(&f.watchdog, "watchdog", 2*time.Second, "preempt a thread that runs this long (its own CPU time) without a syscall while others wait (0: never)")
	f.ch.register(fs)
}

func runMain(args []string) int {
	fs := flag.NewFlagSet("hermit run", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: hermit run [flags] -- PROG [ARGS...]

Runs PROG deterministically: one guest thread at a time, switching only at
syscalls, thread and process events and signals, in fresh pid, mount and uts
namespaces with ASLR off. The same program, inputs and flags give the same
output, exit status, pids and thread interleaving on every run. hermit exits
with PROG's status, or 128+N if PROG died of signal N; 127 if PROG is not
found, 126 if it cannot be executed, 125 if hermit itself failed or --verify
saw the two runs differ.

Flags:
`)
		fs.PrintDefaults()
	}
	var f runFlags
	f.register(fs)
	fs.BoolVar(&f.verify, "verify", false, "run twice and fail (status 125) showing the first difference if stdout, stderr, exit status or schedule digest differ")
	fs.BoolVar(&f.listTrace, "list-intercepted", false, "print the syscalls the seccomp filter sends to hermit, comma-separated, and exit")
	if done, code := parseFlags(fs, args); done {
		return code
	}
	if f.listTrace {
		fmt.Println(abi.SyscallNames(detcore.InterceptedSyscalls()))
		return 0
	}
	argv := fs.Args()
	path, code := f.check("run", argv)
	if code != 0 {
		return code
	}
	stop := handleSignals()
	defer stop()
	if f.verify {
		return verify(path, argv, &f)
	}
	out, err := runGuest(path, argv, &f, guestIO{os.Stdin, os.Stdout, os.Stderr}, nil)
	if err != nil {
		return reportLaunchError(err)
	}
	if f.summary {
		printSummary(os.Stderr, out, &f)
	}
	return out.ExitCode
}

// check validates the flags and the program of run or record (cmd),
// returning the program's path, or an exit status other than 0 after
// saying what is wrong.
func (f *runFlags) check(cmd string, argv []string) (string, int) {
	epoch, err := time.Parse(time.RFC3339, f.epoch)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit %s: --epoch %q: want an RFC3339 time such as 2030-01-01T00:00:00Z\n", cmd, f.epoch)
		return "", 2
	}
	f.epochTime = epoch
	switch {
	case f.timeslice < 1:
		fmt.Fprintf(os.Stderr, "hermit %s: --timeslice %d: want 1 or more intercepted syscalls\n", cmd, f.timeslice)
		return "", 2
	case f.watchdog < 0:
		fmt.Fprintf(os.Stderr, "hermit %s: --watchdog %v: want a duration of 0 (never) or more\n", cmd, f.watchdog)
		return "", 2
	case f.cpus < 1 || f.cpus > detcore.MaxCPUs:
		fmt.Fprintf(os.Stderr, "hermit %s: --num-cpus %d: want 1 to %d\n", cmd, f.cpus, detcore.MaxCPUs)
		return "", 2
	}
	if err := f.ch.check(cmd, &f.seed, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return "", 2
	}
	if f.pin, err = cpuFlag(f.cpu, false); err != nil {
		fmt.Fprintf(os.Stderr, "hermit %s: %v\n", cmd, err)
		return "", 2
	}
	if f.cpuid && !ptrace.CPUIDFaulting() {
		fmt.Fprintf(os.Stderr, "hermit %s: --virtualize-cpuid: this machine has no CPUID faulting (arch_prctl ARCH_SET_CPUID); common in VMs and on older AMD CPUs\n", cmd)
		return "", 2
	}
	if f.network != "host" && f.network != "local" {
		fmt.Fprintf(os.Stderr, "hermit %s: --network must be host or local, not %q\n", cmd, f.network)
		return "", 2
	}
	if f.tmp != "private" && f.tmp != "overlay" && f.tmp != "host" {
		fmt.Fprintf(os.Stderr, "hermit %s: --tmp must be private, overlay or host, not %q\n", cmd, f.tmp)
		return "", 2
	}
	if len(argv) == 0 {
		fmt.Fprintf(os.Stderr, "hermit %s: no program given; usage: hermit %s [flags] -- PROG [ARGS...]\n", cmd, cmd)
		return "", 2
	}
	return resolveProgram(argv[0])
}

// resolveProgram finds PROG the way a shell does, returning an exit status
// other than 0 with a message when it cannot run.
func resolveProgram(name string) (string, int) {
	path := name
	if strings.Contains(name, "/") {
		st, err := os.Stat(name)
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "hermit: %s: no such file or directory\n", name)
			return "", exitNotFound
		case st.IsDir() || st.Mode()&0o111 == 0:
			fmt.Fprintf(os.Stderr, "hermit: %s: permission denied (not an executable file)\n", name)
			return "", exitNotExecutable
		}
	} else {
		p, err := exec.LookPath(name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "hermit: %s: command not found\n", name)
			return "", exitNotFound
		}
		path = p
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, 0
}

func reportLaunchError(err error) int {
	fmt.Fprintf(os.Stderr, "hermit: %v\n", err)
	switch {
	case errors.Is(err, ptrace.ErrNotFound):
		return exitNotFound
	case errors.Is(err, ptrace.ErrNotExecutable):
		return exitNotExecutable
	}
	return exitHermit
}

// handleSignals keeps hermit alive on SIGINT and SIGQUIT, which the
// terminal also sends to the guest (the guest decides), or, sent to hermit
// alone (kill(1) from a script, hermit not in the terminal's foreground),
// passes them on to the guest's first process; it kills the guest on
// SIGTERM and SIGHUP.
func handleSignals() func() {
	c := make(chan os.Signal, 4)
	signal.Notify(c, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case s := <-c:
				switch s {
				case syscall.SIGTERM, syscall.SIGHUP:
					killCurrent()
				default:
					if !ptrace.TerminalSends() {
						signalGuest(s.(syscall.Signal))
					}
				}
			}
		}
	}()
	return func() { signal.Stop(c); close(done) }
}

type guestIO struct{ stdin, stdout, stderr *os.File }

// current is the tracer of the run in progress, for killCurrent, and
// currentEngine its engine once there is one.
var (
	current       = make(chan *ptrace.Tracer, 1)
	currentEngine atomic.Pointer[detcore.Engine]
)

// killCurrent kills the guest of the run in progress; before the guest is
// running, it ends hermit itself (the launcher dies with it). The engine
// kills it between two stops, so that a recording holds everything the
// guest did (a line it printed); a guest that does not stop soon is
// killed anyway.
func killCurrent() {
	if e := currentEngine.Load(); e != nil {
		e.Stop()
		time.AfterFunc(200*time.Millisecond, func() { killGuest() })
		return
	}
	if !killGuest() {
		os.Exit(exitHermit)
	}
}

// signalGuest sends sig to the first process of the guest of the run in
// progress, if there is one.
func signalGuest(sig syscall.Signal) {
	select {
	case t := <-current:
		_ = t.SignalRoot(sig)
		current <- t
	default:
	}
}

// killGuest kills the guest of the run in progress, if there is one.
func killGuest() bool {
	select {
	case t := <-current:
		t.KillAll()
		current <- t
		return true
	default:
		return false
	}
}

// journal lets record put its journal and tracer layer into a run.
type journal struct {
	// traced are syscalls to intercept besides the engine's.
	traced []int
	// attach returns the tracer the engine drives and sets cfg.Journal.
	attach func(t *ptrace.Tracer, cfg *detcore.Config) detcore.Tracer
}

// runGuest runs one deterministic execution on a dedicated, locked OS
// thread (ptrace binds tracees to the thread that attached them).
func runGuest(path string, argv []string, f *runFlags, gio guestIO, j *journal) (detcore.Result, error) {
	type outcome struct {
		res detcore.Result
		err error
	}
	o := ptrace.OnOwnThread(func() outcome {
		res, err := traceGuest(path, argv, f, gio, j)
		return outcome{res, err}
	})
	return o.res, o.err
}

func traceGuest(path string, argv []string, f *runFlags, gio guestIO, j *journal) (detcore.Result, error) {
	trapCPUID := f.cpuid && ptrace.CPUIDFaulting()
	traced := detcore.InterceptedSyscalls()
	if j != nil {
		traced = append(traced, j.traced...)
	}
	tr, root, err := ptrace.Start(ptrace.Options{
		Path: path, Argv: argv, Env: os.Environ(), CPU: f.pin,
		Hostname: "hermit", HostsEntry: true, Traced: traced, TrapTSC: !f.noTSC,
		PrivateTmp: f.tmp != "host",
		WholeTmp:   f.tmp == "overlay",
		LocalNet:   f.network == "local",
		TrapCPUID:  trapCPUID,
		CPUs:       f.cpus,
		Stdin:      gio.stdin, Stdout: gio.stdout, Stderr: gio.stderr,
		Note: func(msg string) { fmt.Fprintf(os.Stderr, "hermit: %s\n", msg) },
	})
	if err != nil {
		return detcore.Result{}, err
	}
	current <- tr
	defer func() { <-current; tr.Close() }()
	cfg := detcore.Config{
		Seed:        f.seed,
		Timeslice:   f.timeslice,
		TrapTSC:     !f.noTSC,
		NoFastIO:    f.noFast,
		NoSpinTraps: f.noTraps,
		Epoch:       f.epochTime,
		CPUs:        f.cpus,
		RealMtimes:  mtimePrefixes(f.mtimes),
		Watchdog:    f.watchdog,
		Warn:        func(msg string) { fmt.Fprintf(os.Stderr, "hermit: warning: %s\n", msg) },
	}
	endLog, err := f.ch.apply(&cfg)
	if err != nil {
		return detcore.Result{}, err
	}
	defer func() {
		if err := endLog(); err != nil {
			fmt.Fprintf(os.Stderr, "hermit: --schedule-log: %v\n", err)
		}
	}()
	if trapCPUID {
		cfg.CPUID = ptrace.CPUID
	}
	if f.debug == "sched" {
		cfg.Debug = schedLogger()
	}
	var dt detcore.Tracer = tr
	if j != nil {
		dt = j.attach(tr, &cfg)
	}
	eng := detcore.NewEngine(dt, cfg, root)
	currentEngine.Store(eng)
	defer currentEngine.Store(nil)
	res, err := eng.Run()
	if err != nil {
		tr.KillAll()
		return res, err
	}
	return res, nil
}

// mtimePrefixes turns --real-mtimes into directory prefixes ending in /.
func mtimePrefixes(v string) []string {
	var out []string
	for _, d := range strings.Split(v, ":") {
		if d == "" {
			continue
		}
		out = append(out, strings.TrimSuffix(d, "/")+"/")
	}
	return out
}

// The guest can tell the CPU it runs on without a system call (lsl,
// rdpid, cpuid's APIC id, which glibc keeps in memory), so by default
// every run is pinned to the same one, unless other hermits are pinned
// there at the time (ptrace.FreeCPU).
const cpuUsage = "pin hermit and the guest to one CPU: `first` (the lowest CPU hermit may use of those with the fewest other hermits pinned to them: the same on every run unless hermits run side by side), auto (the CPU hermit starts on), a CPU number, or none; $HERMIT_CPU sets the default"

// cpuDefault is --cpu's default: $HERMIT_CPU, else first.
func cpuDefault() string {
	if v := os.Getenv("HERMIT_CPU"); v != "" {
		return v
	}
	return "first"
}

// replayCPUDefault is replay's --cpu default: $HERMIT_CPU, else recorded.
func replayCPUDefault() string {
	if v := os.Getenv("HERMIT_CPU"); v != "" {
		return v
	}
	return "recorded"
}

// cpuRecorded is cpuFlag's value for recorded, which recordedCPU resolves.
const cpuRecorded = -2

// cpuFlag decodes --cpu: -1 means do not pin. recorded is replay's.
func cpuFlag(v string, replay bool) (int, error) {
	want := "first, auto, none or a CPU number"
	if replay {
		want = "recorded, " + want
	}
	switch {
	case v == "recorded" && replay:
		return cpuRecorded, nil
	case v == "first":
		return ptrace.FreeCPU(), nil
	case v == "auto":
		return claimed(ptrace.CurrentCPU()), nil
	case v == "none":
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("--cpu %q: want %s", v, want)
	}
	if max := runtime.NumCPU(); n >= max {
		return 0, fmt.Errorf("--cpu %d: this machine has CPUs 0 to %d", n, max-1)
	}
	return claimed(n), nil
}

// claimed tells other hermits that this one pins to cpu (for their
// --cpu first), and returns it.
func claimed(cpu int) int {
	if cpu >= 0 {
		ptrace.ClaimCPU(cpu)
	}
	return cpu
}

// parseFlags parses a command's flags. --help prints the usage on stdout;
// a bad flag gets one line and a pointer to --help. done says the command
// ends there, with status code.
func parseFlags(fs *flag.FlagSet, args []string) (done bool, code int) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(os.Stdout)
		fs.Usage()
		return true, 0
	case err != nil:
		fmt.Fprintf(os.Stderr, "%s: %v (see %s --help)\n", fs.Name(), err, fs.Name())
		return true, 2
	}
	return false, 0
}

func printSummary(w io.Writer, res detcore.Result, f *runFlags) {
	s := res.Stats
	cpuidTrapped := f.cpuid && ptrace.CPUIDFaulting()
	fmt.Fprintf(w, "hermit summary:\n")
	fmt.Fprintf(w, "  threads: %d\n", s.Threads)
	fmt.Fprintf(w, "  processes: %d\n", s.Processes)
	fmt.Fprintf(w, "  syscalls intercepted: %d\n", s.Syscalls)
	fmt.Fprintf(w, "  ptrace stops: %d\n", s.Stops)
	fmt.Fprintf(w, "  syscall stops: %d\n", s.SyscallStops)
	fmt.Fprintf(w, "  event stops: %d\n", s.Stops-s.SyscallStops)
	fmt.Fprintf(w, "  scheduler turns: %d\n", s.Turns)
	fmt.Fprintf(w, "  nondeterministic points: %d%s\n", s.Nondet, nondetKinds(s))
	if s.Orphans > 0 {
		fmt.Fprintf(w, "  processes killed when the main process exited: %d\n", s.Orphans)
	}
	if s.SpinWaits > 0 {
		fmt.Fprintf(w, "  spin waits: %d (a thread spinning on memory waited at its loop's head for another thread)\n", s.SpinWaits)
	}
	if s.SpinTraps > 0 {
		fmt.Fprintf(w, "  spin traps: %d (int3s at loops threads spun in; %d later spins found there at once, without waiting for a spin budget)\n", s.SpinTraps, s.SpinTrapHits)
	}
	if s.SpinExams > 0 {
		fmt.Fprintf(w, "  spin examinations: %d (of threads that ran a spin budget without a syscall while another waited; %d by hops, of which %d went on to single steps)\n", s.SpinExams, s.SpinHops, s.SpinHopsStepped)
	}
	if s.SpinYields > 0 {
		fmt.Fprintf(w, "  spin yields: %d (a thread spinning in a loop that takes and lets go of a lock let the others run at its loop's head)\n", s.SpinYields)
	}
	if s.Counted > 0 {
		fmt.Fprintf(w, "  counted syscalls: %d (calls hermit does not intercept, made scheduling points while other threads or a timer waited; %d ptrace stops)\n", s.Counted, s.CountStops)
	}
	if s.Retries > 0 {
		fmt.Fprintf(w, "  kernel waits retried: %d\n", s.Retries)
	}
	if s.ReadyRetries > 0 {
		fmt.Fprintf(w, "  ready descriptors polled again: %d\n", s.ReadyRetries)
	}
	trapped := s.BySyscall[abi.SYS_CLOCK_GETTIME] + s.BySyscall[abi.SYS_GETTIMEOFDAY] + s.BySyscall[abi.SYS_TIME]
	why := ""
	if s.TrappedClockWhy != "" {
		why = ": " + s.TrappedClockWhy
	}
	fmt.Fprintf(w, "  clock reads: %d in the guest without a stop, %d trapped (programs: %d read hermit's clock page, %d only the trapped syscalls%s)\n",
		s.ClockPageReads, trapped, s.ClockPages, s.TrappedClocks, why)
	if s.FastWrites > 0 || s.FastReads > 0 || s.FastWakes > 0 || s.FastSites > 0 {
		fmt.Fprintf(w, "  fast calls: %d writes and %d reads of files and pipes, %d futex wakes, without a stop (%d libc sites patched)\n", s.FastWrites, s.FastReads, s.FastWakes, s.FastSites)
	}
	fmt.Fprint(w, f.ch.summary(f.seed, res))
	fmt.Fprintf(w, "  schedule digest: %016x\n", s.Digest)
	switch {
	case f.noTSC:
		fmt.Fprintf(w, "  rdtsc: the host's counter (--no-trap-rdtsc)\n")
	case !ptrace.TSCTraps():
		fmt.Fprintf(w, "  rdtsc: the host's counter (this machine cannot trap rdtsc: PR_SET_TSC has no effect here, so a program that reads it directly does not repeat)\n")
	default:
		fmt.Fprintf(w, "  rdtsc: virtualized (%d answered from the virtual clock: %d trapped, %d read hermit's clock page; sites patched %d times)\n",
			s.TSCReads+s.TSCPageReads, s.TSCReads, s.TSCPageReads, s.TSCSites)
	}
	switch {
	case cpuidTrapped:
		fmt.Fprintf(w, "  cpuid: virtualized (%d answered; RDRAND, RDSEED and APIC ids hidden)\n", s.CPUIDs)
	case ptrace.CPUIDFaulting():
		fmt.Fprintf(w, "  cpuid: the host's values (--virtualize-cpuid hides RDRAND, RDSEED and APIC ids)\n")
	default:
		fmt.Fprintf(w, "  cpuid: the host's values (this machine has no CPUID faulting to virtualize it)\n")
	}
	if first := ptrace.FirstCPU(); f.cpu == "first" && f.pin != first {
		fmt.Fprintf(w, "  cpu: pinned to %d, as other hermits were pinned to %d (a program that reads its CPU number without a system call sees %d)\n", f.pin, first, f.pin)
	}
}

// nondetKinds says what made a run's nondeterministic points, as
// " (N of one kind, M of another)", or "" when there were none.
func nondetKinds(s detcore.Stats) string {
	var kinds []string
	for _, k := range []struct {
		n    int64
		what string
	}{
		{s.OutsideReady, "descriptors made ready from outside (a host program, the network, TCP between guest processes) while every thread waited"},
		{s.OutsideWakes, "waits of every thread ended by a signal or a child from outside"},
		{s.OutsideLocks, "locks released from outside"},
		{s.Preemptions, "watchdog preemptions"},
	} {
		if k.n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.n, k.what))
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	return " (" + strings.Join(kinds, "; ") + ")"
}

// schedLogger returns a --debug=sched logger writing to stderr.
func schedLogger() func(format string, args ...any) {
	start := time.Now()
	return func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%9.6f] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
}
