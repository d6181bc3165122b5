package tests

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// The replay debugger's command line: --onprocess, --gdb, bad flags, and a
// debugger that goes away in the middle of a packet.

// TestGDBOnProcess debugs the second process of a recording, a program a
// shell started in a pipeline: gdb sees that process's pid and threads,
// stops in it (not in the shell, which maps its own program at the same
// addresses), and its end is reported with that process's status.
func TestGDBOnProcess(t *testing.T) {
	requireDebugging(t, "gdb")
	bin := threadsBinary(t)
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, []string{"/bin/sh", "-c", bin + " | cat; echo sh done"})
	if rec.Exit != 0 || !strings.HasSuffix(string(rec.Stdout), "sh done\n") {
		t.Fatalf("hermit record sh: %s", describe(rec))
	}
	g := parseGuest(t, rec.Stdout)
	ps := testenv.Run(t, runTimeout, testenv.Hermit(t), "trace", "ps", dir)
	row := regexp.MustCompile(`(?m)^` + strconv.Itoa(g.pid) + `\s+\d+\s+3\s+\d+\s+` + regexp.QuoteMeta(bin) + `$`)
	if ps.Exit != 0 || !row.Match(ps.Stdout) {
		t.Fatalf("hermit trace ps lacks pid %d running %s with exit 3:\n%s", g.pid, bin, describe(ps))
	}

	s := startReplay(t, dir, "--onprocess", filepath.Base(bin))
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "break worker", "continue", "info threads", "delete", "continue", "continue")
	res := s.wait(t)
	noClientErrors(t, tr, nil)
	mustMatch(t, gdbBreakWorkerRE, tr.out(t, "continue", 0), "continue to worker")
	tids, _, pids := gdbThreads(t, tr.out(t, "info threads", 0))
	if want := g.tids(); tids != want || len(pids) != 1 || !pids[g.pid] {
		t.Errorf("info threads shows tids %s of %v; the program printed pid %d, tids %s", tids, pids, g.pid, want)
	}
	checkGDBExit(t, tr, 1, g.pid, 3)
	if res.Exit != 3 {
		t.Errorf("hermit replay --onprocess exited %d, want the process's 3", res.Exit)
	}

	// Going back past the start of its program stops there, where its
	// registers can be read (not before the process existed).
	s = startReplay(t, dir, "--onprocess", filepath.Base(bin))
	tr = runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "break worker", "continue", "reverse-continue", "info registers rip", "continue")
	s.wait(t)
	noClientErrors(t, tr, regexp.MustCompile(`^No more reverse-execution history\.$`))
	mustMatch(t, regexp.MustCompile(`(?m)^No more reverse-execution history\.$`), tr.out(t, "reverse-continue", 0), "reverse-continue to the start of the process's program")
	mustMatch(t, regexp.MustCompile(`(?m)^rip +0x[0-9a-f]+ `), tr.out(t, "info registers rip", 0), "its registers there")
	mustMatch(t, gdbBreakWorkerRE, tr.out(t, "continue", 1), "continue to worker again")
	if t.Failed() {
		t.Logf("gdb:\n%s", tr.text)
	}

	// A name that no process ran is an error that lists the processes.
	bad := testenv.Run(t, runTimeout, testenv.Hermit(t), "replay", "--gdb-port", "0", "--onprocess", "nosuchprog", dir)
	if bad.Exit != 125 || !strings.Contains(string(bad.Stderr), "nosuchprog") || !strings.Contains(string(bad.Stderr), strconv.Itoa(g.pid)) {
		t.Errorf("--onprocess nosuchprog: want exit 125 naming it and listing pid %d; %s", g.pid, describe(bad))
	}
}

