package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// The interactive debugger, scripted: `hermit replay TRACE` with the
// commands on stdin (not a terminal: no prompts), over a recording of the
// multi-threaded C guest built with -g.

// replScript is the session of TestREPLScript. Each command is preceded
// by an `echo`-like marker, `when`, so that the transcript can be cut.
var replScript = []string{
	"step 20",
	"when",
	"break syscall write",
	"continue",
	"info threads",
	"info regs",
	"x/4gx $rsp",
	"disas",
	"delete 1",
	"break func worker",
	"continue",
	"bt",
	"list",
	"print global",
	"break syscall write",
	"info regs",
	"step",
	"reverse-step",
	"info regs",
	"goto end",
	"rc",
	"quit",
}

// runREPLScript runs the script over dir and returns hermit's stdout.
func runREPLScript(t *testing.T, dir string, script []string) testenv.Result {
	t.Helper()
	r := testenv.RunWith(t, testenv.Opts{Timeout: clientTimeout, Stdin: []byte(strings.Join(script, "\n") + "\n")},
		testenv.Hermit(t), "replay", dir)
	if r.Exit != 0 {
		t.Fatalf("hermit replay (REPL): %s", describe(r))
	}
	return r
}

func TestREPLScript(t *testing.T) {
	requireDebugging(t, "cc")
	dir, rec := recordThreads(t)
	g := parseGuest(t, rec.Stdout)
	first := runREPLScript(t, dir, replScript)
	out := string(first.Stdout)

	// The stops at a write once the breakpoint is set (`step 20` may end
	// at one too): a line each with the event, the thread and the decoded
	// call.
	writeStop := regexp.MustCompile(`(?m)^#(\d+) tid (\d+) write\(1, "[^"]*"(?:\.\.\.)?, \d+\)`)
	set := strings.Index(out, "breakpoint 1: syscall write")
	if set < 0 {
		t.Fatalf("the transcript does not show the breakpoint set:\n%s", out)
	}
	stops := writeStop.FindAllStringSubmatch(out[set:], -1)
	if len(stops) < 2 {
		t.Fatalf("the transcript shows %d stops at a write, want the continue's and the rc's:\n%s", len(stops), out)
	}
	// info threads: tids the program printed, the stop's thread current.
	rows := regexp.MustCompile(`(?m)^([* ]) tid (\d+) +pid (\d+) `).FindAllStringSubmatch(out, -1)
	if len(rows) == 0 {
		t.Fatalf("info threads shows no thread:\n%s", out)
	}
	for _, row := range rows {
		if !strings.Contains(g.tids(), row[2]) || row[3] != strconv.Itoa(g.pid) {
			t.Errorf("info threads shows tid %s of pid %s; the program printed pid %d, tids %s", row[2], row[3], g.pid, g.tids())
		}
		if row[1] == "*" && row[2] != stops[0][2] {
			t.Errorf("info threads marks tid %s current, the stop was thread %s's", row[2], stops[0][2])
		}
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^rip +0x[0-9a-f]+ `),
		regexp.MustCompile(`(?m)^0x7ff[0-9a-f]+:\t0x[0-9a-f]{16}\t0x[0-9a-f]{16}$`),  // x/4gx $rsp
		regexp.MustCompile(`(?m)^=> 0x[0-9a-f]+ `),                                   // disas marks the pc
		regexp.MustCompile(`(?m)^#\d+ +0x[0-9a-f]+ .*\b(worker|thread_main|main)\b`), // bt names the C functions
		regexp.MustCompile(`(?m)^(=>|  ) \d+ +.*`),                                   // list
		regexp.MustCompile(`(?m)^global = \d+$`),
		regexp.MustCompile(`(?m)^#\d+ write returned \d+$`),                                  // the stop's call, once made
		regexp.MustCompile(`(?m)^event \d+ of \d+, thread \d+, time \d+\.\d{9}s \(event\)$`), // when
	} {
		if !want.MatchString(out) {
			t.Errorf("the transcript lacks %s:\n%s", want, out)
		}
	}
	// reverse-step returns exactly to where step left from: the registers
	// printed before the step and after the reverse-step are equal.
	regs := regexp.MustCompile(`(?ms)^rax .*?^gs_base +0x[0-9a-f]+ *$`).FindAllString(out, -1)
	if len(regs) < 3 || regs[1] != regs[2] {
		t.Errorf("the registers after reverse-step differ from those before the step:\n%v", regs)
	}
	// rc from the end goes back to the last write of the recording: the
	// program's last line, from main.
	last := stops[len(stops)-1]
	if !strings.Contains(last[0], `"global = `+g.final) || last[2] != strconv.Itoa(g.mainTid) {
		t.Errorf("rc from the end stopped at %q, want main's write of \"global = %s\"", last[0], g.final)
	}
	// Two replays: byte-identical transcripts.
	second := runREPLScript(t, dir, replScript)
	if d := firstDiff(first.Stdout, second.Stdout); d != "" {
		t.Errorf("two runs of the script differ: %s", d)
	}
}

