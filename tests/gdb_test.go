package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// The gdb tests record a guest, serve the replay with `hermit replay
// --gdb-port 0` and drive a real gdb (-nx -batch) against it, checking what
// its user sees against what the recorded program printed.

// requireDebugging skips t unless it can record and replay under a
// debugger: root (ptrace, pid and mount namespaces) and the tool.
func requireDebugging(t *testing.T, tool string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root (ptrace, pid and mount namespaces)")
	}
	testenv.Require(t, tool)
}

// threadsBinary builds gdb_threads -O0, so that every local can be printed.
func threadsBinary(t *testing.T) string {
	return testenv.BuildC(t, "gdb_threads.c", "-O0")
}

// recordThreads records gdb_threads into a new directory and returns the trace and the recording.
func recordThreads(t *testing.T) (string, testenv.Result) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, []string{threadsBinary(t)})
	if rec.Exit != 3 {
		t.Fatalf("hermit record gdb_threads: want exit 3, got %s", describe(rec))
	}
	return dir, rec
}

// gdbThreadsCmds is the gdb session over gdb_threads that TestGDBThreads
// runs: a breakpoint, threads, a backtrace, variables, a hardware
// watchpoint, 100 instruction steps, finish, and the run to the end.
func gdbThreadsCmds(addr string) []string {
	return []string{
		"target extended-remote " + addr,
		"break worker",
		"continue",
		"info threads",
		"bt",
		"print global",
		"print &global",
		"delete",
		"watch global",
		"continue",
		"print tid",
		"print global",
		"bt",
		"delete",
		"print $pc",
		"stepi 100",
		"print $pc",
		"finish",
		"continue",
		"continue",
	}
}

var (
	// gdbAnnounceRE finds the gdb command hermit prints when it listens.
	gdbAnnounceRE    = regexp.MustCompile(`(?m)^\s*gdb\b.* -ex 'target extended-remote (\S+:\d+)'`)
	gdbBreakWorkerRE = regexp.MustCompile(`(?m)^Thread \d+ .*hit Breakpoint 1, worker \(id=(\d)\) at \S*gdb_threads\.c:\d+$`)
	gdbBtWorkerRE    = regexp.MustCompile(`\A#0  worker \(id=(\d)\) at \S*gdb_threads\.c:\d+\n#1  0x[0-9a-f]+ in thread_main \(arg=0x(\d)\) at \S*gdb_threads\.c:\d+\n`)
	gdbPrintRE       = regexp.MustCompile(`\A\$\d+ = (.*)\n\z`)
	gdbAddrOfGlobal  = regexp.MustCompile(`\A\(long \*\) (0x[0-9a-f]+) <global>\z`)
	gdbWatchHitRE    = regexp.MustCompile(`(?s)hit Hardware watchpoint 2: global\n\nOld value = (\d+)\nNew value = (\d+)\nworker \(id=(\d)\) at \S*gdb_threads\.c:\d+\n`)
	gdbPCRE          = regexp.MustCompile(`\A\(void \(\*\)\(\)\) (0x[0-9a-f]+) <worker\+\d+>\z`)
	gdbFinishRE      = regexp.MustCompile(`(?m)^thread_main \(arg=0x\d\) at \S*gdb_threads\.c:\d+\n(?:.*\n)?Value returned is \$\d+ = \(void \*\) 0x0$`)
	// gdbAtEndRE is gdb's stop at the end of the recording, at the entry
	// of the process's exit_group, in glibc's _exit (with or without its
	// debug information).
	gdbAtEndRE  = regexp.MustCompile(`(?m)^No more reverse-execution history\.\n(?:\[Switching to .*\]\n)?(?:0x[0-9a-f]+ in )?(?:__GI_)?_exit \(`)
	gdbExitedRE = regexp.MustCompile(`(?m)^\[Inferior 1 \(process (\d+)\) exited (?:with code ([0-7]+)|normally)\]$`)
	// gdbThreadRE matches a row of `info threads`: the current-thread
	// mark and the thread's id as gdb shows a remote thread (Thread
	// PID.TID with multiprocess extensions, Thread TID without) or a
	// native one (LWP TID).
	gdbThreadRE = regexp.MustCompile(`(?m)^([* ]) +\d+ +(?:Thread (?:(\d+)\.)?(\d+) |Thread 0x[0-9a-f]+ \(LWP (\d+)\)|LWP (\d+) )`)
)