// TestGDBOnProcessBackFromEnd: gdb on a child that execs echo goes back
// one instruction from the end of that process, whose exit another
// child's crash follows in the recording: to the syscall instruction of
// its exit_group. (Counting from the boundary before the end, which the
// run had already passed, stepped echo through its exit, and the step
// failed with E01 at the other child's SIGSEGV.)
func TestGDBOnProcessBackFromEnd(t *testing.T) {
	requireDebugging(t, "gdb")
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, []string{testenv.BuildC(t, "exec_and_crash.c", "-O0")})
	if rec.Exit != 0 || !strings.Contains(string(rec.Stdout), "crash child: signal 11\n") {
		t.Fatalf("hermit record exec_and_crash: %s", describe(rec))
	}
	s := startReplay(t, dir, "--onprocess", "echo")
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "continue", "reverse-stepi", "x/i $pc", "reverse-finish")
	s.wait(t)
	noClientErrors(t, tr, regexp.MustCompile(`^No more reverse-execution history\.$`))
	mustMatch(t, regexp.MustCompile(`(?m)^No more reverse-execution history\.$`), tr.out(t, "continue", 0), "continue to the end of echo")
	mustMatch(t, regexp.MustCompile(`(?m)^=> 0x[0-9a-f]+ <[_A-Za-z]*exit\+\d+>:\tsyscall`), tr.out(t, "x/i $pc", 0), "one instruction back from the end: its exit_group's syscall")
	// Back out of _exit to its call, in libc, which echo's loader mapped
	// where its parent's was: the breakpoint gdb sets at _exit's entry
	// must reach echo's program, not only its parent's copy of the code
	// (the search went on to the start of echo's history).
	if out := tr.out(t, "reverse-finish", 0); strings.Contains(out, "No more reverse-execution history") || !regexp.MustCompile(`(?m)^0x[0-9a-f]+ in \S*exit\S* \(`).MatchString(out) {
		t.Errorf("reverse-finish from _exit: want the call in libc's exit code; got:\n%s", out)
	}
}

// TestGDBAfterAnEarlierProgram: a process debugged from its last exec
// says so when it ran another program before (its work there cannot be
// debugged), and --onprocess naming that program says why it is not
// offered, not that it is missing.
func TestGDBAfterAnEarlierProgram(t *testing.T) {
	requireDebugging(t, "gdb")
	dir := filepath.Join(t.TempDir(), "trace")
	sh := testenv.Require(t, "sh")
	prog := testenv.BuildC(t, "raise_signals.c", "-O0")
	if rec := record(t, dir, nil, []string{sh, "-c", `echo before; exec "$0"`, prog}); rec.Exit != 0 {
		t.Fatalf("hermit record sh -c 'exec raise_signals': %s", describe(rec))
	}
	s := startReplay(t, dir)
	s.announced(t, regexp.MustCompile(`(?m)^hermit: process \d+ ran sh before it exec'd raise_signals\S* at event \d+; the debugger sees it from there on$`),
		"the note on the program before")
	s.kill()
	bad := testenv.Run(t, runTimeout, testenv.Hermit(t), "replay", "--gdb-port", "0", "--onprocess", "sh", dir)
	if bad.Exit != 125 || !regexp.MustCompile(`(?m)^hermit replay: --onprocess sh: process \d+ ran sh, then exec'd raise_signals\S* at event \d+, and a process is debugged from its last exec on$`).Match(bad.Stderr) {
		t.Errorf("--onprocess sh: want exit 125 saying the process exec'd raise_signals after it; %s", describe(bad))
	}
}

// TestGDBOnProcessBackFromItsFirstStop: gdb on a child that execs echo
// steps back from where the debugger meets it, its loader's first system
// call: onto that call's syscall instruction, then the one before. (The
// step counted the thread's instructions from a boundary before its
// exec, and failed: "thread N is not alive here", E01.)
func TestGDBOnProcessBackFromItsFirstStop(t *testing.T) {
	requireDebugging(t, "gdb")
	dir := recordC(t, "exec_and_crash.c")
	s := startReplay(t, dir, "--onprocess", "echo")
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "x/i $pc", "reverse-stepi", "x/i $pc", "reverse-stepi", "x/i $pc")
	s.kill()
	noClientErrors(t, tr, nil)
	first := mustMatch(t, regexp.MustCompile(`(?m)^=> (0x[0-9a-f]+) <(\w+)\+\d+>:`), tr.out(t, "x/i $pc", 0), "where gdb meets echo")
	m := mustMatch(t, regexp.MustCompile(`(?m)^=> (0x[0-9a-f]+) <(\w+)\+\d+>:\tsyscall`), tr.out(t, "x/i $pc", 1), "one instruction back: the syscall instruction")
	a, _ := strconv.ParseUint(first[1], 0, 64)
	b, _ := strconv.ParseUint(m[1], 0, 64)
	if a != b+2 || first[2] != m[2] {
		t.Errorf("one step back from %s+ (%s) landed at %s (%s), want its syscall instruction 2 bytes before", first[2], first[1], m[2], m[1])
	}
	mustMatch(t, regexp.MustCompile(`(?m)^=> 0x[0-9a-f]+ <`+m[2]+`\+\d+>:`), tr.out(t, "x/i $pc", 2), "two instructions back, in the same function")
	if t.Failed() {
		t.Logf("gdb:\n%s", tr.text)
	}
}

