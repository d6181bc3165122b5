package main

import (
	"fmt"
	"os"
	"path/filepath"

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
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "hermit replay: "+format+"\n", args...)
		return exitHermit
	}
	dir, err := trace.Resolve(trace.DefaultDir(), cfg.trace)
	if err != nil {
		return fail("%v", err)
	}
	rec, err := replay.Open(dir)
	if err != nil {
		return fail("%s: %v", dir, err)
	}
	defer rec.Close()
	s, err := replay.NewSession(rec.Starter(replay.Options{
		Stdout: os.Stdout, Stderr: os.Stderr, CPU: cfg.cpu,
		Warn: func(msg string) { fmt.Fprintf(os.Stderr, "hermit: warning: %s\n", msg) },
	}))
	if err != nil {
		return fail("%v", err)
	}
	defer s.Close()
	rs, err := replay.NewREPLSession(rec, s)
	if err != nil {
		return fail("%s: %v", dir, err)
	}
	defer rs.Close()
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
			return fail("--batch: %v", err)
		}
		defer f.Close()
		if err := r.Run(f, false); err != nil {
			return fail("--batch %s: %v", cfg.batch, err)
		}
	case interactive:
		hist := filepath.Join(trace.DefaultDir(), "repl_history")
		if os.MkdirAll(filepath.Dir(hist), 0o700) != nil {
			hist = ""
		}
		if err := r.Terminal(os.Stdin, os.Stdout, hist); err != nil {
			return fail("%v", err)
		}
	default:
		if err := r.Run(os.Stdin, false); err != nil {
			return fail("reading commands: %v", err)
		}
	}
	return 0
}