// TestREPLGoAndPython: the stop at an openat shows its path decoded, in a
// Go program (whose backtrace names the runtime's functions) and in
// Python.
func TestREPLGoAndPython(t *testing.T) {
	requireDebugging(t, "go")
	openatRE := func(path string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^#\d+ tid \d+ openat\(AT_FDCWD, "` + regexp.QuoteMeta(path) + `", O_RDONLY[^)]*\) = \?`)
	}
	t.Run("go", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "trace")
		if rec := record(t, dir, nil, []string{testenv.BuildGo(t, "gochan")}); rec.Exit != 3 {
			t.Fatalf("record gochan: %s", describe(rec))
		}
		out := string(runREPLScript(t, dir, []string{"break syscall openat", "continue", "bt", "quit"}).Stdout)
		// The Go runtime's first open, at start-up.
		if !openatRE("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size").MatchString(out) {
			t.Errorf("no decoded openat of the runtime's first file:\n%s", out)
		}
		if !regexp.MustCompile(`(?m)^#\d+ +0x[0-9a-f]+ runtime\.\S+ at \S+\.(s|go):\d+$`).MatchString(out) {
			t.Errorf("bt names no runtime function with its source line:\n%s", out)
		}
	})
	t.Run("python", func(t *testing.T) {
		// The system's interpreter: a python3 on PATH may be a wrapper
		// (pyenv's shim is a shell script) that opens far more first.
		python := "/usr/bin/python3"
		if _, err := os.Stat(python); err != nil {
			python = testenv.Require(t, "python3")
		}
		data := filepath.Join(t.TempDir(), "data.txt")
		if err := os.WriteFile(data, []byte("hello\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "trace")
		if rec := record(t, dir, nil, []string{python, "-c", "print(open(" + strconv.Quote(data) + ").read().strip())"}); rec.Exit != 0 {
			t.Fatalf("record python: %s", describe(rec))
		}
		// Python opens its modules first: continue until the script's file.
		script := []string{"break syscall openat"}
		for range 400 {
			script = append(script, "continue")
		}
		out := string(runREPLScript(t, dir, append(script, "quit")).Stdout)
		if !openatRE(data).MatchString(out) {
			t.Errorf("no decoded openat of %s:\n%s", data, out)
		}
	})
}

// TestREPLGoingBackRepeatsNothing: going back replays from the start; the
// run left behind must not make the call it was stopped at, so the
// program's first line, whose write the replay stopped before, is never
// printed.
func TestREPLGoingBackRepeatsNothing(t *testing.T) {
	requireDebugging(t, "cc")
	dir, _ := recordThreads(t)
	out := string(runREPLScript(t, dir, []string{"break syscall write", "continue", "reverse-step", "continue", "quit"}).Stdout)
	if n := strings.Count(out, "write(1, \"main pid"); n != 2 {
		t.Fatalf("want the stop at main's first write twice, got %d:\n%s", n, out)
	}
	if strings.Contains(out, "\nmain pid ") || strings.HasPrefix(out, "main pid ") {
		t.Errorf("the program's first line was written, though every run stopped before its write:\n%s", out)
	}
}

// TestREPLExAfterTrace: --ex runs a command and exits, given before or
// after TRACE (gdb takes its options either side of the program).
func TestREPLExAfterTrace(t *testing.T) {
	dir, _ := recordThreads(t)
	for _, args := range [][]string{
		{"replay", "--ex", "goto end", dir},
		{"replay", dir, "--ex", "goto end"},
	} {
		r := testenv.Run(t, clientTimeout, testenv.Hermit(t), args...)
		if r.Exit != 0 || !regexp.MustCompile(`(?m)^#\d+ tid \d+ exit_group\(\d+\) = \?`).Match(r.Stdout) {
			t.Errorf("hermit %s: want exit 0 and the last event, the exit_group; %s", strings.Join(args, " "), describe(r))
		}
	}
}

// TestREPLBacktraceFromNull: a crash in a call through a NULL function
// pointer stops at pc 0, where no code is; bt shows that frame and, above
// it, the caller, from the return address on top of the stack, as gdb
// does (it printed nothing).
func TestREPLBacktraceFromNull(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "trace")
	if rec := record(t, dir, nil, []string{testenv.BuildC(t, "null_call.c", "-O0", "-g")}); rec.Exit != 139 {
		t.Fatalf("record null_call: want the SIGSEGV (139); %s", describe(rec))
	}
	r := runREPLScript(t, dir, []string{"continue", "bt"})
	re := regexp.MustCompile(`(?m)^#\d+ tid \d+ --- SIGSEGV --- at 0x0\n#0  0x0 \?\?\n#1  0x[0-9a-f]+ call_it at \S*null_call\.c:(\d+)\n#2  0x[0-9a-f]+ main at `)
	m := re.FindStringSubmatch(string(r.Stdout))
	if m == nil {
		t.Fatalf("continue, bt: want the fault at 0x0 and a backtrace through call_it and main; %s", describe(r))
	}
	src, _ := os.ReadFile(filepath.Join(testenv.GuestsDir(t), "null_call.c"))
	if line, _ := strconv.Atoi(m[1]); line < 1 || !strings.Contains(strings.Split(string(src), "\n")[line-1], "NULL CALL") {
		t.Errorf("bt names line %s of null_call.c for call_it, not the call through the pointer", m[1])
	}
}