// TestGDBOnProcessStepIntoItsDeath: gdb on a forked child that dies of a
// NULL store steps from the SIGSEGV's stop into its death, which ends
// that process but not the recording: gdb shows the process killed by the
// signal, as live (the step asked the dead thread for more and failed,
// E01, and gdb could not read registers).
func TestGDBOnProcessStepIntoItsDeath(t *testing.T) {
	requireDebugging(t, "gdb")
	dir := recordC(t, "exec_and_crash.c")
	ps := testenv.Run(t, runTimeout, testenv.Hermit(t), "trace", "ps", dir)
	m := regexp.MustCompile(`(?m)^(\d+)\s+\d+\s+SIGSEGV\s+\d+\s+\(fork of `).FindSubmatch(ps.Stdout)
	if m == nil {
		t.Fatalf("hermit trace ps shows no forked child killed by SIGSEGV:\n%s", describe(ps))
	}
	s := startReplay(t, dir, "--onprocess", string(m[1]))
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "continue", "next")
	s.wait(t)
	noClientErrors(t, tr, nil)
	mustMatch(t, regexp.MustCompile(`(?m)^Program received signal SIGSEGV, Segmentation fault\.$`), tr.out(t, "continue", 0), "continue to the crash")
	mustMatch(t, regexp.MustCompile(`(?m)^Program terminated with signal SIGSEGV, Segmentation fault\.$`), tr.out(t, "next", 0), "next into the death")
	if t.Failed() {
		t.Logf("gdb:\n%s", tr.text)
	}
}

// TestReplayGDBLaunch: `hermit replay --gdb` starts gdb attached to the
// replay, passes it the arguments after --, and exits with the program's
// status once gdb ran it to its end (a continue to the end of the
// recording, and one more to end the process).
func TestReplayGDBLaunch(t *testing.T) {
	requireDebugging(t, "gdb")
	dir, rec := recordThreads(t)
	g := parseGuest(t, rec.Stdout)
	r := hermitClient(t,
		"replay", "--gdb", dir, "--", "-nx", "-batch", "-ex", "break worker", "-ex", "continue", "-ex", "info threads", "-ex", "delete", "-ex", "continue", "-ex", "continue")
	out := string(r.Stdout) + string(r.Stderr)
	if r.Exit != 3 {
		t.Errorf("hermit replay --gdb exited %d, want the recorded 3\n%s", r.Exit, out)
	}
	if !gdbBreakWorkerRE.MatchString(out) {
		t.Errorf("gdb did not stop in worker:\n%s", out)
	}
	if !gdbAtEndRE.MatchString(out) || !strings.Contains(out, "exited with code 03]") {
		t.Errorf("gdb did not stop at the end and then see the program exit with 3:\n%s", out)
	}
	if !strings.Contains(string(r.Stdout), "global = "+g.final+"\n") {
		t.Errorf("the replay did not print the recorded final line %q:\n%s", "global = "+g.final, r.Stdout)
	}
}

// TestGDBPrettyPrinters: on a machine that holds the recording's program
// and libraries, gdb reads them here (set sysroot /) and so loads their
// auto-load scripts: a std::string and a std::map print as the C++
// library's pretty printers show them. gdb loads no script for a file it
// reads over the connection (target:), and printed their members. Where a
// file differs (the program rebuilt since), hermit leaves gdb reading
// them over the connection.
func TestGDBPrettyPrinters(t *testing.T) {
	requireDebugging(t, "gdb")
	if _, err := os.Stat("/usr/share/gcc/python/libstdcxx"); err != nil {
		testenv.Skip(t, "no pretty printers of the C++ library here (/usr/share/gcc/python/libstdcxx, Debian's libstdc++6)")
	}
	exe := filepath.Join(t.TempDir(), "accounts")
	if err := copyFile(testenv.BuildCXX(t, "accounts.cc", "-O0"), exe, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, []string{exe})
	if rec.Exit != 0 || string(rec.Stdout) != "alice 15\nbob 20\n" {
		t.Fatalf("hermit record accounts: %s", describe(rec))
	}
	r := hermitClient(t, "replay", "--gdb", dir, "--", "-nx", "-batch",
		"-ex", "break Bank::deposit", "-ex", "continue", "-ex", "continue", "-ex", "print who", "-ex", "print accounts")
	out := string(r.Stdout) + string(r.Stderr)
	if !regexp.MustCompile(`(?m)^\$1 = "bob"$`).MatchString(out) || !regexp.MustCompile(`(?m)^\$2 = std::map with 1 element = \{\["alice"\] = 10\}$`).MatchString(out) {
		t.Errorf("hermit replay --gdb: want who and accounts shown by the pretty printers; got:\n%s", out)
	}
	s := startReplay(t, dir)
	s.announced(t, regexp.MustCompile(`(?m)^  gdb -ex 'set sysroot /' -ex 'target extended-remote `), "the gdb command hermit prints")
	s.kill()

	if err := os.WriteFile(exe, []byte("rebuilt since"), 0o755); err != nil {
		t.Fatal(err)
	}
	s = startReplay(t, dir)
	s.announced(t, regexp.MustCompile(`(?m)^  gdb -ex 'target extended-remote `), "the gdb command hermit prints once the program changed")
	s.kill()
}

