package trace_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hermitdbg/hermit/trace"
	"github.com/hermitdbg/hermit/trace/tracetest"
)

// Clone flags (<linux/sched.h>).
const (
	sigchld     = 17
	cloneVM     = 0x100
	cloneVfork  = 0x4000
	cloneParent = 0x8000
	cloneThread = 0x10000
	threadFlags = 0x3d0f00
)

func execEv(pid int32, path string, argv ...string) trace.Event {
	return trace.Event{Kind: trace.KindExec, Tid: pid, Exec: &trace.Exec{Path: path, Argv: argv}}
}

func cloneEv(tid, child int32, flags uint64) trace.Event {
	return trace.Event{Kind: trace.KindClone, Tid: tid, Child: child, Flags: flags}
}

func exitEv(pid, status int32) trace.Event {
	return trace.Event{Kind: trace.KindExit, Tid: pid, Status: status, Group: true}
}

func enterEv(tid int32) trace.Event {
	return trace.Event{Kind: trace.KindSyscall, Tid: tid, Sysno: 39, Digest: 1}
}

func table(h *trace.Header, evs []trace.Event) []trace.Process {
	pt := trace.NewProcessTable(h)
	for i := range evs {
		pt.Add(uint64(i), &evs[i])
	}
	return pt.Processes()
}

func checkTable(t *testing.T, got, want []trace.Process) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d processes, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("process %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// TestProcessTable covers what hermit record logs: the root's exec,
// threads, forks from a thread, CLONE_PARENT, vfork and exec, several
// execs (each naming the program before it), exits and kills, a process still running at the end, and the
// root's exit twice (its own and the one that ends the recording).
func TestProcessTable(t *testing.T) {
	h := &trace.Header{Argv: []string{"sh", "-c", "x"}}
	evs := []trace.Event{
		{Kind: trace.KindFile, File: &trace.File{Path: "/bin/sh"}},
		execEv(2, "/bin/sh", "sh", "-c", "x"), // 1
		cloneEv(2, 3, threadFlags),            // 2: a thread of 2
		enterEv(3),
		cloneEv(3, 4, sigchld),             // 4: a fork from the thread
		cloneEv(4, 5, sigchld|cloneParent), // 5: 4's sibling
		cloneEv(2, 6, cloneVM|cloneVfork|sigchld),
		execEv(6, "/bin/cat", "cat"),
		enterEv(6),
		execEv(6, "tr", "tr", "a", "b"), // 9: the last exec counts
		cloneEv(6, 7, threadFlags),
		execEv(6, "/bin/true", "true"), // 11: from thread 7, which takes pid 6
		exitEv(6, 3<<8),
		exitEv(4, 11),
		exitEv(2, 0),
		exitEv(2, 0), // the end of the recording
	}
	sh := []string{"sh", "-c", "x"}
	checkTable(t, table(h, evs), []trace.Process{
		{Vpid: 2, Argv: sh, ExecPath: "/bin/sh", Execed: true, Event: 1, Exited: true, Status: 0},
		{Vpid: 4, Ppid: 2, Argv: sh, ExecPath: "/bin/sh", ForkOf: 2, Event: 4, Exited: true, Status: 11},
		{Vpid: 5, Ppid: 2, Argv: sh, ExecPath: "/bin/sh", ForkOf: 4, Event: 5},
		{Vpid: 6, Ppid: 2, Argv: []string{"true"}, ExecPath: "/bin/true", Execed: true, Event: 11, Exited: true, Status: 3 << 8,
			Before: []string{"cat", "tr"}},
	})
}

// TestProcessTableOldTrace: a trace without process events shows its
// root alone, with the header's command, its first caller's pid, and the
// exit that ends the recording (under tid 0, as hermit used to write it).
func TestProcessTableOldTrace(t *testing.T) {
	h := &trace.Header{Argv: []string{"./prog", "a"}}
	evs := []trace.Event{
		{Kind: trace.KindFile, File: &trace.File{Path: "/prog"}},
		{Kind: trace.KindSyscall, External: true, Sysno: -10, Digest: 1}, // a cpuid answer
		enterEv(2),
		enterEv(2),
		exitEv(0, 3<<8),
	}
	root := trace.Process{Vpid: 2, Argv: []string{"./prog", "a"}, Execed: true, Exited: true, Status: 3 << 8}
	checkTable(t, table(h, evs), []trace.Process{root})

	// Cut before the end: the root has not ended.
	root.Exited, root.Status = false, 0
	checkTable(t, table(h, evs[:4]), []trace.Process{root})

	// No events at all.
	checkTable(t, table(h, nil), nil)
}

// TestProcessTableStream: tracetest's stream is one process (an exec,
// then clones of threads).
func TestProcessTableStream(t *testing.T) {
	s := tracetest.NewStream(1, true)
	pt := trace.NewProcessTable(nil)
	var ev trace.Event
	for n := range uint64(5000) {
		s.Next(&ev)
		pt.Add(n, &ev)
	}
	checkTable(t, pt.Processes(), []trace.Process{
		{Vpid: 1000, Argv: []string{"server", "--port", "8080"}, ExecPath: "/usr/bin/server", Execed: true},
	})
}

// TestReadProcesses reads the table from a trace on disk, and keeps its
// rows: they do not alias the reader's buffers.
func TestReadProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	w, err := trace.Create(dir, trace.Header{Argv: []string{"sh"}})
	if err != nil {
		t.Fatal(err)
	}
	evs := []trace.Event{
		execEv(2, "/bin/sh", "sh", "-c", "cat"),
		cloneEv(2, 3, sigchld),
		execEv(3, "/bin/cat", "cat", "-n"),
		exitEv(3, 0),
		exitEv(2, 0),
		exitEv(2, 0),
	}
	for i := range evs {
		if err := w.Append(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	procs, err := trace.ReadProcesses(openReader(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	checkTable(t, procs, []trace.Process{
		{Vpid: 2, Argv: []string{"sh", "-c", "cat"}, ExecPath: "/bin/sh", Execed: true, Exited: true},
		{Vpid: 3, Ppid: 2, Argv: []string{"cat", "-n"}, ExecPath: "/bin/cat", Execed: true, Event: 2, Exited: true},
	})
}
