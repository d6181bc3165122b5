package repl

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// lines returns the transcript lines that are not echoed commands.
func outputOf(transcript string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(transcript, "\n"), "\n") {
		if !strings.HasPrefix(l, Prompt) {
			out = append(out, l)
		}
	}
	return out
}

// expectLines checks each output line against its regexp.
func expectLines(t *testing.T, out, want []string) {
	t.Helper()
	if len(out) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(out), len(want), strings.Join(out, "\n"))
	}
	for i, w := range want {
		if !regexp.MustCompile(w).MatchString(out[i]) {
			t.Errorf("line %d: %q does not match %q", i, out[i], w)
		}
	}
}

func TestErrors(t *testing.T) {
	cases := []struct{ cmd, want string }{
		{"frobnicate", `unknown command "frobnicate"; "help" lists the commands`},
		{"step x", `step: "x" is not a count (a whole number from 1)`},
		{"step 0", `step: "0" is not a count`},
		{"step 1 2", `step: too many arguments`},
		{"goto", `goto: missing argument`},
		{"goto 99", `goto: the recording has events 0 to 7`},
		{"goto -1", `goto: "-1" is not an event number`},
		{"break syscall nosuch", `break syscall: no syscall named "nosuch"`},
		{"break syscall clone", `break syscall clone: the recording has the threads and processes it made, not the calls ("events" lists them)`},
		{"break syscall execve", `break syscall execve: the recording has the programs it started, not the calls`},
		{"break signal SIGNOPE", `break signal: no signal named "SIGNOPE"`},
		{"break tid x", `break tid: "x" is not a thread id`},
		{"break event 99", `break event: "99" is not an event of the recording (0 to 7)`},
		{"break bogus 1", `break: "bogus": want syscall, signal, tid, event, func, addr or exit`},
		{"break addr 0", `break addr 0: no process maps 0x0`},
		{"break addr zz", `break addr: `},
		{"watch 0x600000 3", `watch: length 3: the debug registers watch 1, 2, 4 or 8 bytes`},
		{"delete 7", `delete: no breakpoint 7`},
		{"break *0x401000 if", `break: "if" needs a condition`},
		{"break syscall write if x", `break: a condition goes with a code breakpoint`},
		{"break exit if x", `break: a condition goes with a code breakpoint`},
		{"condition", `condition: usage: condition N [EXPRESSION]`},
		{"tbreak", `tbreak: missing argument`},
		{"tbreak exit if x", `tbreak: exit is no code breakpoint`},
		{"condition 7 x", `condition: no breakpoint 7`},
		{"info", `info: missing argument`},
		{"info nothing", `info: "nothing": want threads, regs, maps, fds, breakpoints, process or checkpoints`},
		{"x/4q 0x600000", `x/4q: unknown letter 'q'`},
		{"x/0x 0x600000", `x/0x: the count must be from 1 to 4096`},
		{"x/4xb 0x700000", `x: cannot read memory at 0x700000`},
		{"thread 99", `thread: no live thread 99`},
		{"thread x", `thread: "x" is not a thread id`},
		{"print $nosuch", `print: no register $nosuch`},
		{"help frob", `unknown command "frob"`},
		{"reverse-step", `reverse-step: at the start of the recording`},
		// Symbols: the fake's mappings have no file to read them from.
		{"print nosuch", `print: no symbol`},
		// As in gdb: break *ADDR is break addr ADDR (break SYMBOL:
		// TestPendingBreak).
		{"break *0", `break addr 0: no process maps 0x0`},
		{"break uaf.c:16", `break uaf.c:16: no source file named uaf.c in the line tables`},
		{"break uaf.c:0", `break uaf.c:0: "0" is not a line number`},
		{"watch nosuch", `watch: no symbol`},
		{"disas zz", `disas: no symbol`},
		{"disas 0x401000 0", `disas: "0" is not a count`},
		{"disas 0x700000", `cannot read code at 0x700000`},
		{"list nofile.c:x", `list: "nofile.c:x" is not FILE:LINE`},
		{"list nofile.c:3", `list: `},
		{"x/s zz", `x: no symbol`},
		{"bt 0", `bt: "0" is not a count`},
		{"rc", `reverse-continue: at the start of the recording`},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			out := outputOf(run(t, newFakeSession(), c.cmd+"\n"))
			if len(out) != 1 || !strings.HasPrefix(out[0], c.want) {
				t.Errorf("%s: got %q, want one line starting %q", c.cmd, out, c.want)
			}
		})
	}
}