// TestGDBRunAndStart: gdb's run starts the replay again and runs it to
// the first breakpoint ($_siginfo there is an int3's SIGTRAP), and start
// to main, as against gdbserver: gdb,
// with no remote exec-file set, names no program in its vRun, which
// hermit had taken for Delve's restart and held at the start (a SIGTRAP
// at _start).
func TestGDBRunAndStart(t *testing.T) {
	requireDebugging(t, "gdb")
	dir, _ := recordThreads(t)
	r := hermitClient(t,
		"replay", "--gdb", dir, "--", "-nx", "-batch", "-ex", "break worker", "-ex", "run",
		"-ex", "p $_siginfo.si_signo", "-ex", "p $_siginfo.si_code", "-ex", "start", "-ex", "info line")
	out := string(r.Stdout) + string(r.Stderr)
	if strings.Contains(out, "SIGTRAP") || !gdbBreakWorkerRE.MatchString(out) {
		t.Errorf("gdb's run did not run to the breakpoint in worker:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^Temporary breakpoint 2, main \(\) at \S*gdb_threads\.c:\d+$`).MatchString(out) {
		t.Errorf("gdb's start did not stop at main:\n%s", out)
	}
	// At a breakpoint, the SIGTRAP of an int3, as natively (it was
	// "Unable to read siginfo").
	if !regexp.MustCompile(`(?m)^\$1 = 5\n\$2 = 128$`).MatchString(out) {
		t.Errorf("$_siginfo at the breakpoint: want si_signo 5 (SIGTRAP), si_code 128 (SI_KERNEL):\n%s", out)
	}
}

// TestReplayGDBBadFlags: wrong flags get one line and status 2 before
// anything is replayed.
func TestReplayGDBBadFlags(t *testing.T) {
	hermit := testenv.Hermit(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--gdb-port", "70000"}, "--gdb-port 70000: want a port from 0 to 65535"},
		{[]string{"--gdb-port", "-1"}, "want a port from 0 to 65535"},
		{[]string{"--gdb-port", "x"}, "invalid value"},
		{[]string{"--gdb-host", "0.0.0.0"}, "go with --gdb-port"},
		{[]string{"--keep-listening"}, "go with --gdb-port"},
		{[]string{"--onprocess", "2", "--autopilot"}, "go with --gdb-port or --gdb"},
		{[]string{"--gdb", "--gdb-port", "0"}, "exclude each other"},
		{[]string{"--summary", "--gdb-port", "0"}, "--summary goes with --autopilot"},
		{[]string{"--gdb-port", "0", "a", "b"}, "at most one TRACE"},
		{[]string{"--gdb-port", "0", "a", "--", "-batch"}, "after -- are for gdb"},
		{[]string{"--debug=bogus", "--gdb-port", "0"}, "want sched or rsp"},
	} {
		r := testenv.Run(t, runTimeout, hermit, append([]string{"replay"}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(string(r.Stderr)), "\n")
		if r.Exit != 2 || !strings.Contains(string(r.Stderr), c.want) || len(lines) > 3 {
			t.Errorf("hermit replay %s: want status 2 and %q in a short message; %s", strings.Join(c.args, " "), c.want, describe(r))
		}
	}
}

// TestReplayGDBSaysWhy: gdb shows only an error code when the stub
// refuses a write ("Cannot access memory", "remote failure reply
// 'E01'"); hermit, in the same terminal under --gdb, says why, once.
func TestReplayGDBSaysWhy(t *testing.T) {
	requireDebugging(t, "gdb")
	dir := recordC(t, "libcalls.c")
	r := hermitClient(t,
		"replay", "--gdb", dir, "--", "-nx", "-batch", "-ex", "break main", "-ex", "continue",
		"-ex", "set var *(char *)$sp = 1", "-ex", "set var *(char *)$sp = 2", "-ex", "set $rax = 7")
	out := string(r.Stdout) + string(r.Stderr)
	for _, want := range []string{
		"hermit: the debugger asked to write memory (set var, call, a breakpoint it writes itself): a replay is read-only",
		"hermit: the debugger asked to change a register (set $reg, call, jump): a replay is read-only",
	} {
		if n := strings.Count(out, want); n != 1 {
			t.Errorf("%q said %d times, want once:\n%s", want, n, out)
		}
	}
}

// TestGDBDisconnectMidPacket: a debugger that connects, sends half a
// packet and goes away ends the replay: hermit exits, saying so in a line
// with status 125 (the program did not reach its end), and no process of
// the guest is left.
func TestGDBDisconnectMidPacket(t *testing.T) {
	requireDebugging(t, "gdb")
	dir, _ := recordThreads(t)
	s := startReplay(t, dir)
	if len(processesRunning(t, threadsBinary(t))) == 0 {
		t.Fatal("no guest process while the replay waits for a debugger: the check below would prove nothing")
	}
	halfPacketAndGo(t, s.addr)
	res := s.wait(t)
	if res.Exit != 125 || !strings.Contains(string(res.Stderr), "hermit replay: the debugger went away at event ") {
		t.Errorf("hermit replay after the debugger left: exit %d, want 125 and a line saying the debugger went away\n%s", res.Exit, res.Stderr)
	}
	if left := processesRunning(t, threadsBinary(t)); len(left) > 0 {
		t.Errorf("guest processes left behind: %v", left)
	}
}

// processesRunning lists the pids of live processes whose command line
// names prog.
func processesRunning(t *testing.T, prog string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), prog) {
			out = append(out, pid)
		}
	}
	return out
}

