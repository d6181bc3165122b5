package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// Reverse execution under a real gdb: the corruption that corrupt.c
// aborts on is found by going backwards from the abort.

// recordCorrupt records corrupt (-O0) and returns the trace and the
// recording, which aborts (134).
func recordCorrupt(t *testing.T) (string, testenv.Result) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, []string{testenv.BuildC(t, "corrupt.c", "-O0")})
	if rec.Exit != 134 {
		t.Fatalf("hermit record corrupt: want exit 134 (abort), got %s", describe(rec))
	}
	return dir, rec
}

// markedLine returns the line of corrupt.c that carries /* mark */.
func markedLine(t *testing.T, mark string) int {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(testenv.GuestsDir(t), "corrupt.c"))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, "/* "+mark+" */") {
			return i + 1
		}
	}
	t.Fatalf("corrupt.c has no /* %s */ line", mark)
	return 0
}

// gdbRegs is what the register comparisons print: every general register.
const gdbRegs = "info registers rax rbx rcx rdx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15 rip eflags"

func reverseCmds(addr string) []string {
	return []string{
		"target extended-remote " + addr,
		"continue",
		"watch -l balance",
		"reverse-continue",
		"bt",
		gdbRegs,
		"reverse-stepi 20",
		"stepi 20",
		gdbRegs,
		"reverse-next",
		"reverse-next",
		"reverse-finish",
		"reverse-continue",
		"reverse-continue", // at the first event
		"continue",
		"continue",
		"continue",
	}
}

// TestGDBReverse: continue to the abort, watch the global, and
// reverse-continue stops at the corrupting write in the other thread,
// with gdb's old and new values (going backwards: the value after the
// write, then before it) and the source line. 20 instructions back and 20
// forwards give the same registers; reverse-next goes to the start of the
// line and then to the line before; reverse-finish to the call; a
// reverse-continue with no write before says there is no more history.
// Forwards again, the watchpoint and the abort come back, and the guest's
// output and status are the recording's, printed once. Two sessions give
// the same transcript.
func TestGDBReverse(t *testing.T) {
	requireDebugging(t, "gdb")
	testenv.RequireDebugRegs(t)
	dir, rec := recordCorrupt(t)
	corruptLine, computeLine, callLine := markedLine(t, "CORRUPT"), markedLine(t, "COMPUTE"), markedLine(t, "CALL")
	lineRE := func(fn string, line int) *regexp.Regexp {
		return regexp.MustCompile(fmt.Sprintf(`(?m)^(?:0x[0-9a-f]+ in )?%s \(.*\) at \S*corrupt\.c:%d\n|^(?:0x[0-9a-f]+\t)?%d\t`, fn, line, line))
	}
	var first string
	for run := 0; run < 2; run++ {
		s := startReplay(t, dir)
		tr := runGDB(t, t.TempDir(), reverseCmds(s.addr)...)
		rep := s.wait(t)
		noClientErrors(t, tr, nil)

		mustMatch(t, regexp.MustCompile(`(?m)received signal SIGABRT, Aborted\.$`), tr.out(t, "continue", 0), "continue to the abort")
		back := tr.out(t, "reverse-continue", 0)
		mustMatch(t, regexp.MustCompile(fmt.Sprintf(`(?s)hit Hardware watchpoint \d+: -location balance\n\nOld value = -293\nNew value = 100\ncorrupt \(\) at \S*corrupt\.c:%d\n%d\t\tbalance = -v;`, corruptLine, corruptLine)), back, "reverse-continue to the corrupting write")
		mustMatch(t, regexp.MustCompile(`(?m)^#1  0x[0-9a-f]+ in corrupter \(arg=0x0\) at \S*corrupt\.c:\d+$`), tr.out(t, "bt", 0), "bt at the write (the corrupter thread, not main)")
		if a, b := tr.out(t, gdbRegs, 0), tr.out(t, gdbRegs, 1); a != b || !strings.Contains(a, "rip ") {
			t.Errorf("reverse-stepi 20 then stepi 20 changed the registers:\nbefore:\n%s\nafter:\n%s", a, b)
		}
		if out := tr.out(t, "reverse-stepi 20", 0); strings.Contains(out, "No more reverse-execution history") {
			t.Errorf("reverse-stepi 20 ran out of history:\n%s", out)
		}
		mustMatch(t, lineRE("corrupt", corruptLine), tr.out(t, "reverse-next", 0), "the first reverse-next (the start of the line)")
		if out := tr.out(t, "reverse-next", 0); strings.HasPrefix(out, "0x") {
			t.Errorf("the first reverse-next stopped mid-line:\n%s", out)
		}
		mustMatch(t, lineRE("corrupt", computeLine), tr.out(t, "reverse-next", 1), "the second reverse-next (the line before)")
		mustMatch(t, lineRE("corrupter", callLine), tr.out(t, "reverse-finish", 0), "reverse-finish (the call)")
		mustMatch(t, regexp.MustCompile(`(?m)^No more reverse-execution history\.$`), tr.out(t, "reverse-continue", 1), "reverse-continue with no write before")
		mustMatch(t, regexp.MustCompile(`(?m)^No more reverse-execution history\.$`), tr.out(t, "reverse-continue", 2), "reverse-continue at the first event")
		mustMatch(t, regexp.MustCompile(`(?s)hit Hardware watchpoint \d+: -location balance\n\nOld value = 100\nNew value = -293\n`), tr.out(t, "continue", 1), "continue forwards to the write")
		mustMatch(t, regexp.MustCompile(`(?m)received signal SIGABRT, Aborted\.$`), tr.out(t, "continue", 2), "continue to the abort again")
		mustMatch(t, regexp.MustCompile(`(?m)^Program terminated with signal SIGABRT, Aborted\.$`), tr.out(t, "continue", 3), "continue to the end")
		checkServedRun(t, rec, rep)
		if t.Failed() {
			t.Fatalf("session %d:\n%s", run, tr.text)
		}
		text := strings.ReplaceAll(tr.text, s.addr, "ADDR")
		if run == 0 {
			first = text
		} else if d := firstDiff([]byte(first), []byte(text)); d != "" {
			t.Fatalf("the second gdb session differs from the first at %s\nfirst:\n%s\nsecond:\n%s", d, first, text)
		}
	}
}

