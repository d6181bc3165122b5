package tests

import (
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

var (
	gdbWhenRE     = regexp.MustCompile(`\ACurrent event: (\d+)\n\z`)
	gdbDetachedRE = regexp.MustCompile(`(?m)^\[Inferior 1 \(process (\d+)\) detached\]$`)
)

// gdbWhen returns the event number the nth `monitor when` printed.
func gdbWhen(t *testing.T, tr transcript, nth int) uint64 {
	t.Helper()
	m := mustMatch(t, gdbWhenRE, tr.out(t, "monitor when", nth), "monitor when")
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// gdbThreadRows returns the rows of `info threads` without gdb's own
// thread numbers (which depend on the order gdb learnt of the threads),
// sorted, with the current thread's row marked.
func gdbThreadRows(out string) []string {
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] == "Id" {
			continue
		}
		mark := " "
		if f[0] == "*" {
			mark, f = "*", f[1:]
		}
		if len(f) > 0 {
			if _, err := strconv.Atoi(f[0]); err == nil {
				f = f[1:]
			}
		}
		rows = append(rows, mark+" "+strings.Join(f, " "))
	}
	sort.Strings(rows)
	return rows
}

// listenFirstCmds is the first debugger's session: stop in worker, ask
// where the replay is, detach.
func listenFirstCmds(addr string) []string {
	return []string{"target extended-remote " + addr, "break worker", "continue", "monitor when", "info threads", "bt", "detach"}
}

// listenSecondCmds is the second debugger's session: the same place, then
// back to event k and on to the end.
func listenSecondCmds(addr string, k uint64) []string {
	g := "monitor goto " + strconv.FormatUint(k, 10)
	return []string{"target extended-remote " + addr, "monitor when", "info threads", "bt", g, "monitor when", "continue", "continue"}
}

// TestGDBKeepListening: with --keep-listening a second gdb, after the first
// detached, finds the replay where the first left it (same event, threads and
// stack), can send it back to an earlier event and run it to the end; and
// --goto starts the served replay at an event.
func TestGDBKeepListening(t *testing.T) {
	requireDebugging(t, "gdb")
	dir, rec, g, s := servedThreads(t, "--keep-listening")
	first := runGDB(t, t.TempDir(), listenFirstCmds(s.addr)...)
	noClientErrors(t, first, nil)
	mustMatch(t, gdbBreakWorkerRE, first.out(t, "continue", 0), "continue to worker")
	n1 := gdbWhen(t, first, 0)
	if m := mustMatch(t, gdbDetachedRE, first.out(t, "detach", 0), "detach"); m[1] != strconv.Itoa(g.pid) {
		t.Errorf("gdb detached from process %s, the program's pid is %d", m[1], g.pid)
	}
	if n1 < 2 {
		t.Fatalf("monitor when at the first worker's breakpoint: event %d; want a later one to go back from", n1)
	}
	select {
	case <-s.done:
		t.Fatalf("hermit replay --keep-listening exited %d after the first gdb detached", s.exit)
	default:
	}

	k := guestEventBefore(t, dir, n1/2)
	second := runGDB(t, t.TempDir(), listenSecondCmds(s.addr, k)...)
	rep := s.wait(t)
	noClientErrors(t, second, nil)
	if n := gdbWhen(t, second, 0); n != n1 {
		t.Errorf("the second gdb: monitor when says event %d, the first detached at %d", n, n1)
	}
	rows1, rows2 := gdbThreadRows(first.out(t, "info threads", 0)), gdbThreadRows(second.out(t, "info threads", 0))
	if strings.Join(rows1, "\n") != strings.Join(rows2, "\n") {
		t.Errorf("info threads differs between the first gdb and the second:\n%s\nvs\n%s", strings.Join(rows1, "\n"), strings.Join(rows2, "\n"))
	}
	if bt1, bt2 := first.out(t, "bt", 0), second.out(t, "bt", 0); bt1 != bt2 {
		t.Errorf("bt differs between the first gdb and the second:\n%s\nvs\n%s", bt1, bt2)
	}
	if n := gdbWhen(t, second, 1); n != k {
		t.Errorf("after monitor goto %d, monitor when says event %d", k, n)
	}
	checkGDBExit(t, second, 0, g.pid, rec.Exit)
	if rep.Exit != rec.Exit {
		t.Errorf("hermit replay --keep-listening exited %d after the run to the end, the recording %d", rep.Exit, rec.Exit)
	}
	if t.Failed() {
		t.Fatalf("first gdb:\n%s\nsecond gdb:\n%s", first.text, second.text)
	}

	// --goto n1: the served replay starts at that event.
	s = startReplay(t, dir, "--goto", strconv.FormatUint(n1, 10))
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "monitor when", "continue", "continue")
	rep = s.wait(t)
	noClientErrors(t, tr, nil)
	if n := gdbWhen(t, tr, 0); n != n1 {
		t.Errorf("replay --goto %d: monitor when says event %d", n1, n)
	}
	checkGDBExit(t, tr, 0, g.pid, rec.Exit)
	checkServedRun(t, rec, rep)
	if t.Failed() {
		t.Logf("gdb:\n%s", tr.text)
	}
}