// TestGDBHardwareBreakpoints: hbreak (Z1) and access watchpoints (Z4)
// live in the debug registers: the hbreak stops at worker like a
// breakpoint, the access watchpoint at the first worker's read of global,
// and the replay still ends as recorded.
func TestGDBHardwareBreakpoints(t *testing.T) {
	requireDebugging(t, "gdb")
	testenv.RequireDebugRegs(t)
	_, _, g, s := servedThreads(t)
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr,
		"hbreak worker", "continue", "delete", "awatch global", "continue", "print global", "delete", "continue", "continue")
	res := s.wait(t)
	noClientErrors(t, tr, nil)
	if out := tr.out(t, "hbreak worker", 0); !strings.Contains(out, "Hardware assisted breakpoint 1 at") {
		t.Errorf("hbreak worker: %q", out)
	}
	mustMatch(t, gdbBreakWorkerRE, tr.out(t, "continue", 0), "continue to the hardware breakpoint")
	// The first access to global after entering worker is the read of
	// `global += id + 1`, which sees 0.
	hit := regexp.MustCompile(`hit Hardware access \(read/write\) watchpoint 2: global\n\nValue = 0\n`)
	if out := tr.out(t, "continue", 1); !hit.MatchString(out) {
		t.Errorf("continue to the access watchpoint:\n%s", out)
	}
	if v := gdbPrint(t, tr, "global", 0); v != "0" {
		t.Errorf("print global at the read: %s, want 0", v)
	}
	checkGDBExit(t, tr, 2, g.pid, 3)
	if res.Exit != 3 || !strings.Contains(string(res.Stdout), "global = "+g.final+"\n") {
		t.Errorf("the replay under hardware breakpoints did not end as recorded: %s", describe(res))
	}
}

// TestGDBTruncatedTrace: a replay that reaches the damage of a cut trace
// ends the debugged process for gdb as killed, with a line saying why
// (gdb said it exited normally), and hermit says why too and exits 125
// instead of passing the end off as the program's.
func TestGDBTruncatedTrace(t *testing.T) {
	requireDebugging(t, "gdb")
	dir := filepath.Join(t.TempDir(), "trace")
	if rec := record(t, dir, nil, cGuest("lines.c", "50000")(t)); rec.Exit != 0 {
		t.Fatalf("record: %s", describe(rec))
	}
	start := lastBlockStart(t, dir)
	cutEvents(t, dir, start+(eventsSize(t, dir)-start)/2)
	s := startReplay(t, dir)
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "continue")
	res := s.wait(t)
	if res.Exit != replayExit || !damageRE.Match(res.Stderr) {
		t.Errorf("hermit replay --gdb-port of a cut trace: want exit %d saying the trace is damaged; %s\ngdb:\n%s", replayExit, describe(res), tr.text)
	}
	// gdb is told the replay was cut short, and why; not that the
	// program exited normally (the recording's status).
	if !strings.Contains(tr.text, "terminated with signal SIGKILL") || !damageRE.MatchString(tr.text) || strings.Contains(tr.text, "exited normally") {
		t.Errorf("gdb: want the process killed, with hermit's line on the damage:\n%s", tr.text)
	}
}