// TestGDBBackAndForth moves backwards and forwards 50 times (steps,
// watchpoint and breakpoint stops, a checkpoint) and then runs to the
// end: every pass finds the write again, and the guest's output and exit
// status are the recording's, each byte printed once.
func TestGDBBackAndForth(t *testing.T) {
	requireDebugging(t, "gdb")
	testenv.RequireDebugRegs(t)
	dir, rec := recordCorrupt(t)
	cmds := []string{"target extended-remote ADDR", "break check", "continue", "monitor checkpoint", "watch -l balance"}
	// A cycle of ten moves, from the breakpoint in check back to it.
	moves := []string{
		"reverse-continue",  // to the write
		"reverse-stepi 3",   //
		"stepi 2",           //
		"stepi",             // the write again
		"continue",          // over it: the watchpoint, forwards
		"reverse-stepi",     // before it
		"continue",          // over it again
		"continue",          // the breakpoint in check
		"monitor restart 1", // the same place, from the checkpoint
		"reverse-stepi 5",   // a little before it
	}
	for i := 0; i < 50; i++ {
		cmds = append(cmds, moves[i%len(moves)])
	}
	cmds = append(cmds, "delete", "continue", "continue")
	s := startReplay(t, dir)
	for i := range cmds {
		cmds[i] = strings.ReplaceAll(cmds[i], "ADDR", s.addr)
	}
	tr := runGDB(t, t.TempDir(), cmds...)
	rep := s.wait(t)
	noClientErrors(t, tr, nil)
	mustMatch(t, regexp.MustCompile(`(?m)^Checkpoint 1 at event \d+\.$`), tr.out(t, "monitor checkpoint", 0), "monitor checkpoint")
	// Every reverse-continue from the breakpoint in check finds the write.
	for n := 0; n < 5; n++ {
		if out := tr.out(t, "reverse-continue", n); !strings.Contains(out, "Old value = -293\nNew value = 100") {
			t.Errorf("reverse-continue %d did not stop at the corrupting write:\n%s", n, out)
		}
		if out := tr.out(t, "continue", 1+3*n); !strings.Contains(out, "Old value = 100\nNew value = -293") {
			t.Errorf("continue %d did not stop at the corrupting write:\n%s", 1+3*n, out)
		}
	}
	mustMatch(t, regexp.MustCompile(`(?m)^Program terminated with signal SIGABRT, Aborted\.$`), tr.steps[len(tr.steps)-1].out, "the run to the end")
	checkServedRun(t, rec, rep)
	if t.Failed() {
		t.Logf("transcript:\n%s", tr.text)
	}
}