// TestPendingBreak: a function no mapped file defines is a pending
// breakpoint, listed as such; break SYMBOL is break func SYMBOL, as in
// gdb. (tests/reverse_test.go sets one in a library the loader maps.)
func TestPendingBreak(t *testing.T) {
	out := outputOf(run(t, newFakeSession(), "break nosuch\nbreak func other\ninfo breakpoints\ndelete 1\ninfo breakpoints\n"))
	pending := ", pending: no such symbol yet; it is set once a library that defines it is loaded"
	want := []string{
		"breakpoint 1: function nosuch" + pending,
		"breakpoint 2: function other" + pending,
		"1   function nosuch" + pending,
		"2   function other" + pending,
		"2   function other" + pending,
	}
	if !slices.Equal(out, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(out, "\n"), strings.Join(want, "\n"))
	}
}

func TestStepAndBack(t *testing.T) {
	f := newFakeSession()
	out := outputOf(run(t, f, "step\nstep 2\nwhen\nreverse-step\nwhen\nnext\nwhen\ngoto end\nstep\nwhen\ngoto start\n"))
	want := []string{
		`^#0 tid 2 `, // step: boundary 0
		`^#2 tid 3 `, // step 2: boundaries 1, 2
		`^event 2 of 8, thread 3, time 0\.000000000s \(event\)$`, // when
		`^#1 tid 2 `, // reverse-step
		`^event 1 of 8, thread 2, time 0\.000000000s \(event\)$`, // when
		`^#5 tid 2 `, // next: thread 2's next event after 1 (4 is... 5 in the table)
		`^event 5 of 8, thread 2, time 0\.000000000s \(event\)$`, // when
		`^#7 tid 2 `, // goto end: the last boundary
		`^#8 the recording ends: the program exited with status 3$`, // step past the end
		`^event 8 of 8 \(end\)$`,                                    // when
		`^#0 tid 2 the start`,                                       // goto start
	}
	expectLines(t, out, want)
}

// TestBackFromTheEnd: at the recording's end, where no thread lives,
// reverse-next goes back to the last event of the thread that ended it
// (it said "no live thread").
func TestBackFromTheEnd(t *testing.T) {
	f := newFakeSession()
	out := outputOf(run(t, f, "goto end\nstep\nreverse-next\nwhen\nstep\nreverse-next 2\nwhen\n"))
	want := []string{
		`^#7 tid 2 `, // goto end: the last boundary, thread 2's exit_group
		`^#8 the recording ends`,
		`^#7 tid 2 `, // reverse-next: back to it
		`^event 7 of 8, thread 2, `,
		`^#8 the recording ends`,
		`^#5 tid 2 `, // reverse-next 2: thread 2's event before it
		`^event 5 of 8, thread 2, `,
	}
	expectLines(t, out, want)
}

func TestBreakSyscallForwardsAndBack(t *testing.T) {
	f := newFakeSession()
	out := outputOf(run(t, f, "break syscall write\ncontinue\ncontinue\ncontinue\nrc\nrc\nrc\n"))
	want := []string{
		`^breakpoint 1: syscall write$`,
		`^#1 tid 2 `, `^#2 tid 3 `, `^#6 tid 3 `, // forwards through the writes
		`^#2 tid 3 `, `^#1 tid 2 `, // and back
		`^no breakpoint before this stop; back at the start$`,
		`^#0 tid 2 the start`,
	}
	expectLines(t, out, want)
}

func TestCodeBreakpointBackwards(t *testing.T) {
	f := newFakeSession()
	// Forwards: the hits of 0x401000 at events 2, 5 and 5 again; then
	// back one at a time to each of them, the two in one span told apart.
	out := outputOf(run(t, f, "break *0x401000\nc\nc\nc\nrc\nrc\nrc\nc\n"))
	want := []string{
		`^breakpoint 1: address 0x401000`,
		`^#2 tid 2 breakpoint 1 at 0x401000`,
		`^#5 tid 3 breakpoint 1 at 0x401000`,
		`^#5 tid 3 breakpoint 1 at 0x401000`,
		`^#5 tid 3 breakpoint 1 at 0x401000`, // rc: the first of the two
		`^#2 tid 2 breakpoint 1 at 0x401000`,
		`^no breakpoint before this stop; back at the start$`,
		`^#0 tid 2 the start`,
		`^#2 tid 2 breakpoint 1 at 0x401000`,
	}
	expectLines(t, out, want)
	// The first rc found the earlier hit in the same span: the replay
	// restarted and took one hit less.
	if f.hit != 1 {
		t.Errorf("after the last continue the run took %d hits, want 1", f.hit)
	}
}