// TestGDBSecondDebuggerRefused: while one debugger is attached, another
// is turned away at once, told why, with a line on stderr too, not left
// hanging.
func TestGDBSecondDebuggerRefused(t *testing.T) {
	requireDebugging(t, "gdb")
	dir, _ := recordThreads(t)
	s := startReplay(t, dir)
	first, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Write([]byte("$qSupported#37")); err != nil {
		t.Fatal(err)
	}
	// The second, gdb, is told why (it showed only a broken pipe).
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr)
	if !strings.Contains(tr.text, "Remote failure reply: E.hermit: another debugger is attached to this replay") {
		t.Errorf("the second gdb was not told another debugger is attached:\n%s", tr.text)
	}
	first.Close()
	res := s.wait(t)
	if !strings.Contains(string(res.Stderr), "refused a debugger from 127.0.0.1:") {
		t.Errorf("hermit's stderr does not say it refused the second debugger:\n%s", res.Stderr)
	}
}

// TestGDBStepsOverPushfPopf: gdb steps a thread over `pushfq; popfq` in a
// replay, then continues. A single step sets the trap flag; the word the
// pushfq pushes and the flags the popfq loads must not keep it, or the
// program takes a SIGTRAP the recording never had once it runs on (the
// kernel leaves a flag a stepped popf loaded to the program).
func TestGDBStepsOverPushfPopf(t *testing.T) {
	requireDebugging(t, "gdb")
	src, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "tests", "guests", "spins.c"))
	if err != nil {
		t.Fatal(err)
	}
	line := 0
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, `"pushfq\n\tpopfq"`) {
			line = i + 1
		}
	}
	if line == 0 {
		t.Fatal("spins.c has no pushfq; popfq line")
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, []string{testenv.BuildC(t, "spins.c", "-O0"), "pushf"})
	if rec.Exit != 0 || string(rec.Stdout) != "pushf: seen\n" {
		t.Fatalf("hermit record spins pushf: %s", describe(rec))
	}
	s := startReplay(t, dir)
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, fmt.Sprintf("break spins.c:%d", line), "continue",
		"stepi", "stepi", "stepi", "delete", "continue", "continue")
	rep := s.wait(t)
	noClientErrors(t, tr, nil)
	if strings.Contains(tr.text, "SIGTRAP") || !gdbAtEndRE.MatchString(tr.out(t, "continue", 1)) || !strings.Contains(tr.out(t, "continue", 2), "exited normally") {
		t.Errorf("after three steps over pushfq and popfq, continue should run to the end, with no SIGTRAP:\n%s", tr.text)
	}
	checkServedRun(t, rec, rep)
}

// TestGDBReverseFromEnd: continue runs to the end of the recording, where
// gdb stops before the process exits (in _exit) and can still go back, as
// under rr: a reverse-continue with a breakpoint in worker stops at the
// last worker to enter it; forwards again nothing hits it before the end;
// back again the same worker; then the end and the exit with the recorded
// status. lldb and Delve are told of the exit at once (their tests).
func TestGDBReverseFromEnd(t *testing.T) {
	requireDebugging(t, "gdb")
	_, rec, g, s := servedThreads(t)
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "continue", "break worker", "reverse-continue",
		"continue", "reverse-continue", "continue", "continue")
	rep := s.wait(t)
	noClientErrors(t, tr, nil)
	mustMatch(t, gdbAtEndRE, tr.out(t, "continue", 0), "continue to the end")
	w1 := mustMatch(t, gdbBreakWorkerRE, tr.out(t, "reverse-continue", 0), "reverse-continue from the end to worker")
	mustMatch(t, gdbAtEndRE, tr.out(t, "continue", 1), "continue from the last worker to the end")
	w2 := mustMatch(t, gdbBreakWorkerRE, tr.out(t, "reverse-continue", 1), "reverse-continue from the end again")
	if w1[1] != w2[1] {
		t.Errorf("reverse-continue from the end stopped in worker %s, then in worker %s", w1[1], w2[1])
	}
	checkGDBExit(t, tr, 2, g.pid, 3)
	checkServedRun(t, rec, rep)
	if t.Failed() {
		t.Logf("gdb:\n%s", tr.text)
	}
}