// TestREPLReverseWatch finds the corruption in hermit's own debugger, from
// a piped script: watch the global at the abort, reverse-continue to the
// write in the corrupter thread (stopped before the store), three
// instructions back and forth to the same place, a checkpoint that brings
// the replay back there, and the run to the end with each line of the
// program's output printed once.
func TestREPLReverseWatch(t *testing.T) {
	requireDebugging(t, "cc")
	testenv.RequireDebugRegs(t)
	dir, rec := recordCorrupt(t)
	corruptLine := markedLine(t, "CORRUPT")
	out := string(runREPLScript(t, dir, []string{
		"continue", "watch balance", "reverse-continue", "x/i $pc",
		"reverse-stepi 3", "stepi 3", "checkpoint", "continue", "restart 1",
		"info checkpoints", "continue", "continue", "continue", "quit",
	}).Stdout)
	abort := mustMatch(t, regexp.MustCompile(`(?m)^#(\d+) tid (\d+) --- SIGABRT ---`), out, "continue to the abort")
	hit := mustMatch(t, regexp.MustCompile(fmt.Sprintf(`(?m)^#(\d+) tid (\d+) watchpoint 1: 0x[0-9a-f]+ written, pc (0x[0-9a-f]+)  corrupt at \S*corrupt\.c:%d$`, corruptLine)), out, "reverse-continue to the write")
	if hit[2] == abort[2] {
		t.Errorf("the write was found in thread %s, which aborted; the corrupter is another thread", hit[2])
	}
	mustMatch(t, regexp.MustCompile(`(?m)^=> `+hit[3]+` .*\bmov +%[a-z0-9]+,.*<balance>$`), out, "x/i $pc: the store is next")
	steps := regexp.MustCompile(`(?m)^#\d+ tid \d+ step at (0x[0-9a-f]+) `).FindAllStringSubmatch(out, -1)
	if len(steps) < 3 || steps[1][1] != hit[3] || steps[2][1] != hit[3] {
		t.Errorf("stepi 3 after reverse-stepi 3, and restart 1, should be back at %s; steps: %q\n%s", hit[3], steps, out)
	}
	mustMatch(t, regexp.MustCompile(`(?m)^checkpoint 1 at event `+hit[1]+`$`), out, "checkpoint")
	mustMatch(t, regexp.MustCompile(`(?m)^1: event `+hit[1]+`, `), out, "info checkpoints")
	mustMatch(t, regexp.MustCompile(`(?m)the recording ends: the program exited with status 134$`), out, "the run to the end")
	for _, line := range strings.SplitAfter(strings.TrimSuffix(string(rec.Stdout), "\n"), "\n") {
		if n := strings.Count(out, line); n != 1 {
			t.Errorf("the program's line %q was printed %d times, want once:\n%s", line, n, out)
		}
	}
}

// TestLLDBReverse: lldb runs backwards only from LLVM 21 on (it sends bc,
// which the stub serves); an older lldb refuses `process continue
// --reverse` itself, with a clear error, and nothing hangs: lldb ends and
// so does the replay.
func TestLLDBReverse(t *testing.T) {
	requireDebugging(t, "lldb")
	ver := testenv.Run(t, runTimeout, testenv.Require(t, "lldb"), "--version")
	m := regexp.MustCompile(`lldb version (\d+)\.`).FindSubmatch(ver.Stdout)
	if m == nil {
		t.Fatalf("lldb --version: %q", ver.Stdout)
	}
	major, _ := strconv.Atoi(string(m[1]))
	dir, _ := recordCorrupt(t)
	s := startReplay(t, dir)
	exe, root := lldbExe(t, s)
	tr := runLLDB(t, t.TempDir(), exe, "target modules search-paths add / "+root, "gdb-remote "+s.addr, "breakpoint set -n check", "process continue", "process continue --reverse")
	s.wait(t)
	out := tr.out(t, "process continue --reverse", 0)
	if major < 21 {
		if !strings.Contains(out, "error: unknown or ambiguous option") {
			t.Errorf("lldb %d: process continue --reverse should fail in lldb itself:\n%s", major, tr.text)
		}
		return
	}
	if !regexp.MustCompile(`(?m)^Process \d+ (stopped|resuming)`).MatchString(out) {
		t.Errorf("lldb %d: process continue --reverse did not stop:\n%s", major, tr.text)
	}
}

