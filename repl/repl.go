// Package repl is hermit's interactive debugger: a recording as a numbered
// sequence of events that one steps through forwards and backwards, with
// registers, memory, disassembly, backtraces and source lines at every
// stop. It drives a Session (session.go), which package replay implements,
// and knows nothing of ptrace: its tests use a fake.
//
// Commands come one per line, from a terminal (term.go, with history and
// completion) or from a script; output depends on nothing but the
// recording, so transcripts of two replays are byte-identical.
package repl

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/hermitdbg/hermit/repl/debuginfo"
	"io"
	"strings"
)

// REPL holds the state of one debugging session: the current thread, the
// breakpoints, and where output goes.
type REPL struct {
	s   Session
	out io.Writer
	// cur is the current thread (guest tid); 0 for the stop's thread.
	cur int
	bps []*breakpoint
	// nextBp numbers breakpoints from 1, as gdb does; temp: the ones
	// being made are tbreak's.
	nextBp int
	temp   bool
	// syms caches each process's symbols (symbols.go); lastSpace is the
	// one last read, which names code once the recording has ended.
	syms      map[int]*procSymbols
	lastSpace *debuginfo.Space
	// pos is where the replay is among the stops of a forward run, so
	// that reverse-continue can find the stop before it (breaks.go).
	pos position
	// before is the syscall event the last stop stood before (its result
	// is not in the recording), whose result the next stop reports.
	before *Event
	// quit is set by the quit command.
	quit bool
	// lastLine is the last command typed at the terminal, which an empty
	// line repeats (term.go).
	lastLine string
	// frameSel is the frame chosen with frame, up or down (frames.go).
	frameSel *frameChoice
}

// New returns a REPL over s that writes to out.
func New(s Session, out io.Writer) *REPL {
	return &REPL{s: s, out: out, nextBp: 1, syms: map[int]*procSymbols{}}
}

// errQuit ends Run.
var errQuit = errors.New("quit")

// Run executes the commands read from in, one per line, until the input
// ends or a quit command. A failing command prints its error and the
// next one runs. With echo, each command is printed after a "(hermit) "
// prompt first, so that a transcript shows what produced what.
func (r *REPL) Run(in io.Reader, echo bool) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if echo {
			fmt.Fprintf(r.out, "%s%s\n", Prompt, line)
		}
		if r.Exec(line) {
			return nil
		}
	}
	return sc.Err()
}

// Prompt is the interactive prompt.
const Prompt = "(hermit) "

// Exec runs one command line and reports whether the session should end.
// Errors are printed as one line.
func (r *REPL) Exec(line string) (quit bool) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(r.out, "internal error running %q: %v\n", line, p)
		}
	}()
	if err := r.exec(line); err != nil {
		fmt.Fprintf(r.out, "%v\n", err)
	}
	return r.quit
}

func (r *REPL) exec(line string) error {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return nil
	}
	name, rest, _ := strings.Cut(line, " ")
	// gdb's x/FMT: the format is part of the command word.
	if c, fmtArg, ok := strings.Cut(name, "/"); ok {
		name, rest = c, "/"+fmtArg+" "+rest
	}
	cmd := lookup(name)
	if cmd == nil {
		return fmt.Errorf("unknown command %q; \"help\" lists the commands", name)
	}
	return cmd.run(r, strings.Fields(rest))
}

// PrintStop prints the line of the stop the replay is at.
func (r *REPL) PrintStop() { r.printStop(r.s.Where()) }

// printf writes formatted output.
func (r *REPL) printf(format string, args ...any) {
	fmt.Fprintf(r.out, format, args...)
}

// thread is the current thread: the one chosen with `thread`, if still
// live, else the last stop's, else the first live one.
func (r *REPL) thread() (Thread, error) {
	ts := r.s.Threads()
	if len(ts) == 0 {
		return Thread{}, errors.New("no live thread (the recording has ended)")
	}
	for _, want := range []int{r.cur, r.s.Where().Tid} {
		for _, t := range ts {
			if want != 0 && t.Tid == want {
				return t, nil
			}
		}
	}
	return ts[0], nil
}