// TestKeepListeningAfterDisconnect: with --keep-listening, a debugger
// that goes away without detaching (killed, or a half packet and a closed
// connection) leaves the replay listening, as a detach does: hermit says
// so, and the next gdb runs it to the end.
func TestKeepListeningAfterDisconnect(t *testing.T) {
	requireDebugging(t, "gdb")
	_, rec, g, s := servedThreads(t, "--keep-listening")
	halfPacketAndGo(t, s.addr)
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "continue", "continue")
	rep := s.wait(t)
	noClientErrors(t, tr, nil)
	checkGDBExit(t, tr, 0, g.pid, rec.Exit)
	if !strings.Contains(string(rep.Stderr), "hermit: the debugger went away without detaching at event ") || rep.Exit != rec.Exit {
		t.Errorf("after a debugger went away and another ran the replay to its end: want the recording's exit %d and a line saying the first went away; %s", rec.Exit, describe(rep))
	}
}

// guestEventRE matches a call of a guest thread in `hermit trace dump`.
var guestEventRE = regexp.MustCompile(`(?m)^#(\d+) [1-9]\d* -> `)

// guestEventBefore returns the last event at or before n of trace dir
// that is a guest thread's call: a boundary a replay stops at exactly
// (an answer of the host's comes within a call's handling; goto goes on
// to the next boundary).
func guestEventBefore(t *testing.T, dir string, n uint64) uint64 {
	t.Helper()
	dump := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "trace", "dump", dir)
	best := uint64(0)
	for _, m := range guestEventRE.FindAllStringSubmatch(string(dump.Stdout), -1) {
		if e, _ := strconv.ParseUint(m[1], 10, 64); e <= n && e > best {
			best = e
		}
	}
	if best == 0 {
		t.Fatalf("no guest call at or before event %d in %s:\n%s", n, dir, dump.Stdout)
	}
	return best
}

// TestKeepListeningForgetsTheDeadDebugger: a gdb killed at a breakpoint
// (no detach) leaves nothing behind for the next one: its continues run
// the replay to its end. (Before, the breakpoint stayed in the replay, and
// the next debugger stopped there with a SIGTRAP it never asked for; lldb
// 14 and 19 alike.)
func TestKeepListeningForgetsTheDeadDebugger(t *testing.T) {
	requireDebugging(t, "gdb")
	_, rec, g, s := servedThreads(t, "--keep-listening")
	first := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "break thread_main", "catch syscall write", "continue",
		"shell kill -9 $PPID")
	if !strings.Contains(first.text, "Breakpoint 1, thread_main") && !strings.Contains(first.text, "Catchpoint 2") {
		t.Fatalf("the first gdb did not stop where it asked:\n%s", first.text)
	}
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "continue", "continue")
	rep := s.wait(t)
	t.Logf("first gdb:\n%s\nsecond:\n%s\nstub: %s", first.text, tr.text, describe(rep))
	noClientErrors(t, tr, nil)
	checkGDBExit(t, tr, 0, g.pid, rec.Exit)
	if !strings.Contains(string(rep.Stderr), "hermit: the debugger went away without detaching at event ") || rep.Exit != rec.Exit {
		t.Errorf("want the recording's exit %d and a line saying the first debugger went away; %s", rec.Exit, describe(rep))
	}
}