// TestGDBThreadLocals: gdb prints each thread's thread-local variables
// as on the live program: the program's own (__thread), errno (the C
// library's static TLS), one of a library loaded with dlopen (a block
// the thread's dtv points at), and those of a static program (the stub
// answered no qGetTLSAddr: "TLS not supported or disabled on this
// target", "Remote target failed to process qGetTLSAddr request").
func TestGDBThreadLocals(t *testing.T) {
	requireDebugging(t, "gdb")
	lib := testenv.BuildC(t, "tls_lib.c", "-shared", "-fPIC")
	for _, c := range []struct {
		name  string
		argv  []string
		print string
		want  string
	}{
		{"dynamic", []string{testenv.BuildC(t, "tls_vars.c"), lib},
			`printf "%s %d %d %ld\n", name, counter, (int)errno, lib_tls`,
			"worker 42 33 2005\nmain 7 11 1005\n"},
		{"static", []string{testenv.BuildC(t, "tls_vars.c", "-static")},
			`printf "%s %d %d\n", name, counter, (int)errno`,
			"worker 42 33\nmain 7 11\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "trace")
			if rec := record(t, dir, nil, c.argv); rec.Exit != 0 {
				t.Fatalf("hermit record: %s", describe(rec))
			}
			r := hermitClient(t,
				"replay", "--gdb", dir, "--", "-nx", "-batch", "-ex", "break stop_here", "-ex", "continue", "-ex", "up", "-ex", c.print,
				"-ex", "continue", "-ex", "up", "-ex", c.print)
			var got strings.Builder
			for _, l := range strings.SplitAfter(string(r.Stdout), "\n") {
				if strings.HasPrefix(l, "worker ") || strings.HasPrefix(l, "main ") {
					got.WriteString(l)
				}
			}
			if got.String() != c.want {
				t.Errorf("gdb's thread-local variables at stop_here in the worker, then in main: want\n%sgot\n%s\n%s", c.want, got.String(), describe(r))
			}
		})
	}
}

