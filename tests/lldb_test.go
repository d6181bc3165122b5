package tests

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// lldbCmds is the lldb session over gdb_threads that TestLLDB runs, with
// lldb's target created from the program's binary: stops in main, in worker
// (all threads alive) and at the final print in main, and the run to the
// end.
func lldbCmds(addr string) []string {
	return []string{
		// A replay may take a while to answer a packet.
		"settings set plugin.process.gdb-remote.packet-timeout 60",
		"gdb-remote " + addr,
		"breakpoint set -n main",
		"process continue",
		"bt",
		"register read rip",
		"breakpoint set -n worker",
		"process continue",
		"thread list",
		"bt",
		"breakpoint delete -f",
		"breakpoint set -f gdb_threads.c -p 'global = %ld'",
		"process continue",
		"memory read -s8 -fd -c1 &global",
		"memory region &global",
		"process continue",
	}
}

var (
	lldbBreakpointRE = regexp.MustCompile(`(?m)^Breakpoint (\d+): where = \S+` + "`" + `(\w+) \+ \d+ at gdb_threads\.c:\d+:\d+, address = (0x[0-9a-f]+)$`)
	lldbStoppedRE    = regexp.MustCompile(`(?m)^Process (\d+) stopped\n\* thread #\d+, (?:name = '[^']*', )?stop reason = breakpoint (\d+)\.1\n +frame #0: (0x[0-9a-f]+) \S+` + "`" + `(\w+)(?:\(id=(\d)\))? at gdb_threads\.c:\d+:\d+$`)
	lldbRipRE        = regexp.MustCompile(`\A +rip = (0x[0-9a-f]+)  \S+` + "`" + `main \+ \d+ at gdb_threads\.c:\d+:\d+\n\z`)
	lldbThreadRE     = regexp.MustCompile(`(?m)^([* ]) thread #\d+: tid = (\d+), 0x[0-9a-f]+\b`)
	lldbBtWorkerRE   = regexp.MustCompile(`(?m)\A\* thread #\d+, .*\n  \* frame #0: 0x[0-9a-f]+ \S+` + "`" + `worker\(id=(\d)\) at gdb_threads\.c:\d+:\d+\n    frame #1: 0x[0-9a-f]+ \S+` + "`" + `thread_main\(arg=0x0+(\d)\) at gdb_threads\.c:\d+:\d+\n    frame #2: 0x[0-9a-f]+ libc\.so\.6` + "`")
	lldbBtMainRE     = regexp.MustCompile(`(?m)\A\* thread #\d+, .*\n  \* frame #0: 0x[0-9a-f]+ \S+` + "`" + `main at gdb_threads\.c:\d+:\d+\n    frame #1: 0x[0-9a-f]+ libc\.so\.6` + "`")
	lldbMemoryRE     = regexp.MustCompile(`\A(0x[0-9a-f]+): (-?\d+)\n\z`)
	lldbRegionRE     = regexp.MustCompile(`\A\[(0x[0-9a-f]+)-(0x[0-9a-f]+)\) (\S+) \S*gdb_threads`)
	lldbExitedRE     = regexp.MustCompile(`(?m)^Process (\d+) exited with status = (\d+) \(0x[0-9a-f]+\)$`)
)

// lldbStop checks that the nth `process continue` stopped the process
// (pid) at breakpoint bp, in function fn, and returns the pc and the worker
// id shown ("" outside worker).
func lldbStop(t *testing.T, tr transcript, nth, pid int, bp, fn string) (pc, id string) {
	t.Helper()
	m := mustMatch(t, lldbStoppedRE, tr.out(t, "process continue", nth), "process continue to "+fn)
	if m[1] != strconv.Itoa(pid) || m[2] != bp || m[4] != fn {
		t.Errorf("process continue: process %s stopped at breakpoint %s in %s, want process %d at breakpoint %s in %s", m[1], m[2], m[4], pid, bp, fn)
	}
	return m[3], m[5]
}

