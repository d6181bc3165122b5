package repl

import (
	"fmt"
	"sort"
	"strings"
)

// command is one entry of the command table.
type command struct {
	name    string
	aliases []string
	args    string // usage after the name
	help    string // one line
	run     func(r *REPL, args []string) error
	// complete lists candidates for the argument being typed (nil: none).
	complete func(r *REPL, args []string) []string
}

// commands is the command table; help lists it in this order.
var commands []*command

func init() {
	commands = []*command{
		{name: "step", aliases: []string{"s"}, args: "[N]", help: "run to the Nth next event (default 1), or a breakpoint hit before it", run: (*REPL).cmdStep},
		{name: "next", aliases: []string{"n"}, args: "[N]", help: "run to the Nth next event of the current thread, or a breakpoint hit before it", run: (*REPL).cmdNext},
		{name: "continue", aliases: []string{"c"}, help: "run to the next breakpoint, watchpoint or the end", run: (*REPL).cmdContinue},
		{name: "finish", aliases: []string{"fin"}, help: "run until the selected frame's function returns to its caller (a breakpoint on the way stops first)", run: (*REPL).cmdFinish},
		{name: "reverse-step", aliases: []string{"rs"}, args: "[N]", help: "go back N stops: events, and breakpoint hits between them (default 1)", run: (*REPL).cmdReverseStep},
		{name: "reverse-continue", aliases: []string{"rc"}, help: "go back to the previous breakpoint or watchpoint hit, or the start", run: (*REPL).cmdReverseContinue},
		{name: "reverse-stepi", aliases: []string{"rsi"}, args: "[N]", help: "go back N instructions of the current thread (default 1)", run: (*REPL).cmdReverseStepi},
		{name: "reverse-next", aliases: []string{"rn"}, args: "[N]", help: "go back to the Nth previous event of the current thread", run: (*REPL).cmdReverseNext},
		{name: "checkpoint", help: "keep this stop to come back to (restart N)", run: (*REPL).cmdCheckpoint},
		{name: "restart", args: "[N]", help: "go to checkpoint N, or the start", run: (*REPL).cmdRestart},
		{name: "goto", args: "N|start|end", help: "replay to event N (forwards or backwards)", run: (*REPL).cmdGoto},
		{name: "events", aliases: []string{"e"}, args: "[N] [COUNT]", help: "list COUNT recorded events (default 20) from N (default the stop's): syscalls, host answers, threads and processes starting and ending, thread switches", run: (*REPL).cmdEvents},
		{name: "when", help: "show the event number, thread and time of the stop", run: (*REPL).cmdWhen},
		{name: "stepi", aliases: []string{"si"}, args: "[N]", help: "execute N instructions of the current thread (default 1)", run: (*REPL).cmdStepi},
		{name: "thread", aliases: []string{"t"}, args: "[TID]", help: "show or choose the current thread", run: (*REPL).cmdThread},
		{name: "break", aliases: []string{"b"}, args: "syscall NAME | signal NAME | tid T | event N | func SYMBOL | addr ADDR | exit | SYMBOL | *ADDR | FILE:LINE [if EXPR]", help: "stop there when running forwards or backwards (a function not found yet is pending until a library defines it); with if, a code breakpoint stops only where EXPR (as print takes it, with C's operators: i == 10 && p->n > 2) is nonzero in the stopped thread", run: (*REPL).cmdBreak, complete: (*REPL).completeBreak},
		{name: "tbreak", args: "as break", help: "a code breakpoint deleted once it has stopped", run: (*REPL).cmdTbreak, complete: (*REPL).completeBreak},
		{name: "advance", args: "FUNCTION|FILE:LINE|*ADDR", help: "run to there, as a tbreak there and continue (a breakpoint on the way stops first)", run: (*REPL).cmdAdvance, complete: (*REPL).completeSymbol},
		{name: "condition", args: "N [EXPR]", help: "make breakpoint N stop only where EXPR is nonzero, or (no EXPR) at every hit", run: (*REPL).cmdCondition},
		{name: "watch", aliases: []string{"w"}, args: "ADDR|SYMBOL [LEN]", help: "stop after a write to LEN bytes (1, 2, 4 or 8; default the symbol's size, else 8) in a debug register", run: (*REPL).cmdWatch, complete: (*REPL).completeVariable},
		{name: "delete", aliases: []string{"d"}, args: "[N] | checkpoint N", help: "delete breakpoint N, or all of them, or checkpoint N", run: (*REPL).cmdDelete},
		{name: "info", aliases: []string{"i"}, args: "threads|regs|maps|fds|breakpoints|process|checkpoints", help: "show what the replay has at the stop", run: (*REPL).cmdInfo, complete: completeWords("threads", "regs", "maps", "fds", "breakpoints", "process", "checkpoints")},
		{name: "x", args: "/FMT ADDR|EXPR", help: "examine memory at an address, or where a pointer points (an array, a function: where it is); FMT is count, format (x d u o t c a s i) and size (b h w g), as gdb's", run: (*REPL).cmdExamine},
		{name: "disas", args: "[ADDR] [N]", help: "disassemble N instructions (default 10) at ADDR (default the pc)", run: (*REPL).cmdDisas, complete: (*REPL).completeSymbol},
		{name: "bt", aliases: []string{"backtrace", "where"}, args: "[N]", help: "show the current thread's stack (N frames at most)", run: (*REPL).cmdBacktrace},
		{name: "frame", aliases: []string{"f"}, args: "[N]", help: "show the frame print, x and list look at (the program's own innermost by default), or choose frame N of bt", run: (*REPL).cmdFrame},
		{name: "up", args: "[N]", help: "choose the frame N outer (default 1): its caller's", run: (*REPL).cmdUp},
		{name: "down", args: "[N]", help: "choose the frame N inner (default 1)", run: (*REPL).cmdDown},
		{name: "list", aliases: []string{"l"}, args: "[FILE:LINE|FUNC]", help: "show the source lines around the pc (or around FILE:LINE, FUNC)", run: (*REPL).cmdList, complete: (*REPL).completeSymbol},
		{name: "print", aliases: []string{"p"}, args: "EXPR|$REG|ADDR", help: "show a variable (a local of the current function, or a global) with .field, ->field, [i], * and &, and C's integer operators on them; a register, a number", run: (*REPL).cmdPrint, complete: (*REPL).completeVariable},
		{name: "help", aliases: []string{"h", "?"}, args: "[CMD]", help: "list the commands, or explain one", run: (*REPL).cmdHelp, complete: func(*REPL, []string) []string { return commandNames() }},
		{name: "quit", aliases: []string{"q", "exit"}, help: "end the session", run: func(r *REPL, _ []string) error { r.quit = true; return nil }},
	}
}