// TestREPLBreakFileLine: break FILE:LINE stops at that line of the
// program's source, in the thread that runs it; at a function's opening
// line it stops past the prologue, at the function's first line of code
// (it said FILE:LINE was not supported).
func TestREPLBreakFileLine(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "trace")
	// -O0: main sets up a frame, whose prologue break skips (in
	// optimized code without one gdb and hermit stop at the entry).
	if rec := record(t, dir, nil, []string{testenv.BuildC(t, "tls_vars.c", "-O0")}); rec.Exit != 0 {
		t.Fatalf("hermit record tls_vars: %s", describe(rec))
	}
	src, err := os.ReadFile(filepath.Join(testenv.GuestsDir(t), "tls_vars.c"))
	if err != nil {
		t.Fatal(err)
	}
	lineOf := func(text string) int {
		for i, l := range strings.Split(string(src), "\n") {
			if strings.Contains(l, text) {
				return i + 1
			}
		}
		t.Fatalf("tls_vars.c has no line with %q", text)
		return 0
	}
	errnoLine, mainLine, firstLine := lineOf("errno = 33;"), lineOf("int main("), lineOf("if (argc > 1)")
	r := runREPLScript(t, dir, []string{fmt.Sprintf("break tls_vars.c:%d", errnoLine), fmt.Sprintf("break tls_vars.c:%d", mainLine), "continue", "continue"})
	out := string(r.Stdout)
	for _, want := range []string{
		fmt.Sprintf(`(?m)^#\d+ tid \d+ breakpoint 2 at 0x[0-9a-f]+ +main at \S*tls_vars\.c:%d$`, firstLine),
		fmt.Sprintf(`(?m)^#\d+ tid \d+ breakpoint 1 at 0x[0-9a-f]+ +worker at \S*tls_vars\.c:%d$`, errnoLine),
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the transcript lacks %s:\n%s", want, out)
		}
	}
}