// TestReverseIntoLibrary: a breakpoint on puts, in libc, which the
// dynamic loader maps after the program starts, hits in a replay that
// starts again from the beginning: gdb's reverse-continue from the second
// call stops at the first (not at main, after running the recording to
// its end), and the REPL's continue after goto start stops at the first
// call. The loader maps a library whole, read-only, then its code over
// that: a breakpoint armed in between was lost.
func TestReverseIntoLibrary(t *testing.T) {
	dir := recordC(t, "libcalls.c")
	t.Run("gdb", func(t *testing.T) {
		requireDebugging(t, "gdb")
		s := startReplay(t, dir)
		tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "break main", "continue",
			"break puts", "continue", "continue", "reverse-continue", "print (char *)$rdi", "continue", "continue", "continue")
		s.wait(t)
		noClientErrors(t, tr, nil)
		mustMatch(t, regexp.MustCompile(`(?m)^Breakpoint 2, .*puts \(str=0x[0-9a-f]+ "call 1"\)`), tr.out(t, "continue", 2), "continue to the second call")
		back := tr.out(t, "reverse-continue", 0)
		mustMatch(t, regexp.MustCompile(`(?m)^Breakpoint 2, .*puts \(str=0x[0-9a-f]+ "call 0"\)`), back, "reverse-continue to the first call")
		if strings.Contains(back, "call 2") {
			t.Errorf("reverse-continue ran the recording past where it began (the program's later output):\n%s", back)
		}
		mustMatch(t, regexp.MustCompile(`(?m)^\$1 = 0x[0-9a-f]+ "call 0"$`), tr.out(t, "print (char *)$rdi", 0), "puts's argument")
		mustMatch(t, regexp.MustCompile(`(?m)^Breakpoint 2, .*puts \(str=0x[0-9a-f]+ "call 1"\)`), tr.out(t, "continue", 3), "continue to the second call again")
		if t.Failed() {
			t.Logf("gdb:\n%s", tr.text)
		}
	})
	t.Run("REPL", func(t *testing.T) {
		out := string(runREPLScript(t, dir, []string{"goto end", "break func puts", "goto start", "continue", "continue", "quit"}).Stdout)
		hits := regexp.MustCompile(`(?m)^#\d+ tid \d+ breakpoint 1 at 0x[0-9a-f]+  _?I?O?_?puts\+0x0 in \S*libc\.so\.6$`).FindAllString(out, -1)
		if len(hits) != 2 {
			t.Errorf("continue twice after goto start: want 2 stops at puts, got %d:\n%s", len(hits), out)
		}
	})
	// At the start only the program and the loader are mapped: break puts
	// is pending (it said "no symbol"), set once libc is mapped, and hits
	// each call; reverse-continue goes back to the one before.
	t.Run("REPL pending", func(t *testing.T) {
		out := string(runREPLScript(t, dir, []string{"break puts", "continue", "x/s $rdi", "continue", "continue", "x/s $rdi", "reverse-continue", "x/s $rdi", "quit"}).Stdout)
		mustMatch(t, regexp.MustCompile(`(?m)^breakpoint 1: function puts, pending: `), out, "break puts at the start")
		mustMatch(t, regexp.MustCompile(`(?m)^breakpoint 1: function puts at 0x[0-9a-f]+ .*libc\.so\.6$`), out, "the breakpoint set once libc is mapped")
		hits := regexp.MustCompile(`(?m)^#\d+ tid \d+ breakpoint 1 at 0x[0-9a-f]+  _?I?O?_?puts\+0x0 in \S*libc\.so\.6$`).FindAllString(out, -1)
		if len(hits) != 4 {
			t.Errorf("continue three times and reverse-continue: want 4 stops at puts, got %d:\n%s", len(hits), out)
		}
		args := regexp.MustCompile(`"call \d"`).FindAllString(out, -1)
		if want := []string{`"call 0"`, `"call 2"`, `"call 1"`}; !slices.Equal(args, want) {
			t.Errorf("puts's argument at the first, third and (reverse-continue) second call: got %q, want %q:\n%s", args, want, out)
		}
	})
}

// servedLines records lines.c printing n lines, and serves its replay.
func servedLines(t *testing.T, n string) (*stub, testenv.Result) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, []string{testenv.BuildC(t, "lines.c", "-O0"), n})
	if rec.Exit != 0 {
		t.Fatalf("hermit record lines: %s", describe(rec))
	}
	return startReplay(t, dir), rec
}

