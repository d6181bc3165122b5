package replay

import (
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/trace"
)

func execEvent(pid int32, path string, argv ...string) trace.Event {
	return trace.Event{Kind: trace.KindExec, Tid: pid, Exec: &trace.Exec{Path: path, Argv: argv}}
}

// shellTrace is `sh -c 'a | sh -c b; (exit 2)'` as hermit record logs it.
func shellTrace() []trace.Event {
	getpid := [6]uint64{}
	return []trace.Event{
		execEvent(2, "/bin/sh", "sh", "-c", "..."), // 0
		enter(2, abi.SYS_GETPID, getpid),
		{Kind: trace.KindClone, Tid: 2, Child: 3, Flags: abi.SIGCHLD}, // 2
		{Kind: trace.KindClone, Tid: 2, Child: 4, Flags: abi.SIGCHLD},
		execEvent(3, "/usr/bin/a", "a"), // 4
		enter(3, abi.SYS_GETPID, getpid),
		execEvent(4, "/bin/sh", "sh", "-c", "b"), // 6
		enter(4, abi.SYS_GETPID, getpid),
		{Kind: trace.KindExit, Tid: 3, Status: 9, Group: true},
		{Kind: trace.KindExit, Tid: 4, Status: 0, Group: true},
		{Kind: trace.KindClone, Tid: 2, Child: 5, Flags: abi.SIGCHLD}, // 10
		{Kind: trace.KindExit, Tid: 5, Status: 2 << 8, Group: true},
		enter(2, abi.SYS_GETPID, getpid),
		{Kind: trace.KindExit, Tid: 2, Status: 0, Group: true},
		{Kind: trace.KindExit, Tid: 2, Status: 0, Group: true},
	}
}

// TestPlayerSkipsProcessEvents: the process events are not boundaries
// and do not end the recording; a child's SIGKILL is not the root's.
func TestPlayerSkipsProcessEvents(t *testing.T) {
	var events []uint64
	p := newPlayer(writeTrace(t, shellTrace(), true), func(n uint64) { events = append(events, n) })
	for _, vtid := range []int{2, 3, 4, 2} {
		if err := p.Enter(&detcore.Call{Vtid: vtid, Nr: abi.SYS_GETPID}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.finish(detcore.Result{}); err != nil {
		t.Errorf("finish: %v", err)
	}
	if want := []uint64{1, 5, 7, 12}; len(events) != len(want) || events[0] != 1 || events[1] != 5 || events[2] != 7 || events[3] != 12 {
		t.Errorf("event boundaries %v, want %v", events, want)
	}
}

func TestFindProcess(t *testing.T) {
	dir := writeTrace(t, shellTrace(), true).Dir()
	rec := &Recording{Dir: dir, Settings: recorder.Settings{Path: "/bin/sh"}}
	procs, err := rec.Processes()
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) != 4 || procs[1].Name() != "a" || procs[1].ExecEvent != 4 || procs[1].Ppid != 2 ||
		!procs[1].Exited || procs[1].ExitStatus != 9 || !procs[3].Forked || procs[3].ExecEvent != 10 {
		t.Fatalf("processes %+v", procs)
	}
	for sel, want := range map[string]int{"2": 2, "a": 3, " 4 ": 4, "5": 5} {
		p, err := rec.FindProcess(sel)
		if err != nil || p.Vpid != want {
			t.Errorf("FindProcess(%q) = %d, %v; want %d", sel, p.Vpid, err, want)
		}
	}
	for sel, want := range map[string]string{
		"sh": `"sh" names 2 processes of the recording: 2 (sh), 4 (sh); choose one by pid`,
		"7":  "no process 7 in the recording; its processes: 2 (sh), 3 (a), 4 (sh), 5 (sh, a fork)",
		"b":  `no process named "b"`,
	} {
		if _, err := rec.FindProcess(sel); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("FindProcess(%q): %v; want %q", sel, err, want)
		}
	}
}

// TestProcessesOldTrace: a trace without process events has its root,
// named by the header's command and the recorded path.
func TestProcessesOldTrace(t *testing.T) {
	evs := []trace.Event{enter(2, abi.SYS_GETPID, [6]uint64{}), {Kind: trace.KindExit, Status: 1 << 8, Group: true}}
	rec := &Recording{Dir: writeTrace(t, evs, true).Dir(), Settings: recorder.Settings{Path: "/usr/bin/x"}}
	p, err := rec.FindProcess("x")
	if err != nil || p.Vpid != 2 || p.ExecPath != "/usr/bin/x" || p.ExecEvent != 0 || !p.Exited || p.ExitStatus != 1<<8 {
		t.Errorf("root of an old trace: %+v, %v", p, err)
	}
}

// TestFindProcessBeforeItsLastExec: a program a process ran before its
// last exec is named as such, not as missing (the user sees it in ps or
// in the guest's output, and would look for a typo).
func TestFindProcessBeforeItsLastExec(t *testing.T) {
	evs := []trace.Event{
		execEvent(2, "/usr/bin/env", "env", "prog"), // 0
		enter(2, abi.SYS_GETPID, [6]uint64{}),
		execEvent(2, "/usr/bin/prog", "prog"), // 2
		enter(2, abi.SYS_GETPID, [6]uint64{}),
		{Kind: trace.KindExit, Tid: 2, Status: 0, Group: true},
		{Kind: trace.KindExit, Tid: 2, Status: 0, Group: true},
	}
	rec := &Recording{Dir: writeTrace(t, evs, true).Dir()}
	if p, err := rec.FindProcess("prog"); err != nil || p.Vpid != 2 || p.ExecEvent != 2 || strings.Join(p.Before, " ") != "env" {
		t.Errorf("FindProcess(prog) = %+v, %v; want process 2 from event 2, env before", p, err)
	}
	want := "process 2 ran env, then exec'd prog at event 2, and a process is debugged from its last exec on"
	if _, err := rec.FindProcess("env"); err == nil || err.Error() != want {
		t.Errorf("FindProcess(env): %v; want %q", err, want)
	}
}