// TestDetachWarnsOfNothing: a debugger that stops a replay at a signal and
// detaches (the replay is killed there, after more real time than the
// program's timer was armed for) gets no warning that "the guest failed"
// with a timer armed: a replay follows its recording, and its real time
// tells nothing.
func TestDetachWarnsOfNothing(t *testing.T) {
	requireDebugging(t, "gdb")
	dir := filepath.Join(t.TempDir(), "trace")
	if rec := record(t, dir, nil, cGuest("itimer_pause.c")(t)); rec.Exit != 0 || string(rec.Stdout) != "ticks 5\n" {
		t.Fatalf("record itimer_pause: %s", describe(rec))
	}
	s := startReplay(t, dir)
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "catch signal SIGALRM", "continue", "shell sleep 0.2", "detach")
	rep := s.wait(t)
	mustMatch(t, regexp.MustCompile(`(?m)^Catchpoint 1 \(signal SIGALRM\), `), tr.out(t, "continue", 0), "continue to the first SIGALRM")
	if strings.Contains(string(rep.Stderr), "warning") || rep.Exit != 0 {
		t.Errorf("want exit 0 and no warning after the detach; %s", describe(rep))
	}
}

// TestGDBGotoPastTheEnd: monitor goto to an event after the debugged
// process has ended is refused, saying where it ends, and the replay stays
// where it was: gdb goes on (it was left with a process without
// registers, E01 to everything).
func TestGDBGotoPastTheEnd(t *testing.T) {
	requireDebugging(t, "gdb")
	_, rec, g, s := servedThreads(t)
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "break worker", "continue", "monitor when",
		"monitor goto 999999", "monitor when", "info registers rip", "delete", "continue", "continue")
	rep := s.wait(t)
	if !regexp.MustCompile(`goto 999999: process \d+ is not alive at event 999999 \(the recording ends at event \d+\): the replay stays at event \d+`).MatchString(tr.out(t, "monitor goto 999999", 0)) {
		t.Errorf("monitor goto past the end: want a refusal saying where the recording ends:\n%s", tr.text)
	}
	if n1, n2 := gdbWhen(t, tr, 0), gdbWhen(t, tr, 1); n1 != n2 {
		t.Errorf("monitor when says event %d before the refused goto, %d after; want the replay to stay", n1, n2)
	}
	if !regexp.MustCompile(`(?m)^rip +0x[0-9a-f]+ `).MatchString(tr.out(t, "info registers rip", 0)) {
		t.Errorf("info registers after the refused goto: want rip:\n%s", tr.text)
	}
	checkGDBExit(t, tr, 1, g.pid, rec.Exit)
	checkServedRun(t, rec, rep)
}

// TestLLDBQuitKeepsListening: lldb kills the process as it quits; with
// --keep-listening the replay is kept for the next debugger, as for a
// detach (the kill ended it).
func TestLLDBQuitKeepsListening(t *testing.T) {
	requireDebugging(t, "lldb")
	dir, rec := recordThreads(t)
	s := startReplay(t, dir, "--keep-listening")
	exe, root := lldbExe(t, s)
	first := runLLDB(t, t.TempDir(), exe, "target modules search-paths add / "+root, "gdb-remote "+s.addr, "breakpoint set -n worker", "process continue")
	if !strings.Contains(first.text, "stop reason = breakpoint") {
		t.Fatalf("lldb did not stop at worker:\n%s", first.text)
	}
	select {
	case <-s.done:
		t.Fatalf("hermit replay --keep-listening exited %d when lldb quit", s.exit)
	case <-time.After(time.Second):
	}
	tr := runGDB(t, t.TempDir(), "target extended-remote "+s.addr, "continue", "continue")
	rep := s.wait(t)
	checkGDBExit(t, tr, 0, parseGuest(t, rec.Stdout).pid, rec.Exit)
	if !strings.Contains(string(rep.Stderr), "hermit: the debugger quit (it asked to kill the process; the replay is kept)") || rep.Exit != rec.Exit {
		t.Errorf("after lldb quit and gdb ran the replay to its end: want the recording's exit %d and a line saying lldb quit; %s", rec.Exit, describe(rep))
	}
}