// checkLLDB checks the transcript of lldbCmds against what gdb_threads
// printed and the status it exited with.
func checkLLDB(t *testing.T, tr transcript, stdout []byte, exit int) {
	t.Helper()
	g := parseGuest(t, stdout)
	noClientErrors(t, tr, lldbNoise)

	// main: the breakpoint's address is the pc, in rip too.
	bp := mustMatch(t, lldbBreakpointRE, tr.out(t, "breakpoint set -n main", 0), "breakpoint set -n main")
	pc, _ := lldbStop(t, tr, 0, g.pid, "1", "main")
	mustMatch(t, lldbBtMainRE, tr.out(t, "bt", 0), "bt in main")
	rip := mustMatch(t, lldbRipRE, tr.out(t, "register read rip", 0), "register read rip")[1]
	if pc != bp[3] || rip != bp[3] {
		t.Errorf("stopped at main's breakpoint (%s) with pc %s, rip %s", bp[3], pc, rip)
	}

	// worker: every thread, by its recorded tid.
	bp = mustMatch(t, lldbBreakpointRE, tr.out(t, "breakpoint set -n worker", 0), "breakpoint set -n worker")
	pc, id := lldbStop(t, tr, 1, g.pid, "2", "worker")
	if pc != bp[3] {
		t.Errorf("stopped at worker's breakpoint (%s) with pc %s", bp[3], pc)
	}
	var ids []int
	current := 0
	for _, m := range lldbThreadRE.FindAllStringSubmatch(tr.out(t, "thread list", 0), -1) {
		tid, _ := strconv.Atoi(m[2])
		ids = append(ids, tid)
		if m[1] == "*" {
			current = tid
		}
	}
	if got, want := sortedInts(ids), g.tids(); got != want {
		t.Errorf("thread list shows tids %s, the program printed %s", got, want)
	}
	wid, _ := strconv.Atoi(id)
	if current != g.workerTid[wid] {
		t.Errorf("thread list marks tid %d current, but worker %d (tid %d) hit the breakpoint", current, wid, g.workerTid[wid])
	}
	if m := mustMatch(t, lldbBtWorkerRE, tr.out(t, "bt", 1), "bt in worker"); m[1] != id || m[2] != id {
		t.Errorf("bt shows worker %s started as %s, the breakpoint was hit by worker %s", m[1], m[2], id)
	}

	// The final print: global holds what the program prints next.
	lldbStop(t, tr, 2, g.pid, "3", "main")
	m := mustMatch(t, lldbMemoryRE, tr.out(t, "memory read -s8 -fd -c1 &global", 0), "memory read &global")
	if m[1] != g.global || m[2] != g.final {
		t.Errorf("memory read &global: %s: %s; the program printed &global %s, global = %s", m[1], m[2], g.global, g.final)
	}

	// The mapping that holds global, from the process's maps
	// (qMemoryRegionInfo), which lldb also finds the vDSO by.
	r := mustMatch(t, lldbRegionRE, tr.out(t, "memory region &global", 0), "memory region &global")
	lo, _ := strconv.ParseUint(r[1], 0, 64)
	hi, _ := strconv.ParseUint(r[2], 0, 64)
	if at, _ := strconv.ParseUint(g.global, 0, 64); at < lo || at >= hi || r[3] != "rw-" {
		t.Errorf("memory region &global: %s, want a rw- mapping of gdb_threads that holds %s", r[0], g.global)
	}

	m = mustMatch(t, lldbExitedRE, tr.out(t, "process continue", 3), "process continue to the end")
	if m[1] != strconv.Itoa(g.pid) || m[2] != strconv.Itoa(exit) {
		t.Errorf("lldb: %q, want process %d exited with status %d", m[0], g.pid, exit)
	}
}

// lldbAnnounceRE finds the lldb command hermit prints when it listens:
// `lldb EXE -o 'target modules search-paths add / ROOT/' -o 'gdb-remote
// ADDR'`, EXE possibly in single quotes.
var lldbAnnounceRE = regexp.MustCompile(`(?m)^\s*lldb ('[^']+'|\S+) -o 'target modules search-paths add / (\S+/)' -o 'gdb-remote (\S+:\d+)'\s*$`)

// TestLLDB debugs a replay of gdb_threads with lldb, run as hermit says
// to: on the program's file it names (in the replay's rebuilt root), and
// connected to the address it listens on.
// lldbExe returns the program's path that hermit tells lldb to load.
func lldbExe(t *testing.T, s *stub) (exe, root string) {
	t.Helper()
	// The lldb line follows the listening line startReplay waited for.
	m := s.announced(t, lldbAnnounceRE, "the lldb command hermit prints")
	if m[3] != s.addr {
		t.Errorf("hermit says to run lldb with gdb-remote %s, but it listens on %s", m[3], s.addr)
	}
	exe, root = strings.Trim(m[1], "'"), m[2]
	if !strings.HasPrefix(exe, root) {
		t.Errorf("hermit says to run lldb on %s, with libraries from %s, not the same root", exe, root)
	}
	return exe, root
}

// lldbReplay runs lldb's cmds over a replay of dir, after it connects
// (the stop there is the transcript's out of connect), with lldb's
// libraries taken from the recording, and checks lldb reported no error.
func lldbReplay(t *testing.T, dir string, cmds ...string) (tr transcript, connect string) {
	t.Helper()
	s := startReplay(t, dir)
	exe, root := lldbExe(t, s)
	connect = "gdb-remote " + s.addr
	tr = runLLDB(t, t.TempDir(), exe, append([]string{
		"target modules search-paths add / " + root,
		"settings set plugin.process.gdb-remote.packet-timeout 60",
		connect,
	}, cmds...)...)
	s.kill()
	noClientErrors(t, tr, lldbNoise)
	return tr, connect
}

