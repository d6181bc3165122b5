package main

import (
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/trace"
)

// psEvents is `sh -c 'a b | sh -c c; (kill -SEGV $$)'` as hermit record
// logs it, with a child that is still running at the end.
func psEvents() []trace.Event {
	exec := func(pid int32, path string, argv ...string) trace.Event {
		return trace.Event{Kind: trace.KindExec, Tid: pid, Exec: &trace.Exec{Path: path, Argv: argv}}
	}
	fork := func(parent, child int32) trace.Event {
		return trace.Event{Kind: trace.KindClone, Tid: parent, Child: child, Flags: 17}
	}
	exit := func(pid, status int32) trace.Event {
		return trace.Event{Kind: trace.KindExit, Tid: pid, Status: status, Group: true}
	}
	return []trace.Event{
		exec(2, "/bin/sh", "sh", "-c", "a b | sh -c c; (kill -SEGV $$)"),
		fork(2, 3),
		fork(2, 4),
		exec(3, "/usr/bin/a", "a", "b c"),
		exec(4, "/bin/sh", "sh", "-c", "c"),
		fork(4, 5),
		exit(3, 0),
		exit(4, 3<<8),
		fork(2, 6),
		exit(6, 11),
		exit(2, 1<<8),
		exit(2, 1<<8),
	}
}

func TestTracePs(t *testing.T) {
	base := t.TempDir()
	dir := makeTrace(t, base, "sh", psEvents(), trace.Options{})
	code, out, errOut := runTraceCmd(t, base, "ps")
	want := `PID  PPID  EXIT     EVENT  CMD
2    -     1        0      sh -c "a b | sh -c c; (kill -SEGV $$)"
3    2     0        3      a "b c"
4    2     3        4      sh -c c
5    4     -        5      (fork of 4) sh -c c
6    2     SIGSEGV  8      (fork of 2) sh -c "a b | sh -c c; (kill -SEGV $$)"
`
	if code != 0 || out != want || errOut != "" {
		t.Errorf("ps: %d, %q\ngot:\n%s\nwant:\n%s", code, errOut, out, want)
	}
	code, out, _ = runTraceCmd(t, base, "info", dir)
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("info: %d, lacks the process table:\n%s", code, out)
	}

	// A trace without process events: its root, with the header's command.
	makeTrace(t, base, "old", []trace.Event{
		{Kind: trace.KindSyscall, Tid: 2, Sysno: 39},
		{Kind: trace.KindExit, Status: 9, Group: true},
	}, trace.Options{})
	code, out, _ = runTraceCmd(t, base, "ps")
	if want := "PID  PPID  EXIT     EVENT  CMD\n2    -     SIGKILL  0      old -l \"a b\"\n"; code != 0 || out != want {
		t.Errorf("ps of an old trace: %d\ngot:\n%s\nwant:\n%s", code, out, want)
	}

	code, out, _ = runTraceCmd(t, base, "ps", "--help")
	if code != 0 || !strings.Contains(out, "Usage: hermit trace ps") || !strings.Contains(out, "--onprocess") {
		t.Errorf("ps --help: %d\n%s", code, out)
	}
	code, out, _ = runTraceCmd(t, base, "--help")
	if code != 0 || !strings.Contains(out, "hermit trace ps [TRACE]") {
		t.Errorf("trace --help lacks ps: %d\n%s", code, out)
	}
	if code, _, errOut := runTraceCmd(t, base, "ps", "a", "b"); code != 2 || errOut == "" {
		t.Errorf("ps with two traces: %d, %q", code, errOut)
	}
}

// TestTracePsTruncated: ps of a trace cut short lists what it holds and
// fails with the damage.
func TestTracePsTruncated(t *testing.T) {
	base := t.TempDir()
	evs := psEvents()
	dir, err := trace.NewDir(base, "cut")
	if err != nil {
		t.Fatal(err)
	}
	w, err := trace.Create(dir, trace.Header{Argv: []string{"sh"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs[:5] {
		if err := w.Append(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil { // never closed: no index
		t.Fatal(err)
	}
	code, out, errOut := runTraceCmd(t, base, "ps", dir)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 4 || strings.Join(strings.Fields(lines[3]), " ") != "4 2 - 4 sh -c c" ||
		!strings.HasPrefix(errOut, "hermit trace ps: "+dir+": truncated") {
		t.Errorf("ps of a cut trace: %d, %q\n%s", code, errOut, out)
	}
}
