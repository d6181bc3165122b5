package repl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/chzyer/readline"
)

// The terminal front end: a prompt with line editing, history kept in a
// file, tab completion of commands and their arguments. Ctrl-C at the
// prompt clears the line; while a command runs it interrupts the replay,
// which stops and prints where; Ctrl-D ends the session.

// IsTerminal says whether f is a terminal.
func IsTerminal(f *os.File) bool { return readline.IsTerminal(int(f.Fd())) }

// Terminal runs the REPL on the terminal in, out until quit or Ctrl-D.
// history names the history file ("" for none).
func (r *REPL) Terminal(in io.ReadCloser, out io.Writer, history string) error {
	rl, err := readline.NewEx(&readline.Config{
		Prompt:          Prompt,
		HistoryFile:     history,
		HistoryLimit:    1000,
		AutoComplete:    completer{r},
		InterruptPrompt: "^C",
		EOFPrompt:       "quit",
		Stdin:           in,
		Stdout:          out,
	})
	if err != nil {
		return fmt.Errorf("the terminal: %w", err)
	}
	// Only this goroutine reads: Close does not hang (readline #217).
	defer rl.Close()
	r.out = rl.Stdout()
	for {
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		line = r.repeat(line)
		if r.interruptible(func() bool { return r.Exec(line) }) {
			return nil
		}
	}
}

// repeats are the commands an empty line at the terminal runs again, as
// in gdb: those that move the replay a step at a time.
var repeats = map[string]bool{
	"step": true, "next": true, "stepi": true, "continue": true,
	"reverse-step": true, "reverse-next": true, "reverse-stepi": true, "reverse-continue": true,
}

// repeat returns the line to run for a line typed at the terminal: the
// last command again for an empty one, if it moves the replay.
func (r *REPL) repeat(line string) string {
	if strings.TrimSpace(line) != "" {
		r.lastLine = line
		return line
	}
	name, _, _ := strings.Cut(strings.TrimSpace(r.lastLine), " ")
	if c := lookup(name); c != nil && repeats[c.name] {
		return r.lastLine
	}
	return line
}

// interruptible runs f with Ctrl-C (SIGINT, the terminal being out of raw
// mode while a command runs) interrupting the replay instead of ending
// hermit.
func (r *REPL) interruptible(f func() bool) bool {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-c:
				r.s.Interrupt()
			case <-done:
				return
			}
		}
	}()
	defer func() {
		signal.Stop(c)
		close(done)
	}()
	defer r.showProgress()()
	return f()
}

// showProgress shows, once a command has run for half a second, how far
// the replay is, on one line of stderr that it rewrites; the function it
// returns stops and erases it.
func (r *REPL) showProgress() func() {
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		shown := false
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		start := time.Now()
		for {
			select {
			case <-stop:
				if shown {
					fmt.Fprint(os.Stderr, "\r\033[K")
				}
				return
			case <-tick.C:
				if time.Since(start) >= 500*time.Millisecond {
					fmt.Fprintf(os.Stderr, "\r[replaying: event %d of %d; Ctrl-C stops]\033[K", r.s.Progress(), r.s.Len())
					shown = true
				}
			}
		}
	}()
	return func() {
		close(stop)
		<-finished
	}
}

// completer adapts Complete to readline.
type completer struct{ r *REPL }

// Do implements readline.AutoCompleter: the candidates' remainders after
// what is typed, and how much of the word they complete is typed, which
// readline shows in front of each (with 0 it listed "d cktrace sename"
// for bad, backtrace and basename).
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	typed := string(line[:pos])
	var out [][]rune
	for _, full := range c.r.Complete(typed) {
		out = append(out, []rune(full[len(typed):]+" "))
	}
	word := typed[strings.LastIndexAny(typed, " \t")+1:]
	return out, len([]rune(word))
}