func TestEventAndCodeBreakpointsTogether(t *testing.T) {
	f := newFakeSession()
	// exit_group (event 7) comes after the hit at 0x402000 (span before
	// event 6); going back from the end finds exit first, then the hit.
	out := outputOf(run(t, f, "break addr 0x402000\nbreak exit\nc\nc\nc\nrc\nrc\n"))
	want := []string{
		`^breakpoint 1: address 0x402000`,
		`^breakpoint 2: exit and exit_group$`,
		`^#6 tid 2 breakpoint 1 at 0x402000`,
		`^#7 tid 2 `,
		`^#8 the recording ends`,
		`^#7 tid 2 `,
		`^#6 tid 2 breakpoint 1 at 0x402000`,
	}
	expectLines(t, out, want)
}

func TestInspect(t *testing.T) {
	f := newFakeSession()
	out := run(t, f, "step\ninfo threads\ninfo regs\nx/6cb 0x600000\nx/s 0x600000\nx/2xw 0x600010\nx/gx 0x600010\nx/2dh 0x600010\nprint $rsp\nthread 3\nthread\ninfo fds\ninfo breakpoints\nwatch 0x600010 8\ninfo breakpoints\ndelete\ninfo breakpoints\nquit\nstep\n")
	for _, want := range []string{
		"* tid 2      pid 2      main             ready  0x401002\n",
		"  tid 3      pid 2      worker           blocked in futex  0x401003\n",
		"rip       0x401002           \n",
		"rsp       0x7ffe0000         \n",
		"0x600000:\t104 'h'\t101 'e'\t108 'l'\t108 'l'\t111 'o'\t0 '\\x00'\n",
		"0x600000:\t\"hello\"\n",
		"0x600010:\t0x55667788\t0x11223344\n",
		"0x600010:\t0x1122334455667788\n",
		"0x600010:\t30600\t21862\n",
		"$rsp = 0x7ffe0000 (2147352576)\n",
		"current thread 3 (process 2)\n(hermit) thread\ncurrent thread 3 (process 2)\n",
		"0    /dev/null\n1    pipe:[42]\n",
		"no breakpoints\n(hermit) watch",
		"breakpoint 1: watchpoint on writes to 8 bytes at 0x600010 (0x600010)\n(hermit) info breakpoints\n1   watchpoint",
		"(hermit) delete\n(hermit) info breakpoints\nno breakpoints\n(hermit) quit\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
	if strings.HasSuffix(out, "(hermit) step\n") {
		t.Errorf("a command after quit ran:\n%s", out)
	}
	if len(f.wps) != 0 {
		t.Errorf("delete left watchpoints %v", f.wps)
	}
}

func TestComplete(t *testing.T) {
	r := New(newFakeSession(), nil)
	for _, c := range []struct {
		line string
		want []string
	}{
		{"rev", []string{"reverse-continue", "reverse-next", "reverse-step", "reverse-stepi"}},
		{"info th", []string{"info threads"}},
		{"break sys", []string{"break syscall"}},
		{"break syscall exit_g", []string{"break syscall exit_group"}},
		{"quit ", nil},
	} {
		if got := r.Complete(c.line); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("Complete(%q) = %q, want %q", c.line, got, c.want)
		}
	}
	// The terminal gets the remainders and how much of the word is
	// typed, which readline shows in front of each: whole words.
	line := []rune("break syscall exit_g")
	rest, n := completer{r}.Do(line, len(line))
	if len(rest) != 1 || string(rest[0]) != "roup " || n != len("exit_g") {
		t.Errorf("Do(%q) = %q, %d; want [\"roup \"], %d", string(line), rest, n, len("exit_g"))
	}
}