// lineDigit prints, at the entry of lines.c's write, the digit of the
// line it writes ("line N\n").
const lineDigit = "print ((char *)$rsi)[5]"

// TestGDBCatchSyscall: gdb's catch syscall stops at each write's entry
// and return going forwards (the return with the call's result in rax),
// at the latest write's entry going backwards, and at the start when no
// write comes before; forwards again from there it stops at the first
// write, and the program's lines are printed once.
func TestGDBCatchSyscall(t *testing.T) {
	requireDebugging(t, "gdb")
	s, rec := servedLines(t, "3")
	line := lineDigit
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "catch syscall write", "continue", "continue", "print $rax",
		"continue", line, "reverse-continue", line, "reverse-continue", "continue", line, "delete", "continue", "continue")
	rep := s.wait(t)
	noClientErrors(t, tr, regexp.MustCompile(`^No more reverse-execution history\.$`))
	entry := regexp.MustCompile(`(?m)^Catchpoint 1 \(call to syscall write\), `)
	mustMatch(t, entry, tr.out(t, "continue", 0), "continue to the first write's entry")
	mustMatch(t, regexp.MustCompile(`(?m)^Catchpoint 1 \(returned from syscall write\), `), tr.out(t, "continue", 1), "continue to its return")
	mustMatch(t, regexp.MustCompile(`(?m)^\$1 = 7$`), tr.out(t, "print $rax", 0), "its result")
	mustMatch(t, entry, tr.out(t, "continue", 2), "continue to the second write's entry")
	mustMatch(t, regexp.MustCompile(`(?m)^\$2 = 49 '1'$`), tr.out(t, line, 0), "the second write's line")
	mustMatch(t, entry, tr.out(t, "reverse-continue", 0), "reverse-continue to the first write's entry")
	mustMatch(t, regexp.MustCompile(`(?m)^\$3 = 48 '0'$`), tr.out(t, line, 1), "the first write's line")
	mustMatch(t, regexp.MustCompile(`(?m)^No more reverse-execution history\.$`), tr.out(t, "reverse-continue", 1), "reverse-continue with no write before")
	mustMatch(t, entry, tr.out(t, "continue", 3), "continue from the start to the first write")
	mustMatch(t, regexp.MustCompile(`(?m)^\$4 = 48 '0'$`), tr.out(t, line, 2), "the first write's line again")
	mustMatch(t, gdbAtEndRE, tr.out(t, "continue", 4), "continue to the end")
	mustMatch(t, gdbExitedRE, tr.out(t, "continue", 5), "continue from the end")
	checkServedRun(t, rec, rep)
	if t.Failed() {
		t.Logf("gdb:\n%s", tr.text)
	}
}

// TestGDBReverseStepiFromSyscall: reverse-stepi from a write's entry
// lands on its syscall instruction, in the same round of the loop (the
// recording holds host answers before each write; going back counted the
// next round's arrival there, and the write ran forwards).
func TestGDBReverseStepiFromSyscall(t *testing.T) {
	requireDebugging(t, "gdb")
	s, _ := servedLines(t, "4")
	line := lineDigit
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "catch syscall write", "continue", "continue", "continue",
		line, "reverse-stepi", "x/i $pc", line, "stepi", line)
	s.wait(t)
	mustMatch(t, regexp.MustCompile(`(?m)^\$1 = 49 '1'$`), tr.out(t, line, 0), "the second write's line")
	mustMatch(t, regexp.MustCompile(`\bsyscall\b`), tr.out(t, "x/i $pc", 0), "reverse-stepi from its entry: the syscall instruction")
	mustMatch(t, regexp.MustCompile(`(?m)^\$2 = 49 '1'$`), tr.out(t, line, 1), "the same write's line after reverse-stepi")
	mustMatch(t, regexp.MustCompile(`(?m)^\$3 = 49 '1'$`), tr.out(t, line, 2), "the same write's line after stepi")
	if t.Failed() {
		t.Logf("gdb:\n%s", tr.text)
	}
}