// TestREPLStepBackFromACall: reverse-stepi from a system call's stop
// lands on its syscall instruction, and `when` says the stop is a step
// (it said "breakpoint": the Session's own stop where it counted).
func TestREPLStepBackFromACall(t *testing.T) {
	requireDebugging(t, "cc")
	r := runREPLScript(t, recordC(t, "long_loop.c"), []string{
		"break syscall exit_group", "continue", "reverse-stepi", "when", "disas",
	})
	out := string(r.Stdout)
	mustMatch(t, regexp.MustCompile(`(?m)^#\d+ tid \d+ exit_group\(0\) = \?`), out, "continue to exit_group")
	mustMatch(t, regexp.MustCompile(`(?m)^#\d+ tid \d+ step at 0x[0-9a-f]+ `), out, "the stop line of reverse-stepi")
	mustMatch(t, regexp.MustCompile(`(?m)^event \d+ of \d+, thread \d+, time [0-9.]+s \(step\)$`), out, "when after reverse-stepi")
	mustMatch(t, regexp.MustCompile(`(?m)^=> 0x[0-9a-f]+ 0f 05 +syscall$`), out, "disas after reverse-stepi: at the syscall instruction")
}

// TestREPLPrintLocals: print shows the locals and parameters of the
// program's function that made the call the replay stopped at (below it,
// the C library or Go's runtime), with fields, elements, pointers followed
// and addresses taken; a global too; and x examines what a pointer points
// to; up and frame choose another frame to look at. print knew only
// globals' names, and x looked at a pointer's own address.
func TestREPLPrintLocals(t *testing.T) {
	t.Run("c", func(t *testing.T) {
		requireDebugging(t, "cc")
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "trace")
		if rec := record(t, dir, nil, []string{testenv.BuildC(t, "locals.c", "-O0")}); rec.Exit != 0 {
			t.Fatalf("hermit record locals: %s", describe(rec))
		}
		out := string(runREPLScript(t, dir, []string{"break syscall write", "continue",
			"print inner", "print total", "print scale", "print *corner", "print corner->label", "print origin.y",
			"print sides", "print sides[2]", "print &sides[1]", "print counter", "print msg", "print sides[3]", "print nosuch",
			"x/3dw sides", "x/2dw corner", "x/s corner->label", "list", "list main",
			"up", "print p", "frame 0", "print scale", "quit"}).Stdout)
		for _, want := range []string{
			`(?m)^inner = 94$`, `(?m)^total = 60$`, `(?m)^scale = 2$`,
			`(?m)^\*corner = \{x = 5, y = 6, label = 0x[0-9a-f]+ "corner"\}$`,
			`(?m)^corner->label = 0x[0-9a-f]+ "corner"$`, `(?m)^origin\.y = 4$`,
			`(?m)^sides = \{10, 20, 30\}$`, `(?m)^sides\[2\] = 30$`, `(?m)^&sides\[1\] = \(int \*\) 0x7ff[0-9a-f]+$`,
			`(?m)^counter = 7$`, `(?m)^msg = "inner 94\\n"`,
			`(?m)^print: index 3 is outside sides, of 3 elements$`, `(?m)^print: no symbol "nosuch"`,
			// x examines where an array is, and where a pointer points.
			`(?m)^0x7ff[0-9a-f]+:\t10\t20\t30$`, `(?m)^0x7ff[0-9a-f]+:\t5\t6$`, `(?m)^0x[0-9a-f]+:\t"corner"$`,
			// up: main's frame, with its own p; frame 0: the C library's
			// write, which has no scale.
			`(?m)^#2  0x[0-9a-f]+ main at \S+locals\.c:\d+$`, `(?m)^p = \{x = 5, y = 6, label = 0x[0-9a-f]+ "corner"\}$`,
			`(?m)^#0  0x[0-9a-f]+ write\+0x[0-9a-f]+ in \S+libc\.so\.6$`, `(?m)^print: no symbol "scale"`,
		} {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("the transcript lacks %s:\n%s", want, out)
			}
		}
		// list marks the write's line; list main, whose lines do not
		// hold it, marks none (it marked main's first).
		if marks := regexp.MustCompile(`(?m)^=> .*$`).FindAllString(out, -1); len(marks) != 1 || !strings.Contains(marks[0], "write(1, msg") {
			t.Errorf("list and list main mark %q, want only the write's line:\n%s", marks, out)
		}
	})
	t.Run("go", func(t *testing.T) {
		requireDebugging(t, "go")
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "trace")
		if rec := record(t, dir, nil, []string{testenv.BuildGo(t, "golocals")}); rec.Exit != 0 {
			t.Fatalf("hermit record golocals: %s", describe(rec))
		}
		// At area's entry its parameters are in registers; at its write
		// they are on its frame (optimized code: location lists).
		out := string(runREPLScript(t, dir, []string{"break func main.area", "continue", "print scale", "print p.Label", "x/2dg p",
			"break syscall write", "continue", "print total", "print nums[1]", "print *p", "print main.counter", "quit"}).Stdout)
		for _, want := range []string{
			`(?m)^scale = 2$`, `(?m)^p\.Label = "corner"$`, `(?m)^0x[0-9a-f]+:\t5\t6$`, `(?m)^total = 60$`, `(?m)^nums\[1\] = 20$`,
			`(?m)^\*p = \{X = 5, Y = 6, Label = "corner"\}$`, `(?m)^main\.counter = 7$`,
		} {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("the transcript lacks %s:\n%s", want, out)
			}
		}
	})
}

