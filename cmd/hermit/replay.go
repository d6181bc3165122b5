package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/replay"
	"github.com/hermitdbg/hermit/trace"
)

func replayMain(args []string) int {
	fs := flag.NewFlagSet("hermit replay", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: hermit replay [flags] [TRACE] [-- GDB-ARGS]

Runs a recorded program again from its trace alone (TRACE: a trace
directory, a trace name in the trace directory, or by default the latest
recording). The program sees the recorded inputs, files and host answers,
so it prints the same bytes and exits with the same status, with the same
thread ids, pids and addresses. Replay runs inside a throwaway copy of the
recorded files: it reads nothing of the host's files and writes nothing
back. If the program stops doing what the recording did, replay stops at
the first difference, says where, and exits 125.

  --autopilot        replay to the end with no debugger
  --gdb-port N       serve the GDB remote protocol on 127.0.0.1:N (0: any
                     free port) for gdb, lldb or Delve, and print how to
                     attach; exits with the program's status once the
                     debugger has run it to its end (gdb stops at the
                     end of the recording before the exit, so that it
                     can still go back; continue again to end it)
  --gdb              start gdb attached to the replay (GDB-ARGS go to gdb)
  (no flag)          the interactive debugger: step through the recording's
                     events forwards and backwards ("help" lists its
                     commands); on a terminal it prompts, otherwise it runs
                     the commands from stdin, --ex or --batch and exits

Thread ids and pids the debugger shows are the ones the recorded program
saw; the program's files (executable, libraries) are served from the
trace, so the debugger needs no local copy. A recording cannot change:
writes to registers or memory are refused. Debuggers run backwards:
gdb's reverse-continue, reverse-stepi, reverse-next, reverse-finish
(watchpoints and catch syscall fire going backwards) and "monitor
checkpoint"; Delve's rewind, rev next and checkpoints; the interactive
debugger's reverse-continue, reverse-stepi and checkpoint. Going back replays
forwards, exactly, from a run kept paused before the place; the
program's output is printed once.

Flags:
`)
		fs.PrintDefaults()
	}
	var gdbArgs []string
	for i, a := range args {
		if a == "--" {
			args, gdbArgs = args[:i], args[i+1:]
			break
		}
	}
	var autopilot, progress, gdb, keep, summary bool
	var gdbPort int
	var cpu, debug, host, onProcess string
	var gotoEvent uint64
	fs.BoolVar(&autopilot, "autopilot", false, "replay to the end without a debugger")
	fs.IntVar(&gdbPort, "gdb-port", 0, "serve the GDB remote protocol on port `N` (0: any free port)")
	fs.StringVar(&host, "gdb-host", "127.0.0.1", "the address to listen on with --gdb-port; whoever reaches it controls the replay")
	fs.BoolVar(&gdb, "gdb", false, "start gdb attached to the replay")
	fs.BoolVar(&keep, "keep-listening", false, "with --gdb-port: after a debugger detaches, goes away or quits (lldb kills as it quits), wait for the next one, continuing from where the replay stopped")
	fs.StringVar(&onProcess, "onprocess", "", "debug the process with guest pid `PID` or command NAME (after its exec), not the first one; see 'hermit trace ps'")
	fs.Uint64Var(&gotoEvent, "goto", 0, "replay to event `N` before the debugger attaches (see 'hermit trace dump')")
	var exs stringList
	var batch string
	fs.Var(&exs, "ex", "in the interactive debugger: run `CMD` (repeatable), then exit")
	fs.StringVar(&batch, "batch", "", "in the interactive debugger: run the commands in `FILE`, then exit")
	fs.BoolVar(&progress, "progress", false, "show how far the replay is on stderr (with --autopilot)")
	fs.BoolVar(&summary, "summary", false, "with --autopilot: print threads, processes, syscalls, ptrace stops, turns and the schedule digest to stderr, as 'hermit record --summary' does; the digest is the recording's")
	fs.StringVar(&debug, "debug", "", "log internals to stderr: `sched` logs every stop and scheduling decision, rsp every packet of the GDB protocol")
	fs.StringVar(&cpu, "cpu", replayCPUDefault(), "pin hermit and the guest to one CPU: `recorded` (the one the recording ran on, if this machine lets hermit use it; else first), first, auto, a CPU number, or none; $HERMIT_CPU sets the default")
	// Flags may come after TRACE too (hermit replay t --ex help).
	var traces []string
	for rest := args; ; {
		if done, code := parseFlags(fs, rest); done {
			return code
		}
		if rest = fs.Args(); len(rest) == 0 {
			break
		}
		traces, rest = append(traces, rest[0]), rest[1:]
	}
	traceArg := ""
	if len(traces) > 0 {
		traceArg = traces[0]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	usage := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "hermit replay: "+format+"\n", args...)
		return 2
	}
	modes := 0
	for _, m := range []bool{autopilot, set["gdb-port"], gdb} {
		if m {
			modes++
		}
	}
	switch {
	case len(traces) > 1:
		return usage("give at most one TRACE (gdb's arguments go after --)")
	case modes > 1:
		return usage("--autopilot, --gdb-port and --gdb exclude each other")
	case gdbPort < 0 || gdbPort > 65535:
		return usage("--gdb-port %d: want a port from 0 to 65535", gdbPort)
	case len(gdbArgs) > 0 && !gdb:
		return usage("arguments after -- are for gdb, with --gdb")
	case debug != "" && debug != "sched" && debug != "rsp":
		return usage("--debug=%s: want sched or rsp", debug)
	case (set["gdb-host"] || keep) && !set["gdb-port"]:
		return usage("--gdb-host and --keep-listening go with --gdb-port")
	case (len(exs) > 0 || batch != "") && modes > 0:
		return usage("--ex and --batch are for the interactive debugger (no --autopilot, --gdb or --gdb-port)")
	case (set["onprocess"] || set["goto"]) && !set["gdb-port"] && !gdb:
		return usage("--onprocess and --goto go with --gdb-port or --gdb")
	case summary && !autopilot:
		return usage("--summary goes with --autopilot")
	}
	pin, err := cpuFlag(cpu, true)
	if err != nil {
		return usage("%v", err)
	}
	if modes == 0 {
		return runREPL(replConfig{trace: traceArg, cpu: pin, exs: exs, batch: batch})
	}
	if !autopilot {
		if set["gdb-host"] && !isLoopback(host) {
			fmt.Fprintf(os.Stderr, "hermit: warning: listening on %s: whoever reaches that address controls the replay and reads the recording's memory and files\n", host)
		}
		cfg := serveConfig{
			trace: traceArg, host: host, port: gdbPort, keepListening: keep,
			onProcess: onProcess, gotoEvent: gotoEvent, hasGoto: set["goto"], cpu: pin,
		}
		if debug == "rsp" {
			cfg.log = func(line string) { fmt.Fprintln(os.Stderr, "hermit: rsp", line) }
		}
		if gdb {
			cfg.host = "127.0.0.1"
			cfg.announce = func(string, string) {}
			cfg.ready = func(addr, exe string, here bool) int { return runGDB(addr, exe, here, gdbArgs) }
		}
		return serveGDB(cfg)
	}
	dir, err := trace.Resolve(trace.DefaultDir(), traceArg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit replay: %v\n", err)
		return exitHermit
	}
	rec, err := replay.Open(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit replay: %s: %v\n", dir, err)
		return exitHermit
	}
	defer rec.Close()
	if progress {
		defer showProgress("replaying", rec.Events, func() (uint64, int64) { return rec.Progress(), -1 })()
	}
	stdout, waitOut := passOn(os.Stdout)
	defer waitOut()
	stderr, waitErr := stdout, func() {}
	if !sameFile(os.Stdout, os.Stderr) {
		// (2>&1: one pipe for both keeps their order.)
		stderr, waitErr = passOn(os.Stderr)
		defer waitErr()
	}
	opts := replay.Options{
		Stdout: stdout, Stderr: stderr, CPU: recordedCPU(pin, rec),
		Warn: func(msg string) { fmt.Fprintf(os.Stderr, "hermit: warning: %s\n", msg) },
	}
	if debug == "sched" {
		opts.Debug = schedLogger()
	}
	// The guest has a process group of its own (a signal from outside
	// would take it off its recording): ^C, SIGTERM (a CI job's timeout)
	// and SIGHUP stop the replay here, and hermit says where. SIGQUIT,
	// which the terminal sends with ^\, is ignored, as in a run.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	var stoppedBy atomic.Int32
	opts.Started = func(kill func()) {
		go func() {
			for s := range sigs {
				if s != syscall.SIGQUIT {
					stoppedBy.Store(int32(s.(syscall.Signal)))
					kill()
					return
				}
			}
		}()
	}
	res, err := rec.Play(opts)
	// The program's last output comes before what hermit says of it.
	waitOut()
	waitErr()
	if sig := stoppedBy.Load(); sig != 0 && errors.Is(err, replay.ErrStopped) {
		return sayStopped(sig, rec.Progress(), rec.Events)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit: %v\n", err)
		return exitHermit
	}
	if summary {
		printSummary(os.Stderr, res, recordedFlags(rec.Settings))
	}
	return res.ExitCode
}

// recordedFlags are the run flags a recording was made with, as far as
// printSummary reads them.
func recordedFlags(s recorder.Settings) *runFlags {
	return &runFlags{seed: s.Seed, noTSC: !s.TrapTSC, cpuid: s.CPUID, ch: chaosFlags{heur: s.Heuristic, pts: s.ChaosPoints}}
}

// isLoopback says whether host names a loopback address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// runGDB runs gdb attached to the stub at addr, reading the program's
// files from this machine if here (gdbSysroot), and returns -1 (hermit's
// status is the replay's) or, if gdb cannot start, hermit's failure.
func runGDB(addr, exe string, here bool, args []string) int {
	path, err := exec.LookPath("gdb")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hermit replay --gdb: gdb is not installed (apt-get install gdb), or use --gdb-port N with another debugger")
		return exitHermit
	}
	argv := []string{"-q", "-l", "10000"}
	if here {
		argv = append(argv, "-ex", sysrootHere)
	}
	argv = append(append(argv, "-ex", "target extended-remote "+addr), args...)
	argv = append(argv, exe)
	cmd := exec.Command(path, argv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Start()
	if err == nil {
		debugger.Store(cmd.Process)
		err = cmd.Wait()
		debugger.Store(nil)
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintf(os.Stderr, "hermit replay --gdb: %v\n", err)
			return exitHermit
		}
	}
	return -1
}

// sayStopped says that signal sig (^C, a CI job's SIGTERM) stopped a
// replay at event at of the recording's events, and returns hermit's
// status for it.
func sayStopped(sig int32, at, events uint64) int {
	by := signalName(sig)
	if sig == int32(syscall.SIGINT) {
		by = "^C"
	}
	fmt.Fprintf(os.Stderr, "hermit: replay stopped by %s at event %d of %d\n", by, at, events)
	return 128 + int(sig)
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, "; ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// passOn returns the file the replayed program writes in place of f,
// hermit's stdout or stderr, and a function that waits until all it
// wrote has been passed on. A pipe or socket, whose reader may go
// (`hermit replay | head`), is not given to the program: the write that
// found it gone would fail there, and not in the recording, and the
// replay would diverge. The program writes into a pipe of hermit's, and
// hermit writes the bytes to f: once f's reader has gone, hermit dies of
// SIGPIPE, as a program writing to a pipe does, with no message.
func passOn(f *os.File) (*os.File, func()) {
	if st, err := f.Stat(); err != nil || st.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f, func() {}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return f, func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := io.Copy(f, r); err != nil {
			// Not a reader gone (that is SIGPIPE): the rest of the
			// output is lost, and the program goes on as recorded.
			_, _ = io.Copy(io.Discard, r)
		}
		r.Close()
	}()
	var once sync.Once
	return w, func() {
		once.Do(func() {
			w.Close()
			<-done
		})
	}
}

// sameFile reports whether a and b are the same file (2>&1).
func sameFile(a, b *os.File) bool {
	sa, err1 := a.Stat()
	sb, err2 := b.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
