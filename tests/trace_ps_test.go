package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	replaypkg "github.com/hermitdbg/hermit/replay"
	"github.com/hermitdbg/hermit/tests/testenv"
	"github.com/hermitdbg/hermit/trace"
)

// psRow is one row of `hermit trace ps`: PID PPID EXIT EVENT CMD.
type psRow struct {
	pid, ppid, exit, event, cmd string
}

// tracePs runs `hermit trace ps DIR` and parses its rows.
func tracePs(t *testing.T, dir string) []psRow {
	t.Helper()
	r := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "trace", "ps", dir)
	if r.Exit != 0 || len(r.Stderr) != 0 {
		t.Fatalf("hermit trace ps %s: %s", dir, describe(r))
	}
	lines := strings.Split(strings.TrimSuffix(string(r.Stdout), "\n"), "\n")
	if len(lines) < 2 || strings.Join(strings.Fields(lines[0]), " ") != "PID PPID EXIT EVENT CMD" {
		t.Fatalf("hermit trace ps %s:\n%s", dir, r.Stdout)
	}
	var rows []psRow
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 5 {
			t.Fatalf("hermit trace ps: row %q", l)
		}
		rows = append(rows, psRow{f[0], f[1], f[2], f[3], strings.Join(f[4:], " ")})
	}
	return rows
}

// psScript prints its pids as the guest sees them, and makes processes
// that exit with a status, are forked without exec, and die by a signal.
const psScript = `echo "root $$"
sh -c 'echo "child $$ $PPID"; exit 3'
echo "rc $?"
( exit 4 )
echo "rc $?"
sh -c 'kill -SEGV $$'
echo "rc $?"
echo hi | cat -u
`

// TestTracePsShell records a shell script and checks the process table
// against what its processes printed, and that the trace replays.
func TestTracePsShell(t *testing.T) {
	sh := testenv.Require(t, "sh")
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, []string{sh, "-c", psScript})
	var root, child, childParent int
	if _, err := fmt.Sscanf(string(rec.Stdout), "root %d\nchild %d %d\nrc 3\nrc 4\nrc 139\nhi\n", &root, &child, &childParent); err != nil || rec.Exit != 0 {
		t.Fatalf("the script printed (%v):\n%s", err, describe(rec))
	}
	rows := tracePs(t, dir)
	r, c := fmt.Sprint(root), fmt.Sprint(child)
	want := []psRow{
		{pid: r, ppid: "-", exit: "0", cmd: sh + " -c"},
		{pid: c, ppid: fmt.Sprint(childParent), exit: "3", cmd: `sh -c "echo \"child $$ $PPID\"; exit 3"`},
		{ppid: r, exit: "4", cmd: "(fork of " + r + ") " + sh + " -c"},
		{ppid: r, exit: "SIGSEGV", cmd: `sh -c "kill -SEGV $$"`},
		{ppid: r, exit: "0", cmd: "(fork of " + r + ") " + sh + " -c"}, // echo hi, a builtin
		{ppid: r, exit: "0", cmd: "cat -u"},
	}
	if len(rows) != len(want) {
		t.Fatalf("hermit trace ps: %d rows, want %d: %+v", len(rows), len(want), rows)
	}
	if childParent != root {
		t.Errorf("the child printed parent %d, the root printed pid %d", childParent, root)
	}
	prev := -1
	for i, w := range want {
		g := rows[i]
		var ev int
		if _, err := fmt.Sscan(g.event, &ev); err != nil || ev <= prev && i > 0 {
			t.Errorf("row %d: event %s after %d", i, g.event, prev)
		}
		prev = ev
		if w.pid != "" && g.pid != w.pid || g.ppid != w.ppid || g.exit != w.exit || !strings.HasPrefix(g.cmd, w.cmd) {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	sameRun(t, "hermit replay", rec, replay(t, dir))

	// The same recording as an older hermit wrote it, without process
	// events: ps shows the root alone, and replay refuses it in one line
	// (its schedule is no longer this hermit's), rather than diverging.
	old := filepath.Join(t.TempDir(), "old")
	withoutProcessEvents(t, dir, old)
	if r := replay(t, old); r.Exit != 125 || !strings.Contains(string(r.Stderr), "recorded with journal version 1; this hermit replays versions 17 to ") || len(r.Stdout) != 0 {
		t.Errorf("hermit replay of the old-style trace: want status 125 and one line saying to record again; %s", describe(r))
	}
	rows = tracePs(t, old)
	if len(rows) != 1 || rows[0] != (psRow{pid: r, ppid: "-", exit: "0", event: "0", cmd: sh + " -c " + fmt.Sprintf("%q", psScript)}) {
		t.Errorf("ps of the old-style trace: %+v", rows)
	}
}

// withoutProcessEvents writes the trace src at dst as journal version 1
// wrote it: no clone, exec or process exit events but the last, under tid
// 0, with the same blobs.
func withoutProcessEvents(t *testing.T, src, dst string) {
	t.Helper()
	r, err := trace.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hdr := *r.Header()
	hdr.Flags = map[string]string{}
	for k, v := range r.Header().Flags {
		hdr.Flags[k] = v
	}
	hdr.Flags["journal"] = "1"
	w, err := trace.Create(dst, hdr)
	if err != nil {
		t.Fatal(err)
	}
	last := r.Count() - 1
	for n, ev := range r.Events() {
		switch {
		case n == last && ev.Kind == trace.KindExit:
			ev.Tid = 0
		case ev.Kind == trace.KindClone, ev.Kind == trace.KindExec, ev.Kind == trace.KindExit:
			continue
		}
		if err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	copyTree(t, filepath.Join(src, "blobs"), filepath.Join(dst, "blobs"))
}

// TestTracePsExecs: an exec keeps the pid and the last exec's argv is
// shown; a vfork child that execs a shell has its own row.
func TestTracePsExecs(t *testing.T) {
	t.Run("exec_self", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "trace")
		argv := cGuest("exec_self.c")(t)
		rec := record(t, dir, nil, argv)
		rows := tracePs(t, dir)
		// stage 2 has argv [prog, "stage2", pid].
		if rec.Exit != 7 || len(rows) != 1 || rows[0].exit != "7" || rows[0].cmd != argv[0]+" stage2 "+rows[0].pid {
			t.Errorf("exec_self: %+v\n%s", rows, describe(rec))
		}
		sameRun(t, "hermit replay", rec, replay(t, dir))
	})
	t.Run("vfork_exec", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "trace")
		argv := cGuest("vfork_exec.c")(t)
		rec := record(t, dir, nil, argv)
		rows := tracePs(t, dir)
		if rec.Exit != 0 || len(rows) != 2 || rows[0].cmd != argv[0] || rows[0].exit != "0" ||
			rows[1].ppid != rows[0].pid || rows[1].exit != "5" || !strings.HasPrefix(rows[1].cmd, `sh -c "echo child`) {
			t.Errorf("vfork_exec: %+v\n%s", rows, describe(rec))
		}
		sameRun(t, "hermit replay", rec, replay(t, dir))
	})
	t.Run("fork_wait", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "trace")
		rec := record(t, dir, nil, cGuest("fork_wait.c")(t))
		rows := tracePs(t, dir)
		if len(rows) != 101 {
			t.Fatalf("fork_wait: %d rows, want the root and 100 children", len(rows))
		}
		for i, row := range rows[1:] {
			// Child i exits with status i.
			if row.ppid != rows[0].pid || row.exit != fmt.Sprint(i) || !strings.HasPrefix(row.cmd, "(fork of "+rows[0].pid+")") {
				t.Errorf("child %d: %+v", i, row)
			}
		}
		sameRun(t, "hermit replay", rec, replay(t, dir))
	})
}