func TestLookupPrefix(t *testing.T) {
	for name, want := range map[string]string{"c": "continue", "cont": "continue", "rc": "reverse-continue", "disas": "disas", "wh": "when", "s": "step", "st": "", "re": ""} {
		c := lookup(name)
		got := ""
		if c != nil {
			got = c.name
		}
		if got != want {
			t.Errorf("lookup(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestReverseStepToBreakpoint(t *testing.T) {
	f := newFakeSession()
	// From the hit at 0x401000 (span before event 2), step goes to event
	// 2; reverse-step comes back to the hit, not to event 1.
	out := outputOf(run(t, f, "break addr 0x401000\ncontinue\nstep\nreverse-step\nreverse-step\n"))
	want := []string{
		`^breakpoint 1: address 0x401000`,
		`^#2 tid 2 breakpoint 1 at 0x401000`,
		`^#2 tid 3 `,
		`^#2 tid 2 breakpoint 1 at 0x401000`,
		`^#1 tid 2 `,
	}
	expectLines(t, out, want)
}

// TestStepStopsAtBreakpoints: step and next stop at a breakpoint hit on
// the way to their event, as gdb's do and as reverse-step does going
// back (they replayed to the event, past the hits).
func TestStepStopsAtBreakpoints(t *testing.T) {
	f := newFakeSession()
	out := outputOf(run(t, f, "break addr 0x401000\ngoto 1\nstep\nstep\ngoto 4\nnext\nnext\nnext\n"))
	expectLines(t, out, []string{
		`^breakpoint 1: address 0x401000`,
		`^#1 tid 2 `,
		`^#2 tid 2 breakpoint 1 at 0x401000`, // step: the hit before event 2
		`^#2 tid 3 `,                         // step: on to event 2
		`^#4 tid 3 `,
		`^#5 tid 3 breakpoint 1 at 0x401000`, // next (to thread 3's event 6): a hit
		`^#5 tid 3 breakpoint 1 at 0x401000`, // its second
		`^#6 tid 3 `,                         // then thread 3's next event
	})
}

func TestStopLineDecodes(t *testing.T) {
	f := newFakeSession()
	f.events[1].HasResult, f.events[1].Result = true, 5
	out := outputOf(run(t, f, "goto 1\ngoto 2\n"))
	expectLines(t, out, []string{
		`^#1 tid 2 write\(1, "hello", 5\) = 5$`,  // the recorded result
		`^#2 tid 3 write\(1, "hello", 5\) = \?$`, // none recorded: before the call
	})
}

func TestResultOfTheCallStoodBefore(t *testing.T) {
	f := newFakeSession()
	f.results = map[uint64]int64{1: 5, 2: -2}
	out := outputOf(run(t, f, "goto 1\nstep\nstep\nstep\n"))
	expectLines(t, out, []string{
		`^#1 tid 2 write\(1, "hello", 5\) = \?$`,
		`^#1 write returned 5$`, // learnt once the replay made the call
		`^#2 tid 3 write`,
		`^#2 write returned -1 ENOENT \(No such file or directory\)$`,
		`^#4 tid 3 openat`, // event 3 is the host's: no boundary
		`^#5 tid 2 `,       // event 4's result is not known: no line
	})
}

// TestNoResultGoingBack: a move backwards from a stop before a call does
// not make the call: no line with its result.
func TestNoResultGoingBack(t *testing.T) {
	f := newFakeSession()
	f.results = map[uint64]int64{1: 5, 2: -2}
	out := outputOf(run(t, f, "goto 2\ngoto 1\n"))
	expectLines(t, out, []string{
		`^#2 tid 3 write\(1, "hello", 5\) = \?$`,
		`^#1 tid 2 write\(1, "hello", 5\) = \?$`,
	})
}

func TestEvents(t *testing.T) {
	out := outputOf(run(t, newFakeSession(), "events 0 6\nevents 99\nevents x\n"))
	expectLines(t, out, []string{
		`^#0    tid 2    read$`,
		`^#1    tid 2    write$`,
		`^     --- thread 3 runs \(was 2\) ---$`,
		`^#2    tid 3    write$`,
		`^#3    tid 3    a host answer$`,
		`^#4    tid 3    openat$`,
		`^     --- thread 2 runs \(was 3\) ---$`,
		`^#5    tid 2    read$`,
		`^events: the recording has events 0 to 7$`,
		`^events: "x" is not a number$`,
	})
}

// TestEmptyLineRepeats: at the terminal an empty line runs the last
// command again when it moves the replay (step, next, stepi, continue and
// their reverse forms, by any alias), as in gdb; not other commands.
func TestEmptyLineRepeats(t *testing.T) {
	r := New(newFakeSession(), io.Discard)
	for _, tc := range []struct{ typed, want string }{
		{"", ""}, // nothing before
		{"n 2", "n 2"},
		{"", "n 2"},
		{"  ", "n 2"},
		{"rsi", "rsi"},
		{"", "rsi"},
		{"info threads", "info threads"},
		{"", ""},
		{"x/4gx 0x600000", "x/4gx 0x600000"},
		{"", ""},
	} {
		if got := r.repeat(tc.typed); got != tc.want {
			t.Errorf("after %q typed: runs %q, want %q", r.lastLine, got, tc.want)
		}
	}
}

// TestHelpLines: help for a command without arguments has no trailing
// blank on its usage line.
func TestHelpLines(t *testing.T) {
	for _, c := range []string{"continue", "checkpoint", "step"} {
		var b strings.Builder
		New(newFakeSession(), &b).Exec("help " + c)
		first, _, _ := strings.Cut(b.String(), "\n")
		if first == "" || strings.HasSuffix(first, " ") {
			t.Errorf("help %s: usage line %q", c, first)
		}
	}
}

// TestEventSummaryEnd: events shows the recording's last event, which
// repeats the root process's exit to end the trace, as the end, not as a
// second exit of the process.
func TestEventSummaryEnd(t *testing.T) {
	exit := Event{Kind: EventExit, Group: true, Pid: 2, Status: 0x300}
	if got, want := eventSummary(exit, false), "+++ process 2 exited, status 0x300 +++"; got != want {
		t.Errorf("the process's exit: %q, want %q", got, want)
	}
	if got, want := eventSummary(exit, true), "the recording ends (process 2's status 0x300)"; got != want {
		t.Errorf("the last event: %q, want %q", got, want)
	}
}

// TestCodeBreakpointCondition: a condition that cannot be evaluated (the
// fake has no symbols) stops the continue with a line saying why, and
// condition N takes it away.
func TestCodeBreakpointCondition(t *testing.T) {
	f := newFakeSession()
	out := outputOf(run(t, f, "break *0x401000 if nosuch == 1\ninfo breakpoints\nc\ncondition 1\ninfo breakpoints\nc\n"))
	want := []string{
		`^breakpoint 1: address 0x401000`,
		`^1 +address 0x401000.* if nosuch == 1$`,
		`^breakpoint 1: condition nosuch == 1: .*no symbol.* \(stopped\)$`,
		`^#2 tid 2 breakpoint 1 at 0x401000`,
		`^breakpoint 1 now stops at every hit$`,
		`^1 +address 0x401000`,
		`^#5 tid 3 breakpoint 1 at 0x401000`,
	}
	expectLines(t, out, want)
	if strings.Contains(out[5], " if ") {
		t.Errorf("info breakpoints after condition 1: %q still shows a condition", out[5])
	}
}

// TestTbreak: a tbreak is gone once it has stopped, forwards or
// backwards; advance runs to a place and leaves no breakpoint behind,
// wherever it stopped; tbreak takes only code breakpoints.
func TestTbreak(t *testing.T) {
	f := newFakeSession()
	out := outputOf(run(t, f, "tbreak *0x401000\nc\ninfo breakpoints\nc\nrc\ntbreak *0x401000\nrc\ninfo breakpoints\nadvance *0x401000\ninfo breakpoints\ntbreak syscall write\n"))
	want := []string{
		`^breakpoint 1: temporary, address 0x401000`,
		`^#2 tid 2 breakpoint 1 at 0x401000`,
		`^no breakpoints$`,
		`^#8 the recording ends`, // nothing stops it
		`^no breakpoint before this stop; back at the start$`,
		`^#0 tid 2 the start`,
		`^breakpoint 2: temporary, address 0x401000`,
		`^reverse-continue: at the start of the recording$`,
		`^2 +temporary, address 0x401000`, // still there: it never stopped
		`^breakpoint 3: temporary, address 0x401000`,
		`^#2 tid 2 breakpoint [23] at 0x401000`,
		`^no breakpoints$`, // both temporary ones there went
		`^tbreak: syscall write is no code breakpoint: break sets it$`,
	}
	expectLines(t, out, want)
}

// TestPrintArithmetic: print takes C's integer operators, also in an
// expression that starts with a number, and a number alone or with an
// offset is still shown as an address is.
func TestPrintArithmetic(t *testing.T) {
	f := newFakeSession()
	out := outputOf(run(t, f, "print 2 * 3 + 1\nprint 0x10+4\nprint (7 - 9) / 2 == -1\nprint 1 +\n"))
	want := []string{
		`^2 \* 3 \+ 1 = 7$`,
		`^0x10\+4 = 0x14 \(20\)$`,
		`^\(7 - 9\) / 2 == -1 = 1$`,
		`^print: syntax error: the expression ends early$`,
	}
	expectLines(t, out, want)
}
