package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/repl"
	"github.com/hermitdbg/hermit/replay"
	"github.com/hermitdbg/hermit/trace"
)

// replConfig says how to run the interactive debugger.
type replConfig struct {
	trace string
	cpu   int
	// exs are commands to run (--ex), then exit; batch a file of them.
	exs   []string
	batch string
}

// runREPL opens the interactive debugger on a replay of cfg.trace: on a
// terminal with a prompt, history and completion; otherwise it runs the
// commands from --ex, --batch or stdin, without prompts, and exits.
func runREPL(cfg replConfig) int {
	rec, err := openRecording(cfg.trace)
	if err != nil {
		return replayFail("%v", err)
	}
	defer rec.Close()
	dir := rec.Dir
	s, err := newSession(rec, cfg.cpu)
	if err != nil {
		return replayFail("%v", err)
	}
	defer s.Close()
	rs, err := replay.NewREPLSession(rec, s)
	if err != nil {
		return replayFail("%s: %v", dir, err)
	}
	defer rs.Close()
	rs.SetProgress(reverseProgress())
	r := repl.New(rs, os.Stdout)
	interactive := len(cfg.exs) == 0 && cfg.batch == "" && repl.IsTerminal(os.Stdin)
	if interactive {
		fmt.Fprintf(os.Stderr, "hermit: replaying %s (%d events); \"help\" lists the commands, Ctrl-D quits\n", dir, rs.Len())
	}
	r.PrintStop()
	switch {
	case len(cfg.exs) > 0:
		for _, c := range cfg.exs {
			if r.Exec(c) {
				break
			}
		}
	case cfg.batch != "":
		f, err := os.Open(cfg.batch)
		if err != nil {
			return replayFail("--batch: %v", err)
		}
		defer f.Close()
		if err := r.Run(f, false); err != nil {
			return replayFail("--batch %s: %v", cfg.batch, err)
		}
	case interactive:
		hist := filepath.Join(trace.DefaultDir(), "repl_history")
		if os.MkdirAll(filepath.Dir(hist), 0o700) != nil {
			hist = ""
		}
		if err := r.Terminal(os.Stdin, os.Stdout, hist); err != nil {
			return replayFail("%v", err)
		}
	default:
		if err := r.Run(os.Stdin, false); err != nil {
			return replayFail("reading commands: %v", err)
		}
	}
	if err := rs.Failure(); err != nil {
		// As --autopilot and a debugger's replay end.
		fmt.Fprintf(os.Stderr, "hermit: %v\n", err)
		return exitHermit
	}
	return 0
}

// replayFail prints one line about a failed replay and returns hermit's
// failure status.
func replayFail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "hermit replay: "+format+"\n", args...)
	return exitHermit
}

// openRecording opens the trace a TRACE argument names ("" for the
// latest), for a debugger.
func openRecording(arg string) (*replay.Recording, error) {
	dir, err := trace.Resolve(trace.DefaultDir(), arg)
	if err != nil {
		return nil, err
	}
	rec, err := replay.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return rec, nil
}

// newSession starts a debugger's Session over rec's runs, the guest's
// output going to hermit's.
func newSession(rec *replay.Recording, cpu int) (*replay.Session, error) {
	// Each byte of output once, however often the debugger goes back.
	return replay.NewSessionWith(rec.Starter(replay.Options{
		CPU:  recordedCPU(cpu, rec),
		Warn: func(msg string) { fmt.Fprintf(os.Stderr, "hermit: warning: %s\n", msg) },
	}), replay.SessionOptions{Stdout: os.Stdout, Stderr: os.Stderr})
}

// recordedCPU resolves cpuRecorded: the CPU rec's header names, if this
// process may run there, else the first one.
func recordedCPU(pin int, rec *replay.Recording) int {
	if pin != cpuRecorded {
		return pin
	}
	n, err := strconv.Atoi(rec.Header.Flags[recorder.FlagCPU])
	if err != nil {
		return claimed(ptrace.FirstCPU())
	}
	if !ptrace.MayRunOn(n) {
		first := ptrace.FirstCPU()
		fmt.Fprintf(os.Stderr, "hermit: warning: the recording ran on CPU %d, which hermit may not use here; replaying on CPU %d (a program that reads its CPU number without a system call sees another)\n", n, first)
		return claimed(first)
	}
	return claimed(n)
}