// TestFindProcessSession: the process FindProcess names is live, running
// its program, at the event boundary RunToEvent(ExecEvent) reaches, as
// hermit replay --onprocess needs.
func TestFindProcessSession(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root (ptrace, pid and mount namespaces)")
	}
	sh := testenv.Require(t, "sh")
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, []string{sh, "-c", psScript})
	r, err := replaypkg.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	procs, err := r.Processes()
	if err != nil || len(procs) != 6 {
		t.Fatalf("Processes: %d, %v", len(procs), err)
	}
	if _, err := r.FindProcess("sh"); err == nil || !strings.Contains(err.Error(), "choose one by pid") {
		t.Errorf("FindProcess(sh) among several: %v", err)
	}
	cat, err := r.FindProcess("cat")
	if err != nil || cat.Argv[0] != "cat" || !cat.Exited || cat.ExitStatus != 0 {
		t.Fatalf("FindProcess(cat): %+v, %v", cat, err)
	}
	fork, err := r.FindProcess(fmt.Sprint(procs[2].Vpid)) // ( exit 4 )
	if err != nil || !fork.Forked || fork.ExitStatus != 4<<8 {
		t.Fatalf("FindProcess(%d): %+v, %v", procs[2].Vpid, fork, err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	s, err := replaypkg.NewSession(r.Starter(replaypkg.Options{Stdout: out, Stderr: out, CPU: -1}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []replaypkg.ProcessInfo{fork, cat} {
		st, err := s.RunToEvent(p.ExecEvent)
		if err != nil || st.Reason != replaypkg.ReasonEvent {
			t.Fatalf("RunToEvent(%d): %v, %v", p.ExecEvent, st, err)
		}
		tid := 0
		for _, th := range s.Threads() {
			if th.Vpid == p.Vpid {
				tid = th.Tid
			}
		}
		if tid == 0 {
			t.Fatalf("at event %d (ExecEvent %d), no thread of process %d: %+v", s.Event(), p.ExecEvent, p.Vpid, s.Threads())
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", tid))
		if want := filepath.Base(cat.ExecPath); p.Vpid == cat.Vpid && (err != nil || filepath.Base(exe) != want) {
			t.Errorf("process %d runs %q (%v), want %s", p.Vpid, exe, err, want)
		}
	}
	st, err := s.Continue()
	if err != nil || st.Reason != replaypkg.ReasonExited || st.Result.ExitCode != rec.Exit {
		t.Errorf("Continue to the end: %v, %v", st, err)
	}
}