// TestREPLFinish: finish from a stop in the C library's write runs
// until the program's function that called it (the selected frame)
// returns: the thread is back in main, after the call, with the result
// in rax, and main's locals print. Going back one instruction from there
// lands in the function again, and finish returns to the same place.
func TestREPLFinish(t *testing.T) {
	requireDebugging(t, "cc")
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "trace")
	if rec := record(t, dir, nil, []string{testenv.BuildC(t, "locals.c", "-O0")}); rec.Exit != 0 {
		t.Fatalf("hermit record locals: %s", describe(rec))
	}
	out := string(runREPLScript(t, dir, []string{"break syscall write", "continue", "finish", "print p", "reverse-stepi", "finish", "quit"}).Stdout)
	mustMatch(t, regexp.MustCompile(`(?m)^Run till exit from #1 0x[0-9a-f]+ area at \S*locals\.c:\d+$`), out, "finish names the frame it finishes")
	back := regexp.MustCompile(`(?m)^#\d+ tid \d+ returned to 0x[0-9a-f]+ +main at \S*locals\.c:\d+ \(rax 94\)$`)
	if got := back.FindAllString(out, -1); len(got) != 2 || got[0] != got[1] {
		t.Errorf("want two finishes back in main, at the same place, with area's 94 in rax; got %q:\n%s", got, out)
	}
	mustMatch(t, regexp.MustCompile(`(?m)^p = \{x = 5, y = 6, label = 0x[0-9a-f]+ "corner"\}$`), out, "main's local after finish")
	mustMatch(t, regexp.MustCompile(`(?m)^#\d+ tid \d+ step at 0x[0-9a-f]+ +area at \S*locals\.c:\d+$`), out, "reverse-stepi from the return: in area again")
}