// gdbThreads parses `info threads`: the sorted tids, the current one, and
// the pids shown (with multiprocess ids).
func gdbThreads(t *testing.T, out string) (tids string, current int, pids map[int]bool) {
	t.Helper()
	var ids []int
	pids = map[int]bool{}
	for _, m := range gdbThreadRE.FindAllStringSubmatch(out, -1) {
		tid := 0
		for _, s := range m[3:] {
			if s != "" {
				tid, _ = strconv.Atoi(s)
			}
		}
		if m[2] != "" {
			pid, _ := strconv.Atoi(m[2])
			pids[pid] = true
		}
		if m[1] == "*" {
			current = tid
		}
		ids = append(ids, tid)
	}
	if len(ids) == 0 {
		t.Fatalf("info threads shows no threads:\n%s", out)
	}
	return sortedInts(ids), current, pids
}

// gdbPrint returns the value of a `print` step.
func gdbPrint(t *testing.T, tr transcript, expr string, nth int) string {
	t.Helper()
	return mustMatch(t, gdbPrintRE, tr.out(t, "print "+expr, nth), "print "+expr)[1]
}

// checkGDBExit checks that `continue` number nth ran the program to the
// end of the recording, where gdb stops before the process exits (it can
// go back from there), and that the next one ended it, gdb showing its pid
// and exit status.
func checkGDBExit(t *testing.T, tr transcript, nth, pid, exit int) {
	t.Helper()
	mustMatch(t, gdbAtEndRE, tr.out(t, "continue", nth), "the continue to the end")
	m := mustMatch(t, gdbExitedRE, tr.out(t, "continue", nth+1), "the continue from the end")
	code := 0
	if m[2] != "" {
		c, _ := strconv.ParseInt(m[2], 8, 32) // gdb shows the code in octal
		code = int(c)
	}
	if m[1] != strconv.Itoa(pid) || code != exit {
		t.Errorf("gdb: %q, want process %d exited with status %d", m[0], pid, exit)
	}
}

// checkGDBThreads checks the transcript of gdbThreadsCmds against what
// gdb_threads printed (stdout) and the status it exited with.
func checkGDBThreads(t *testing.T, tr transcript, stdout []byte, exit int) {
	t.Helper()
	g := parseGuest(t, stdout)
	noClientErrors(t, tr, nil)

	// The breakpoint: every thread exists (they met at a barrier), and
	// the thread that stopped is the worker gdb names.
	id := mustMatch(t, gdbBreakWorkerRE, tr.out(t, "continue", 0), "continue to worker")[1]
	tids, current, pids := gdbThreads(t, tr.out(t, "info threads", 0))
	if want := g.tids(); tids != want {
		t.Errorf("info threads shows tids %s, the program printed %s", tids, want)
	}
	for pid := range pids {
		if pid != g.pid {
			t.Errorf("info threads shows pid %d, the program printed pid %d", pid, g.pid)
		}
	}
	wid, _ := strconv.Atoi(id)
	if current != g.workerTid[wid] {
		t.Errorf("info threads marks tid %d current, but worker %d (tid %d) hit the breakpoint", current, wid, g.workerTid[wid])
	}
	bt := mustMatch(t, gdbBtWorkerRE, tr.out(t, "bt", 0), "bt at the breakpoint")
	if bt[1] != id || bt[2] != id {
		t.Errorf("bt shows worker %s started as %s, the breakpoint was hit by worker %s", bt[1], bt[2], id)
	}
	if v := gdbPrint(t, tr, "global", 0); v != "0" {
		t.Errorf("print global before any worker ran: %s, want 0", v)
	}
	addr := mustMatch(t, gdbAddrOfGlobal, gdbPrint(t, tr, "&global", 0), "print &global")[1]
	if addr != g.global {
		t.Errorf("print &global: %s, the program printed %s", addr, g.global)
	}

	// The watchpoint stops the first worker to add its id+1 to global,
	// right after the store; its locals are then set.
	w := mustMatch(t, gdbWatchHitRE, tr.out(t, "continue", 1), "continue to the watchpoint")
	wid, _ = strconv.Atoi(w[3])
	if w[1] != "0" || w[2] != strconv.Itoa(wid+1) {
		t.Errorf("watchpoint in worker %d: old value %s, new value %s; want 0 and %d", wid, w[1], w[2], wid+1)
	}
	if v := gdbPrint(t, tr, "tid", 0); v != strconv.Itoa(g.workerTid[wid]) {
		t.Errorf("print tid in worker %d: %s, the program printed tid %d", wid, v, g.workerTid[wid])
	}
	if v := gdbPrint(t, tr, "global", 1); v != w[2] {
		t.Errorf("print global after the watchpoint: %s, want the new value %s", v, w[2])
	}
	if bt := mustMatch(t, gdbBtWorkerRE, tr.out(t, "bt", 1), "bt at the watchpoint"); bt[1] != w[3] {
		t.Errorf("bt at the watchpoint shows worker %s, want %s", bt[1], w[3])
	}

	// 100 instruction steps stay in worker's loop and move the pc.
	pc0 := mustMatch(t, gdbPCRE, gdbPrint(t, tr, "$pc", 0), "print $pc before stepi")[1]
	pc1 := mustMatch(t, gdbPCRE, gdbPrint(t, tr, "$pc", 1), "print $pc after stepi 100")[1]
	if pc0 == pc1 {
		t.Errorf("stepi 100 left the pc at %s", pc0)
	}
	if out := tr.out(t, "stepi 100", 0); !strings.Contains(out, "gdb_threads.c") && !regexp.MustCompile(`(?m)^\d+\t`).MatchString(out) {
		t.Errorf("stepi 100 shows no source line:\n%s", out)
	}
	mustMatch(t, gdbFinishRE, tr.out(t, "finish", 0), "finish out of worker")
	checkGDBExit(t, tr, 2, g.pid, exit)
}