// TestGDBReverseToThreadStart: going back instruction by instruction in a
// thread stops at its first instruction, where its clone returned 0 in
// it, with "No more reverse-execution history." in that thread; and the
// session goes on from there. (Before, the step past it ran the thread
// out of the recorded schedule, into its own future, or failed with
// "thread is gone" and a broken session; a forked child's start did the
// same.)
func TestGDBReverseToThreadStart(t *testing.T) {
	requireDebugging(t, "gdb")
	dir, rec := recordThreads(t)
	s := startReplay(t, dir)
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "break thread_main", "continue",
		"reverse-stepi 400", "p $rax", "x/i $pc-2", "reverse-stepi", "delete", "continue", "continue")
	rep := s.wait(t)
	noClientErrors(t, tr, nil)
	mustMatch(t, regexp.MustCompile(`(?m)^No more reverse-execution history\.$`), tr.out(t, "reverse-stepi 400", 0), "reverse-stepi 400 from thread_main")
	mustMatch(t, regexp.MustCompile(`\A\$1 = 0\n\z`), tr.out(t, "p $rax", 0), "rax at the thread's start (its clone's 0)")
	mustMatch(t, regexp.MustCompile(`(?m)^\s+0x[0-9a-f]+ <\w+\+\d+>:\tsyscall\s*$`), tr.out(t, "x/i $pc-2", 0), "the instruction before the thread's first (its clone's syscall)")
	mustMatch(t, regexp.MustCompile(`(?m)^No more reverse-execution history\.$`), tr.out(t, "reverse-stepi", 0), "reverse-stepi at the thread's start")
	checkGDBExit(t, tr, 1, parseGuest(t, rec.Stdout).pid, rec.Exit)
	checkServedRun(t, rec, rep)
	if t.Failed() {
		t.Logf("gdb:\n%s", tr.text)
	}
}

// recordBump records bump.c at -O0 and returns the trace.
func recordBump(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	if rec := record(t, dir, nil, []string{testenv.BuildC(t, "bump.c", "-O0")}); rec.Exit != 0 || string(rec.Stdout) != "counter = 15\n" {
		t.Fatalf("hermit record bump: %s", describe(rec))
	}
	return dir
}

// recordC records the C guest src, built -O0 (every local can be
// printed), into a new trace directory, which it returns; the recording
// must exit 0.
func recordC(t *testing.T, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	if rec := record(t, dir, nil, []string{testenv.BuildC(t, src, "-O0")}); rec.Exit != 0 {
		t.Fatalf("hermit record %s: %s", src, describe(rec))
	}
	return dir
}

// gdbValues runs gdb's cmds over the replay of dir and returns what its
// prints ($N = V) showed.
func gdbValues(t *testing.T, dir string, cmds ...string) ([]string, testenv.Result) {
	t.Helper()
	args := []string{"replay", "--gdb", dir, "--", "-nx", "-batch"}
	for _, c := range cmds {
		args = append(args, "-ex", c)
	}
	r := hermitClient(t, args...)
	var vs []string
	for _, m := range regexp.MustCompile(`(?m)^\$\d+ = (.*)$`).FindAllStringSubmatch(string(r.Stdout), -1) {
		vs = append(vs, m[1])
	}
	return vs, r
}

// TestGDBReverseFromWatchStop: reverse-continue right after a watchpoint
// stopped going forwards goes back before the write it reported, then
// before each earlier one (it skipped the one just reported).
func TestGDBReverseFromWatchStop(t *testing.T) {
	requireDebugging(t, "gdb")
	testenv.RequireDebugRegs(t)
	t.Parallel()
	got, r := gdbValues(t, recordBump(t), "break main", "continue", "watch counter", "continue", "continue", "continue",
		"reverse-continue", "p counter", "reverse-continue", "p counter", "continue", "p counter")
	// Forwards 0→1→3→6; back before the write of 3 (counter 3), before
	// that of 2 (1); forwards the write of 2 again (3).
	if want := "3 1 3"; strings.Join(got, " ") != want {
		t.Errorf("counter after reverse-continue, reverse-continue, continue from the third write: want %s, got %v\n%s", want, got, describe(r))
	}
}

// TestGDBReverseToStepped: a breakpoint at a function's first
// instruction stops reverse-continue where gdb's next had stepped onto it
// (next steps into a call, then runs to its return), so reverse-next over
// a call works (reverse-continue went past every call, to the start).
func TestGDBReverseToStepped(t *testing.T) {
	requireDebugging(t, "gdb")
	t.Parallel()
	got, r := gdbValues(t, recordBump(t), "break main", "continue", "next", "break *bump", "reverse-continue", "p $rdi",
		"reverse-continue", "p $rdi", "continue", "p $rdi")
	if want := "5 4 5"; strings.Join(got, " ") != want {
		t.Errorf("bump's argument at *bump after next (the loop), reverse-continue, reverse-continue, continue: want %s, got %v\n%s", want, got, describe(r))
	}
}