// TestStepOverEmulated: a single step over rdtsc, rdtscp or cpuid ends
// right after it, in gdb and in the REPL, forwards and back, where hermit
// traps and answers them (they faulted, hermit answered, and the step
// went on to run the next instruction too). Where the machine traps
// neither the instructions run natively and the same must hold. A step
// over an rdtsc whose site hermit patched (to read its clock page) ends
// after the instructions the patch covers, and back.
func TestStepOverEmulated(t *testing.T) {
	requireDebugging(t, "gdb")
	bin := testenv.BuildC(t, "step_emulated.c", "-no-pie")
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.Run(t, runTimeout, testenv.Hermit(t), "record", "--virtualize-cpuid", "-o", dir, "--", bin)
	nativeCPUID := rec.Exit == 2 && strings.Contains(string(rec.Stderr), "no CPUID faulting")
	if nativeCPUID {
		rec = record(t, dir, nil, []string{bin}) // cpuid runs natively here
	}
	if rec.Exit != 0 {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	out, err := exec.Command("nm", bin).Output()
	if err != nil {
		t.Fatalf("nm: %v", err)
	}
	addr := func(sym string) uint64 {
		m := regexp.MustCompile(`(?m)^([0-9a-f]+) T ` + sym + `$`).FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("nm finds no %s", sym)
		}
		a, _ := strconv.ParseUint(m[1], 16, 64)
		return a
	}
	// Where cpuid runs natively, a step over it ends where the machine
	// ends it: some hypervisors, which always take cpuid from the guest,
	// end a single step over it one instruction late, gdb without hermit
	// too.
	afterCPUID := addr("L_after_cpuid")
	if nativeCPUID {
		native := testenv.Run(t, runTimeout, testenv.Require(t, "gdb"), "-nx", "-batch", "-ex", "break L_cpuid", "-ex", "run", "-ex", "stepi", "-ex", "p/x $pc", bin)
		pcs := hexValues(`(?m)^\$\d+ = (0x[0-9a-f]+)$`, string(native.Stdout))
		if len(pcs) != 1 {
			t.Fatalf("gdb without hermit, stepi at cpuid: no pc printed\n%s", describe(native))
		}
		if pcs[0] != afterCPUID {
			t.Logf("this machine ends a native single step over cpuid at %#x, not at %#x, right after it (gdb without hermit too)", pcs[0], afterCPUID)
			afterCPUID = pcs[0]
		}
	}
	after := func(l string) uint64 {
		switch {
		case l == "cpuid":
			return afterCPUID
		case l == "tsc_patched" && !ptrace.TSCTraps():
			return addr("L_tsc_patched") + 2 // natively, as the others
		}
		return addr("L_after_" + l)
	}
	cmds := []string{"-nx", "-batch"}
	var want []uint64
	// At L_tsc_patched, hermit patched the site (its first rdtsc): a
	// step over it is a step over the instructions its jmp covers too,
	// never one into hermit's stub.
	for _, l := range []string{"rdtsc", "cpuid", "rdtscp", "tsc_patched"} {
		cmds = append(cmds, "-ex", "break L_"+l, "-ex", "continue", "-ex", "stepi", "-ex", "p/x $pc", "-ex", "reverse-stepi", "-ex", "p/x $pc", "-ex", "stepi", "-ex", "delete")
		want = append(want, after(l), addr("L_"+l))
	}
	r := hermitClient(t,
		append([]string{"replay", "--gdb", dir, "--"}, cmds...)...)
	if got := hexValues(`(?m)^\$\d+ = (0x[0-9a-f]+)$`, string(r.Stdout)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("gdb: stepi then reverse-stepi at rdtsc, cpuid, rdtscp: want the pc at %x, got %x\n%s", want, got, describe(r))
	}
	// gdb under hermit run, stepping through hermit's emulated ptrace: a
	// step there too (it ran on; and a breakpoint right after the
	// instruction, which gdb put back after its step, never stopped).
	args := []string{"run", "--virtualize-cpuid", "--", testenv.Require(t, "gdb"), "-nx", "-batch", "-ex", "break L_after_rdtsc"}
	want = want[:0]
	for _, l := range []string{"rdtsc", "cpuid", "rdtscp"} {
		args = append(args, "-ex", "break L_"+l)
		want = append(want, after(l))
	}
	args = append(args, "-ex", "run", "-ex", "continue", "-ex", "p/x $pc", "-ex", "continue", "-ex", "stepi", "-ex", "p/x $pc", "-ex", "continue", "-ex", "stepi", "-ex", "p/x $pc", "-ex", "kill", bin)
	under := hermitClient(t, args...)
	if under.Exit == 2 && strings.Contains(string(under.Stderr), "no CPUID faulting") {
		args = slices.Delete(args, 1, 2)
		under = hermitClient(t, args...)
	}
	if got := hexValues(`(?m)^\$\d+ = (0x[0-9a-f]+)$`, string(under.Stdout)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("gdb under hermit run: the breakpoint after rdtsc, then stepi at cpuid and rdtscp: want the pc at %x, got %x\n%s", want, got, describe(under))
	}
	// The REPL: the same steps.
	repl := runREPLScript(t, dir, []string{"break L_rdtsc", "continue", "stepi", "reverse-stepi", "stepi 3"})
	from := addr("L_rdtsc")
	want = []uint64{addr("L_after_rdtsc"), from, addr("L_after_rdtsc") + 3} // rdtsc, jmp, nop
	if got := hexValues(`(?m)^#\d+ tid \d+ step at (0x[0-9a-f]+) `, string(repl.Stdout)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("REPL: stepi, reverse-stepi, stepi 3 from rdtsc: want steps at %x, got %x\n%s", want, got, repl.Stdout)
	}
}

// hexValues returns the hex numbers that the first group of pattern
// matches in out.
func hexValues(pattern, out string) []uint64 {
	var vs []uint64
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseUint(strings.TrimPrefix(m[1], "0x"), 16, 64)
		vs = append(vs, v)
	}
	return vs
}

// TestGDBSaysWhatItForked: gdb follows the process it debugs only (a
// replay gives no fork events for catch fork or follow-fork-mode): at its
// end, hermit names the processes it started, how each ended (the child
// killed by SIGSEGV went unmentioned), and how to debug one.
func TestGDBSaysWhatItForked(t *testing.T) {
	requireDebugging(t, "gdb")
	dir := recordC(t, "exec_and_crash.c")
	s := startReplay(t, dir)
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "continue", "continue")
	s.kill()
	re := regexp.MustCompile(`hermit: process (\d+) started processes (\d+) \(echo, exited 0\), (\d+) \(exec_and_crash[^,]*, killed by signal 11\); ` +
		`the debugger follows process (\d+) only: hermit replay --onprocess PID debugs another`)
	if m := mustMatch(t, re, tr.out(t, "continue", 0), "the note at the end stop"); m[1] != m[4] {
		t.Errorf("the note names process %s and %s as the one debugged", m[1], m[4])
	}
	mustMatch(t, re, tr.out(t, "continue", 1), "the note at the exit")
}