// checkServedRun checks that the replay showed its user what the recording
// did: the guest's stdout and the exit status.
func checkServedRun(t *testing.T, rec, rep testenv.Result) {
	t.Helper()
	if d := firstDiff(rec.Stdout, rep.Stdout); d != "" {
		t.Errorf("the replay's stdout differs from the recording's at %s", d)
	}
	if rep.Exit != rec.Exit {
		t.Errorf("hermit replay --gdb-port exited %d, the recording %d", rep.Exit, rec.Exit)
	}
}

// TestGDBThreads debugs a replay of gdb_threads with gdb, twice: both
// sessions must show what the program printed and be identical.
func TestGDBThreads(t *testing.T) {
	requireDebugging(t, "gdb")
	testenv.RequireDebugRegs(t)
	dir, rec := recordThreads(t)
	var first transcript
	for run := 0; run < 2; run++ {
		s := startReplay(t, dir)
		if m := mustMatch(t, gdbAnnounceRE, string(s.stderr.Bytes()), "the gdb command hermit prints"); m[1] != s.addr {
			t.Errorf("hermit says to run gdb with target extended-remote %s, but it listens on %s", m[1], s.addr)
		}
		tr := runGDB(t, t.TempDir(), gdbThreadsCmds(s.addr)...)
		rep := s.wait(t)
		checkGDBThreads(t, tr, rec.Stdout, rec.Exit)
		checkServedRun(t, rec, rep)
		if t.Failed() {
			t.Fatalf("session %d:\n%s", run, tr.text)
		}
		// The port differs between the two replays, and it is all that
		// may: every address, tid, value and stop is the recording's.
		tr.text = strings.ReplaceAll(tr.text, s.addr, "ADDR")
		if run == 0 {
			first = tr
		} else if d := firstDiff([]byte(first.text), []byte(tr.text)); d != "" {
			t.Fatalf("the second gdb session differs from the first at %s\nfirst:\n%s\nsecond:\n%s", d, first.text, tr.text)
		}
	}
}

// TestGDBCrash: a thread's NULL store stops gdb with SIGSEGV at the
// faulting instruction, in the function that did it; continuing lets the
// program die of it, and hermit exits 139 as the recording did.
func TestGDBCrash(t *testing.T) {
	tr := gdbOnCrash(t, "thread-segv")
	checkCrash(t, tr)
}

// gdbOnCrash records die MODE, which dies of SIGSEGV, runs crashCmds in
// gdb on its replay, checks that the replay ran as the recording did, and
// returns gdb's transcript.
func gdbOnCrash(t *testing.T, mode string) transcript {
	t.Helper()
	requireDebugging(t, "gdb")
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, []string{testenv.BuildC(t, "die.c", "-O0"), mode})
	if rec.Exit != 139 {
		t.Fatalf("hermit record die %s: want exit 139, got %s", mode, describe(rec))
	}
	s := startReplay(t, dir)
	tr := runGDB(t, t.TempDir(), crashCmds(s.addr)...)
	rep := s.wait(t)
	checkServedRun(t, rec, rep)
	return tr
}

// TestGDBCrashAfterThreadExit: a process whose last system call is the
// exit of a thread it joined, and which then dies of a NULL store, stops
// gdb at the SIGSEGV: no end of history comes first (it came at that
// thread's exit, as though the process ended there, and only a second
// continue reached the crash).
func TestGDBCrashAfterThreadExit(t *testing.T) {
	tr := gdbOnCrash(t, "join-segv")
	noClientErrors(t, tr, nil)
	mustMatch(t, regexp.MustCompile(`(?m)^(?:Program|Thread \d+ .*) received signal SIGSEGV, Segmentation fault\.\n(?:\[Switching to .*\]\n)?segv \(\) at \S*die\.c:\d+\n`), tr.out(t, "continue", 0), "continue to the crash")
	mustMatch(t, regexp.MustCompile(`\A#0  segv \(\) at \S*die\.c:\d+\n#1  0x[0-9a-f]+ in main \(`), tr.out(t, "bt", 0), "bt at the crash")
	mustMatch(t, gdbKilledRE, tr.out(t, "continue", 1), "continue after the crash")
}

