package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/hermitdbg/hermit/replay"
	"github.com/hermitdbg/hermit/trace"
)

func replayMain(args []string) int {
	fs := flag.NewFlagSet("hermit replay", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: hermit replay [flags] [TRACE]

Runs a recorded program again from its trace alone (TRACE: a trace
directory, a trace name in the trace directory, or by default the latest
recording). The program sees the recorded inputs, files and host answers,
so it prints the same bytes and exits with the same status, with the same
thread ids, pids and addresses. Replay runs inside a throwaway copy of the
recorded files: it reads nothing of the host's files and writes nothing
back. If the program stops doing what the recording did, replay stops at
the first difference, says where, and exits 125.

  --autopilot        replay to the end with no debugger
  --gdb-port N       serve the GDB remote protocol (not yet: next release)
  (no flag)          the interactive debugger (not yet: next release)

Flags:
`)
		fs.PrintDefaults()
	}
	var autopilot, progress bool
	var gdbPort int
	var cpu, debug string
	fs.BoolVar(&autopilot, "autopilot", false, "replay to the end without a debugger")
	fs.IntVar(&gdbPort, "gdb-port", 0, "serve the GDB remote protocol on 127.0.0.1:`N` (not implemented yet)")
	fs.BoolVar(&progress, "progress", false, "show how far the replay is on stderr")
	fs.StringVar(&debug, "debug", "", "log internals to stderr: `sched` logs every stop and scheduling decision")
	fs.StringVar(&cpu, "cpu", "auto", "pin hermit and the guest to one CPU: `auto`, a CPU number, or none")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(os.Stderr, "hermit replay: give at most one TRACE")
		return 2
	}
	if !autopilot {
		what := "the interactive debugger"
		if gdbPort != 0 {
			what = "--gdb-port"
		}
		fmt.Fprintf(os.Stderr, "hermit replay: %s is not implemented yet; use --autopilot\n", what)
		return 2
	}
	pin, err := cpuFlag(cpu)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit replay: %v\n", err)
		return 2
	}
	dir, err := trace.Resolve(trace.DefaultDir(), fs.Arg(0))
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
	stop := handleSignals()
	defer stop()
	if progress {
		defer showProgress("replaying", rec.Events, func() (uint64, int64) { return rec.Progress(), -1 })()
	}
	opts := replay.Options{
		Stdout: os.Stdout, Stderr: os.Stderr, CPU: pin,
		Warn: func(msg string) { fmt.Fprintf(os.Stderr, "hermit: warning: %s\n", msg) },
	}
	if debug == "sched" {
		opts.Debug = schedLogger()
	}
	res, err := rec.Play(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit: %v\n", err)
		return exitHermit
	}
	return res.ExitCode
}