// lookup finds a command by name or alias, or by an unambiguous prefix of
// its name.
func lookup(name string) *command {
	var found *command
	n := 0
	for _, c := range commands {
		if c.name == name {
			return c
		}
		for _, a := range c.aliases {
			if a == name {
				return c
			}
		}
		if strings.HasPrefix(c.name, name) {
			found, n = c, n+1
		}
	}
	if n == 1 {
		return found
	}
	return nil
}

// commandNames lists every command name, sorted.
func commandNames() []string {
	var out []string
	for _, c := range commands {
		out = append(out, c.name)
	}
	sort.Strings(out)
	return out
}

// Complete returns the completions of the last word of line, each the
// whole line so completed.
func (r *REPL) Complete(line string) []string {
	fields := strings.Fields(line)
	if len(fields) == 0 || (len(fields) == 1 && !strings.HasSuffix(line, " ")) {
		prefix := ""
		if len(fields) == 1 {
			prefix = fields[0]
		}
		return withPrefix(commandNames(), prefix, "")
	}
	c := lookup(fields[0])
	if c == nil || c.complete == nil {
		return nil
	}
	args := fields[1:]
	word := ""
	if !strings.HasSuffix(line, " ") {
		word, args = args[len(args)-1], args[:len(args)-1]
	}
	head := strings.TrimSuffix(line, word)
	return withPrefix(c.complete(r, args), word, head)
}

// withPrefix returns head+w for each w of words that starts with prefix.
func withPrefix(words []string, prefix, head string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, head+w)
		}
	}
	return out
}

func completeWords(words ...string) func(*REPL, []string) []string {
	return func(_ *REPL, args []string) []string {
		if len(args) > 0 {
			return nil
		}
		return words
	}
}

func (r *REPL) cmdHelp(args []string) error {
	if len(args) > 0 {
		c := lookup(args[0])
		if c == nil {
			return fmt.Errorf("unknown command %q", args[0])
		}
		r.printf("%s\n  %s\n", strings.TrimSpace(c.name+" "+c.args), c.help)
		if len(c.aliases) > 0 {
			r.printf("  also: %s\n", strings.Join(c.aliases, ", "))
		}
		return nil
	}
	for _, c := range commands {
		name := c.name
		if len(c.aliases) > 0 {
			name += " (" + strings.Join(c.aliases, ", ") + ")"
		}
		r.printf("  %-26s %s\n", name, c.help)
	}
	r.printf("Event numbers are those of 'hermit trace dump'; thread ids those the program saw.\n")
	return nil
}

// wantArgs checks the number of arguments.
func wantArgs(name string, args []string, min, max int) error {
	switch {
	case len(args) < min:
		return fmt.Errorf("%s: missing argument; \"help %s\" shows its use", name, name)
	case len(args) > max:
		return fmt.Errorf("%s: too many arguments; \"help %s\" shows its use", name, name)
	}
	return nil
}