// TestREPLAtTheEnd: at the end of a recording, a breakpoint set there is
// one reverse-continue goes back to (it said "no live thread"), and a
// step back from the end of a program a signal killed lands on the
// signal's stop, the crash (it landed on the call before it).
func TestREPLAtTheEnd(t *testing.T) {
	requireDebugging(t, "cc")
	dir := recordC(t, "locals.c")
	out := string(runREPLScript(t, dir, []string{"continue", "break area", "reverse-continue", "bt 1"}).Stdout)
	mustMatch(t, regexp.MustCompile(`(?m)^breakpoint 1: function area at 0x[0-9a-f]+`), out, "break area at the end")
	mustMatch(t, regexp.MustCompile(`(?m)^#\d+ tid \d+ breakpoint 1 at 0x[0-9a-f]+ +area at .*locals\.c:\d+$`), out, "reverse-continue from the end to it")
	crash := filepath.Join(t.TempDir(), "trace")
	if rec := record(t, crash, nil, cGuest("named_fault.c")(t)); rec.Exit != 139 {
		t.Fatalf("hermit record named_fault.c: want status 139; %s", describe(rec))
	}
	for _, back := range []string{"reverse-step", "reverse-stepi"} {
		out := string(runREPLScript(t, crash, []string{"continue", "continue", back}).Stdout)
		if strings.Count(out, "--- SIGSEGV ---") != 2 || !strings.Contains(out, "the recording ends: the program exited with status 139") {
			t.Errorf("continue to the SIGSEGV, continue to the end, %s: want the SIGSEGV's stop again; the REPL printed:\n%s", back, out)
		}
	}
}

// TestREPLConditionalBreak: break LOC if EXPR stops a continue only where
// EXPR holds in the stopped thread (C's operators on its locals), and a
// reverse-continue goes back to the latest hit where it holds, past some
// 580 where it does not; condition N changes it, and info breakpoints
// shows it.
func TestREPLConditionalBreak(t *testing.T) {
	requireDebugging(t, "cc")
	t.Parallel()
	out := string(runREPLScript(t, recordC(t, "cond_loop.c"), []string{
		"break finished if id == 1", "continue", "print id", "delete",
		"break tick if i == 10 && id == 1", "info breakpoints", "reverse-continue", "print i", "print id",
		"reverse-stepi", "stepi", "print i", "condition 2 i == 299", "continue", "print i", "print id", "print i * 2 + 1", "quit"}).Stdout)
	mustMatch(t, regexp.MustCompile(`(?m)^#\d+ tid \d+ breakpoint 1 at 0x[0-9a-f]+ +finished at \S*cond_loop\.c:\d+\nid = 1$`), out, "continue to finished if id == 1")
	mustMatch(t, regexp.MustCompile(`(?m)^2 +function tick at 0x[0-9a-f]+ .* if i == 10 && id == 1$`), out, "info breakpoints shows the condition")
	mustMatch(t, regexp.MustCompile(`(?m)^#\d+ tid \d+ breakpoint 2 at 0x[0-9a-f]+ +tick at \S*cond_loop\.c:\d+\ni = 10\nid = 1$`), out, "reverse-continue to tick if i == 10 && id == 1")
	mustMatch(t, regexp.MustCompile(`(?m)^#\d+ tid \d+ step at 0x[0-9a-f]+ +tick at \S*cond_loop\.c:\d+\ni = 10$`), out, "a step back and forth comes back to the same hit")
	mustMatch(t, regexp.MustCompile(`(?m)^breakpoint 2 stops only if i == 299\n#\d+ tid \d+ breakpoint 2 at 0x[0-9a-f]+ +tick at \S*cond_loop\.c:\d+\ni = 299\nid = 1\ni \* 2 \+ 1 = 599$`), out, "condition 2 i == 299, continue, and arithmetic in print")
}