func crashCmds(addr string) []string {
	return []string{"target extended-remote " + addr, "continue", "bt", "x/i $pc", "continue"}
}

var (
	gdbSegvRE   = regexp.MustCompile(`(?m)^Thread \d+ .*received signal SIGSEGV, Segmentation fault\.\n(?:\[Switching to .*\]\n)?segv \(\) at \S*die\.c:\d+\n`)
	gdbSegvBtRE = regexp.MustCompile(`\A#0  segv \(\) at \S*die\.c:\d+\n#1  0x[0-9a-f]+ in segv_thread \(arg=0x0\) at \S*die\.c:\d+\n`)
	gdbSegvPCRE = regexp.MustCompile(`(?m)^=> 0x[0-9a-f]+ <segv\+\d+>:\tmovl +\$0x1,\(%r[a-z0-9]+\)$`)
	gdbKilledRE = regexp.MustCompile(`(?m)^Program terminated with signal SIGSEGV, Segmentation fault\.$`)
)

func checkCrash(t *testing.T, tr transcript) {
	t.Helper()
	noClientErrors(t, tr, nil)
	mustMatch(t, gdbSegvRE, tr.out(t, "continue", 0), "continue to the crash")
	mustMatch(t, gdbSegvBtRE, tr.out(t, "bt", 0), "bt at the crash")
	mustMatch(t, gdbSegvPCRE, tr.out(t, "x/i $pc", 0), "x/i $pc at the crash (the faulting store)")
	mustMatch(t, gdbKilledRE, tr.out(t, "continue", 1), "continue after the crash")
}

// TestGDBTraceElsewhere: the trace copied to another directory, with the
// original trace and the program's binary deleted, is enough for gdb with no
// local file: it reads the program and its libraries from the replay.
func TestGDBTraceElsewhere(t *testing.T) {
	requireDebugging(t, "gdb")
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin", "gdb_threads")
	if err := os.Mkdir(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	copyOrFail(t, threadsBinary(t), bin)
	orig := filepath.Join(tmp, "trace")
	rec := record(t, orig, nil, []string{bin})
	if rec.Exit != 3 {
		t.Fatalf("hermit record gdb_threads: want exit 3, got %s", describe(rec))
	}
	moved := filepath.Join(tmp, "elsewhere", "trace")
	if err := os.Mkdir(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := testenv.Run(t, runTimeout, testenv.Require(t, "cp"), "-a", orig, moved); r.Exit != 0 {
		t.Fatalf("cp -a: %s", describe(r))
	}
	for _, p := range []string{orig, filepath.Dir(bin)} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}

	s := startReplay(t, moved)
	tr := runGDB(t, t.TempDir(), mainCmds(s.addr)...)
	rep := s.wait(t)
	checkGDBMain(t, tr, bin, parseGuest(t, rec.Stdout).pid, rec.Exit)
	checkServedRun(t, rec, rep)
}

func mainCmds(addr string) []string {
	return []string{"target extended-remote " + addr, "break main", "continue", "bt", "continue", "continue"}
}

// checkGDBMain checks the transcript of mainCmds: gdb read the program bin
// from the target, stopped in main and ran it to its end.
func checkGDBMain(t *testing.T, tr transcript, bin string, pid, exit int) {
	t.Helper()
	noClientErrors(t, tr, nil)
	if len(tr.steps) < 2 {
		t.Fatalf("gdb ran no command:\n%s", tr.text)
	}
	mustMatch(t, regexp.MustCompile(`(?m)^Reading symbols from target:`+regexp.QuoteMeta(bin)+`\.\.\.$`), tr.steps[1].out, "gdb reading the program from the target")
	mustMatch(t, regexp.MustCompile(`(?m)^Breakpoint 1 at 0x[0-9a-f]+: file \S*gdb_threads\.c, line \d+\.$`), tr.out(t, "break main", 0), "break main")
	mustMatch(t, regexp.MustCompile(`(?m)^Breakpoint 1, main \(\) at \S*gdb_threads\.c:\d+$`), tr.out(t, "continue", 0), "continue to main")
	mustMatch(t, regexp.MustCompile(`\A#0  main \(\) at \S*gdb_threads\.c:\d+\n\z`), tr.out(t, "bt", 0), "bt in main")
	checkGDBExit(t, tr, 1, pid, exit)
}