// TestGDBReverseConditional: reverse-continue to a conditional breakpoint
// in a loop without system calls, where gdb tests the condition at every
// hit of two threads, stepping back off each and continuing back: it lands
// at the hit that meets it, then at an earlier one under the same
// breakpoint address, and continue goes forwards from there. (The search
// for each hit replayed the span from its boundary; hermit keeps the
// hits a search passed for the next reverse continue.)
func TestGDBReverseConditional(t *testing.T) {
	requireDebugging(t, "gdb")
	t.Parallel()
	got, r := gdbValues(t, recordC(t, "cond_loop.c"), "break finished if id == 1", "continue", "delete",
		"break tick if i == 290 && id == 1", "reverse-continue", "p i", "p id", "delete",
		"break tick if i == 280 && id == 1", "reverse-continue", "p i", "p id", "delete",
		"break tick if i == 285 && id == 1", "continue", "p i", "p id")
	if want := "290 1 280 1 285 1"; strings.Join(got, " ") != want {
		t.Errorf("i and id after reverse-continue to i == 290, to i == 280, continue to i == 285 (thread 1): want %s, got %v\n%s", want, got, describe(r))
	}
}

// TestGDBConditionsInStub: gdb hands a breakpoint's condition to the stub
// (ConditionalBreakpoints+; "info breakpoints" says "target evals"), which
// passes by the hits where it is false, going forwards and backwards,
// without a stop reply for each (gdb got 26 stop replies for the first
// reverse-continue here when it tested each hit itself); going back, one
// search passes them all (the second reverse-continue, over some 580
// hits, took 117 s with gdb testing each and 43 s with a search per hit),
// and lands where a step back and forth comes back to.
func TestGDBConditionsInStub(t *testing.T) {
	requireDebugging(t, "gdb")
	t.Parallel()
	got, r := gdbValues(t, recordC(t, "cond_loop.c"), "set debug remote 1", "break finished if id == 1", "continue", "delete",
		"break tick if i == 290 && id == 1", "reverse-continue", "p i", "p id", "info breakpoints", "delete",
		"break tick if i == 10 && id == 1", "reverse-continue", "p i", "p id", "reverse-stepi", "stepi", "p i", "p id")
	stops := regexp.MustCompile(`Packet received: T`).FindAll(r.Stderr, -1)
	if want := "290 1 10 1 10 1"; strings.Join(got, " ") != want || !strings.Contains(string(r.Stdout), "(target evals)") || len(stops) > 12 {
		t.Errorf("i and id after continue to finished if id == 1, reverse-continue to tick if i == 290 && id == 1, to i == 10, then a step back and forth: want %s, conditions evaluated by the target and at most 12 stop replies; got %v, %d stop replies\n%s",
			want, got, len(stops), describe(r))
	}
}

// TestGDBReverseStepAfterCount: a step back from a breakpoint that a
// reverse continue stopped at part way through a count of arrivals (made
// by an earlier step back over two long loops) comes to the instruction
// before it; it counted from the arrival before the count's end, in the
// second loop, and landed there, later in the run (a C++ program's
// reverse-next then cycled through the lazy binder for good).
func TestGDBReverseStepAfterCount(t *testing.T) {
	requireDebugging(t, "gdb")
	t.Parallel()
	got, r := gdbValues(t, recordC(t, "spin_twice.c"), "break spin_twice.c:26", "continue", "delete", "reverse-stepi", "stepi",
		"break target", "reverse-continue", "p $pc", "delete", "reverse-stepi", "p $pc")
	if len(got) != 2 || !strings.Contains(got[0], "<target+") || !strings.Contains(got[1], "<target+") || got[0] == got[1] {
		t.Errorf("pc at target's breakpoint, then one instruction back: want two places in target, got %v\n%s", got, describe(r))
	}
}