func TestLLDB(t *testing.T) {
	requireDebugging(t, "lldb")
	dir, rec := recordThreads(t)
	s := startReplay(t, dir)
	exe, root := lldbExe(t, s)
	cmds := append([]string{"target modules search-paths add / " + root}, lldbCmds(s.addr)...)
	tr := runLLDB(t, t.TempDir(), exe, append(cmds, "image list")...)
	rep := s.wait(t)
	checkLLDB(t, tr, rec.Stdout, rec.Exit)
	// The libraries are the recording's, from the replay's root.
	if libc := regexp.MustCompile(`(?m) (/\S+/libc\.so\.6)\s*$`).FindStringSubmatch(tr.out(t, "image list", 0)); libc == nil || !strings.HasPrefix(libc[1], root) {
		t.Errorf("image list: libc %q, want the replay root's (%s)", libc, root)
	}
	checkServedRun(t, rec, rep)
	if t.Failed() {
		t.Logf("lldb:\n%s", tr.text)
	}
}

// lldbGoNoise is lldbNoise and the warning lldb 19 gives on a Go program.
var lldbGoNoise = regexp.MustCompile(lldbNoise.String() + `|^warning: This version of LLDB has no plugin for the language "go"\. `)

// TestLLDBStartAndSignals: lldb stops where it connects, at a static
// program's entry too, and names signals as Linux numbers them. Told the
// host is Linux (qHostInfo), lldb reads a stop's signal number as Linux's:
// gdb's numbers showed a SIGUSR1 as SIGPWR, and a SIGTRAP at a static
// program's entry was taken for the breakpoint lldb puts there to find
// the libraries, which it removes before it runs on: a Go program ran to
// its end as lldb connected.
func TestLLDBStartAndSignals(t *testing.T) {
	requireDebugging(t, "lldb")
	t.Run("a Go program", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "trace")
		rec := record(t, dir, nil, goGuest("gochan")(t))
		s := startReplay(t, dir)
		exe, _ := lldbExe(t, s)
		tr := runLLDB(t, t.TempDir(), exe,
			"settings set plugin.process.gdb-remote.packet-timeout 60",
			"gdb-remote "+s.addr,
			"breakpoint set -n main.work",
			"process continue",
			"breakpoint delete -f",
			"process continue")
		s.wait(t)
		noClientErrors(t, tr, lldbGoNoise)
		mustMatch(t, regexp.MustCompile(`(?m)^\* thread #1, (?:name = '[^']*', )?stop reason = signal SIGSTOP\n +frame #0: 0x[0-9a-f]+ \S+`+"`"+`_rt0_amd64_linux `),
			tr.out(t, "gdb-remote "+s.addr, 0), "the stop where lldb connects")
		mustMatch(t, regexp.MustCompile(`(?m)stop reason = breakpoint 1\.1\n +frame #0: 0x[0-9a-f]+ \S+`+"`"+`main\.work at main\.go:\d+$`),
			tr.out(t, "process continue", 0), "process continue to main.work")
		m := mustMatch(t, lldbExitedRE, tr.out(t, "process continue", 1), "process continue to the end")
		if m[2] != strconv.Itoa(rec.Exit) {
			t.Errorf("lldb: %q, want the recording's exit status %d", m[0], rec.Exit)
		}
		if t.Failed() {
			t.Logf("lldb:\n%s", tr.text)
		}
	})
	t.Run("signals", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "trace")
		record(t, dir, nil, cGuest("raise_signals.c")(t))
		// The SIGCHLD, which lldb passes on without a stop, comes first;
		// lldb's batch ends at a signal's stop.
		tr, connect := lldbReplay(t, dir, "process continue")
		mustMatch(t, regexp.MustCompile(`(?m)^\* thread #1, (?:name = '[^']*', )?stop reason = signal SIGSTOP$`),
			tr.out(t, connect, 0), "the stop where lldb connects")
		mustMatch(t, regexp.MustCompile(`(?m)^\* thread #1, (?:name = '[^']*', )?stop reason = signal SIGUSR1$`),
			tr.out(t, "process continue", 0), "process continue to the SIGUSR1")
		if t.Failed() {
			t.Logf("lldb:\n%s", tr.text)
		}
	})
	// lldb-server names a stop's thread and says what the kernel said of a
	// fault; lldb showed neither ("thread #2, stop reason = signal
	// SIGSEGV").
	t.Run("a fault in a named thread", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "trace")
		record(t, dir, nil, cGuest("named_fault.c")(t))
		tr, connect := lldbReplay(t, dir, "process continue")
		mustMatch(t, regexp.MustCompile(`(?m)^\* thread #1, name = 'named_fault', stop reason = signal SIGSTOP$`),
			tr.out(t, connect, 0), "the stop where lldb connects")
		mustMatch(t, regexp.MustCompile(`(?m)^\* thread #2, name = 'worker-1', stop reason = signal SIGSEGV: address not mapped to object \(fault address: 0x10\)\n +frame #0: 0x[0-9a-f]+ named_fault`+"`"+`worker\(arg=0x0+10\) at named_fault\.c:\d+`),
			tr.out(t, "process continue", 0), "process continue to the fault")
		if t.Failed() {
			t.Logf("lldb:\n%s", tr.text)
		}
	})
}