// TestGDBReverseAfterDeletedWatchpoints: going back needs, of the
// watchpoints a command that brought the replay here ran under, only the
// one that stopped it, so four set and deleted leave room for others
// (hermit said all 4 were in use); where even that is too many, it says
// so and the replay stays where it was (it had moved back an event).
func TestGDBReverseAfterDeletedWatchpoints(t *testing.T) {
	requireDebugging(t, "gdb")
	testenv.RequireDebugRegs(t)
	t.Parallel()
	dir := recordC(t, "five_vars.c")
	four := []string{"break setall", "continue", "watch a", "watch b", "watch c", "watch d", "continue", "delete"}
	// Rounds v=1, 2: e is 5, then 6; back before the second write: 5.
	got, r := gdbValues(t, dir, append(four, "watch e", "continue", "continue", "reverse-continue", "p e")...)
	if strings.Join(got, " ") != "5" || !strings.Contains(string(r.Stdout), "Old value = 6\nNew value = 5") {
		t.Errorf("watch a-d, continue, delete, watch e, continue twice, reverse-continue: want e back to 5 (6 before), got %v\n%s", got, describe(r))
	}
	// Four of the user's beside a's, which stopped the continue: the
	// refusal, and the same place after it.
	got, r = gdbValues(t, dir, append(four, "watch b", "watch c", "watch d", "watch e", "p $pc", "reverse-continue", "p $pc")...)
	if len(got) != 2 || got[0] != got[1] || !strings.Contains(string(r.Stderr), "going back from here needs") {
		t.Errorf("reverse-continue with four watchpoints beside the deleted one that stopped the last continue: want a refusal that leaves the pc alone, got pcs %v\n%s", got, describe(r))
	}
}

// TestGDBCatchSyscallNotCaught: catch syscall of calls the recording has
// only as what they did (clone3 and clone: a thread made; execve) says so
// once, at the next stop, and the others in the set still stop (nothing
// was said: the catchpoint never fired).
func TestGDBCatchSyscallNotCaught(t *testing.T) {
	requireDebugging(t, "gdb")
	dir, _ := recordThreads(t)
	r := hermitClient(t,
		"replay", "--gdb", dir, "--", "-nx", "-batch", "-ex", "catch syscall clone3 clone write", "-ex", "continue", "-ex", "continue", "-ex", "continue")
	out := string(r.Stdout) + string(r.Stderr) // gdb prints the stub's console output to either
	note := "hermit: catch syscall clone, clone3: no stop there: the recording has these as the creation of a thread or process, or an exec, not as calls"
	if strings.Count(out, note) != 1 || strings.Count(out, "(call to syscall write)") < 1 {
		t.Errorf("want the note once and a stop at a write:\n%s", describe(r))
	}
}

// TestGDBInterruptComputing: ^C in gdb while the replay computes without
// a system call stops it inside the computation, as it would live (it
// stopped at the next system call, after it). Going back from there is
// refused with the reason; a breakpoint reached from there is a place
// reverse-continue goes back from, to the earlier breakpoint.
func TestGDBInterruptComputing(t *testing.T) {
	requireDebugging(t, "gdb")
	dir := filepath.Join(t.TempDir(), "trace")
	if rec := record(t, dir, nil, []string{testenv.BuildC(t, "crunch.c", "-O0"), "1000000000"}); rec.Exit != 0 {
		t.Fatalf("hermit record crunch.c: %s", describe(rec))
	}
	// gdb turns the SIGINT its shell sends it into an interrupt.
	s := startReplay(t, dir)
	defer s.kill()
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr,
		"break crunch", "continue", "delete", "shell (sleep 0.3; kill -INT $PPID) &", "continue", "bt 1",
		"reverse-stepi", "break crunch", "break report", "continue", "reverse-continue", "bt 1")
	if out := tr.out(t, "continue", 1); !strings.Contains(out, "SIGINT") {
		t.Errorf("continue, then ^C: want a SIGINT stop; gdb printed:\n%s", out)
	}
	if out := tr.out(t, "bt 1", 0); !regexp.MustCompile(`#0 .*crunch \(`).MatchString(out) {
		t.Errorf("bt after ^C: want the thread in crunch; gdb printed:\n%s", out)
	}
	if out := tr.out(t, "reverse-stepi", 0); !strings.Contains(out, "cannot go back from here: an interrupt stopped the replay") {
		t.Errorf("reverse-stepi from the interrupt: want hermit's reason; gdb printed:\n%s", out)
	}
	if out := tr.out(t, "continue", 2); !regexp.MustCompile(`Breakpoint \d+, report \(`).MatchString(out) {
		t.Errorf("continue to report: gdb printed:\n%s", out)
	}
	if out := tr.out(t, "reverse-continue", 0); !regexp.MustCompile(`Breakpoint \d+, crunch \(`).MatchString(out) {
		t.Errorf("reverse-continue from report: want crunch's breakpoint; gdb printed:\n%s", out)
	}
}
