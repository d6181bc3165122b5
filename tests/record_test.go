package tests

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
	"github.com/hermitdbg/hermit/trace"
)

// recordTimeout bounds one `hermit record` or `hermit replay`. The guests
// here take well under a second under `hermit run`.
const recordTimeout = runTimeout

// replayExit is the exit status of a replay that diverged or hit damage.
const replayExit = 125

// savedLine is the first words of the line `hermit record` ends with.
const savedLine = "hermit: trace saved to "

// record runs `hermit record -o DIR -- ARGV` with stdin (nil: /dev/null)
// and checks what every successful recording must show: the line naming
// DIR on stderr, and a trace in DIR. It returns the result with hermit's
// own lines taken out of stderr, leaving the guest's.
func record(t *testing.T, dir string, stdin []byte, argv []string) testenv.Result {
	t.Helper()
	args := append([]string{"record", "-o", dir, "--"}, argv...)
	r := testenv.RunWith(t, hermitOpts(t, stdin), testenv.Hermit(t), args...)
	if !strings.Contains(string(r.Stderr), savedLine+dir) {
		t.Fatalf("hermit %s: stderr lacks %q\n%s", strings.Join(args, " "), savedLine+dir, describe(r))
	}
	if !trace.IsTrace(dir) {
		t.Fatalf("hermit record said it saved %s, but it holds no trace", dir)
	}
	r.Stderr = guestStderr(r.Stderr)
	keepOnFailure(t, dir)
	return r
}

// keepOnFailure copies the trace in dir, before the test's temporary
// directories go, to hermit-failed-traces/TEST under the system's
// temporary directory if the test fails, and says where: a failure that
// depends on the machine's load can then be replayed again by hand.
func keepOnFailure(t *testing.T, dir string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		dst := filepath.Join(os.TempDir(), "hermit-failed-traces", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
		os.RemoveAll(dst)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			t.Logf("keeping the trace: %v", err)
			return
		}
		if out, err := exec.Command("cp", "-a", dir, dst).CombinedOutput(); err != nil {
			t.Logf("keeping the trace: cp: %v: %s", err, out)
			return
		}
		t.Logf("the trace is kept in %s", dst)
	})
}

// replay runs `hermit replay --autopilot DIR` with stdin /dev/null.
func replay(t *testing.T, dir string) testenv.Result {
	t.Helper()
	return testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "replay", "--autopilot", dir)
}

// hermitOpts points $HERMIT_TRACE_DIR at a fresh directory, so that no test
// writes to or reads from the user's traces.
func hermitOpts(t *testing.T, stdin []byte) testenv.Opts {
	return testenv.Opts{Timeout: recordTimeout, Stdin: stdin, Env: []string{"HERMIT_TRACE_DIR=" + t.TempDir()}}
}

// guestStderr drops hermit's own lines ("hermit: ...") from a recording's
// stderr. No guest used here writes such a line.
func guestStderr(stderr []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(stderr, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("hermit: ")) {
			out = append(out, line...)
		}
	}
	return out
}

// sameRun fails t unless got (a replay) shows its user exactly what want
// (the recording) did: stdout and stderr bytes and exit status.
func sameRun(t *testing.T, what string, want, got testenv.Result) {
	t.Helper()
	if d := firstDiff(want.Stdout, got.Stdout); d != "" {
		t.Errorf("%s: stdout differs from the recording's at %s", what, d)
	}
	if d := firstDiff(want.Stderr, got.Stderr); d != "" {
		t.Errorf("%s: stderr differs from the recording's at %s", what, d)
	}
	if got.Exit != want.Exit {
		t.Errorf("%s: exit %d, the recording exited %d", what, got.Exit, want.Exit)
	}
	if t.Failed() {
		t.Fatalf("recording: %s\n%s: %s", describe(want), what, describe(got))
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// randomText returns n random bytes as hex text (2n characters).
func randomText(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestRecordReplayFetch records a Go program that reads stdin, a file and
// an HTTP response and uses the clock and both random sources, then
// replays it with the server stopped, the file changed and no stdin: the
// replay must print what the recording printed, digests included.
func TestRecordReplayFetch(t *testing.T) {
	fetch := testenv.BuildGo(t, "fetch")
	tmp := t.TempDir()
	line := "line " + randomText(t, 8) + "\n"
	file := filepath.Join(tmp, "input")
	content := []byte("file " + randomText(t, 1000) + "\n")
	if err := os.WriteFile(file, content, 0o644); err != nil {
		t.Fatal(err)
	}
	body := []byte(strings.Repeat(randomText(t, 512)+"\n", 100)) // ~100 KiB: many reads
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write(body)
	}))
	defer srv.Close()

	dir := filepath.Join(tmp, "trace")
	rec := record(t, dir, []byte(line), []string{fetch, file, srv.URL + "/data"})
	if rec.Exit != 0 {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	for _, want := range []string{
		fmt.Sprintf("stdin %d bytes sha256 %s\n", len(line), sha256Hex([]byte(line))),
		fmt.Sprintf("file %d bytes sha256 %s\n", len(content), sha256Hex(content)),
		fmt.Sprintf("http 200 OK, %d bytes sha256 %s\n", len(body), sha256Hex(body)),
	} {
		if !strings.Contains(string(rec.Stdout), want) {
			t.Fatalf("hermit record: stdout lacks %q\n%s", want, describe(rec))
		}
	}

	srv.Close()
	if err := os.WriteFile(file, []byte("changed after the recording\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sameRun(t, "hermit replay", rec, replay(t, dir))
}

// TestReplayWithoutOriginals records a threaded Python script and a Go
// program run by timers, copies the trace elsewhere, deletes the script or
// binary and the original trace, and replays the copy.
func TestReplayWithoutOriginals(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) []string // copies the guest into dir, returns argv
		want  string                                  // the recording's stdout must contain this
	}{
		{"python threading", func(t *testing.T, dir string) []string {
			py := testenv.Require(t, "python3")
			script := filepath.Join(dir, "threads.py")
			copyOrFail(t, filepath.Join(testenv.GuestsDir(t), "threads.py"), script)
			return []string{py, script}
		}, "\norder "},
		{"go goroutines and timers", func(t *testing.T, dir string) []string {
			bin := filepath.Join(dir, "gotimers")
			copyOrFail(t, testenv.BuildGo(t, "gotimers"), bin)
			return []string{bin}
		}, " done\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			guestDir := filepath.Join(tmp, "guest")
			if err := os.Mkdir(guestDir, 0o755); err != nil {
				t.Fatal(err)
			}
			argv := c.setup(t, guestDir)
			orig := filepath.Join(tmp, "trace")
			rec := record(t, orig, nil, argv)
			if rec.Exit != 0 || !strings.Contains(string(rec.Stdout), c.want) {
				t.Fatalf("hermit record: want exit 0 and stdout containing %q, got %s", c.want, describe(rec))
			}

			moved := filepath.Join(tmp, "elsewhere", "copy")
			if err := os.MkdirAll(filepath.Dir(moved), 0o700); err != nil {
				t.Fatal(err)
			}
			copyTree(t, orig, moved)
			for _, p := range []string{guestDir, orig} {
				if err := os.RemoveAll(p); err != nil {
					t.Fatal(err)
				}
			}
			sameRun(t, "hermit replay of the copy", rec, replay(t, moved))
		})
	}
}

func copyOrFail(t *testing.T, src, dst string) {
	t.Helper()
	fi, err := os.Stat(src)
	if err == nil {
		err = copyFile(src, dst, fi.Mode().Perm())
	}
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// addrLineRE matches the lines addrs.c prints for main and each thread.
var addrLineRE = regexp.MustCompile(`(?m)^(main|thread \d): tid \d+ stack 0x[0-9a-f]+ heap 0x[0-9a-f]+ tls 0x[0-9a-f]+$`)

// savedRE finds the trace directory in the line `hermit record` ends with.
var savedRE = regexp.MustCompile(`(?m)^hermit: trace saved to (\S+)`)

// TestRecordDefaultDir records without -o: the trace goes to a new
// directory in $HERMIT_TRACE_DIR, the latest link points at it, and replay
// finds it with no argument and by its name.
func TestRecordDefaultDir(t *testing.T) {
	base := t.TempDir()
	o := testenv.Opts{Timeout: recordTimeout, Env: []string{"HERMIT_TRACE_DIR=" + base}}
	rec := testenv.RunWith(t, o, testenv.Hermit(t), append([]string{"record", "--"}, cGuest("lines.c", "3")(t)...)...)
	m := savedRE.FindSubmatch(rec.Stderr)
	if rec.Exit != 0 || string(rec.Stdout) != "line 0\nline 1\nline 2\n" || m == nil {
		t.Fatalf("hermit record: want exit 0, 3 lines and %q, got %s", savedLine+"DIR", describe(rec))
	}
	dir := string(m[1])
	if filepath.Dir(dir) != base || !trace.IsTrace(dir) {
		t.Fatalf("hermit record saved the trace to %s, want a new trace directory in $HERMIT_TRACE_DIR %s", dir, base)
	}
	if latest, err := filepath.EvalSymlinks(filepath.Join(base, trace.LatestLink)); err != nil || latest != dir {
		t.Errorf("%s/%s points at %q (%v), want %s", base, trace.LatestLink, latest, err, dir)
	}
	rec.Stderr = guestStderr(rec.Stderr)
	for _, args := range [][]string{{}, {filepath.Base(dir)}} {
		r := testenv.RunWith(t, o, testenv.Hermit(t), append([]string{"replay", "--autopilot"}, args...)...)
		sameRun(t, fmt.Sprintf("hermit replay --autopilot %s", strings.Join(args, " ")), rec, r)
	}
}

// TestRecordReplayAddrs records a racy threaded C program that prints its
// tids and stack, heap and TLS addresses, which natively change on every
// run; two replays must print the same bytes as the recording.
func TestRecordReplayAddrs(t *testing.T) {
	argv := cGuest("addrs.c")(t)
	nat := nativeVaries(t, argv)
	if n := len(addrLineRE.FindAll(nat.Stdout, -1)); n != 5 {
		t.Fatalf("native run: %d tid and address lines, want 5:\n%s", n, nat.Stdout)
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, argv)
	if rec.Exit != 0 {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	if n := len(addrLineRE.FindAll(rec.Stdout, -1)); n != 5 {
		t.Fatalf("hermit record: %d tid and address lines, want 5\n%s", n, describe(rec))
	}
	for i := 1; i <= 2; i++ {
		sameRun(t, fmt.Sprintf("hermit replay %d", i), rec, replay(t, dir))
	}
}

// divergedRE is the one line a diverging replay prints: the event, the
// thread, and the recorded and the replayed system call.
var divergedRE = regexp.MustCompile(`\Ahermit: replay diverged at event (\d+): thread (\d+)\b.*: expected ([a-z0-9_]+)\(.*\) got ([a-z0-9_]+)\(.*\)\n\z`)

// TestReplayDivergence records branch.c taking path "a" (read a file),
// rewrites the stdin bytes in the trace to "b" (call uname) and checks
// that the replay stops at the first system call that differs, with one
// line naming it, and prints nothing the guest wrote after that point.
func TestReplayDivergence(t *testing.T) {
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	if err := os.WriteFile(data, []byte("path a reads this file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := cGuest("branch.c", data)(t)
	dir := filepath.Join(tmp, "trace")
	rec := record(t, dir, []byte("a\n"), argv)
	started, _, _ := strings.Cut(string(rec.Stdout), "\n")
	pid, err := strconv.Atoi(strings.TrimPrefix(started, "started, pid "))
	if rec.Exit != 0 || err != nil || !strings.Contains(string(rec.Stdout), "\npath a: ") {
		t.Fatalf("hermit record: want exit 0, \"started, pid N\" and path a, got %s", describe(rec))
	}

	// The rewriting alone must not disturb the replay.
	same := filepath.Join(tmp, "unchanged")
	rewriteTrace(t, dir, same, func(uint64, *trace.Event) bool { return false })
	sameRun(t, "hermit replay of the trace rewritten unchanged", rec, replay(t, same))

	edited := filepath.Join(tmp, "edited")
	changed := rewriteTrace(t, dir, edited, func(_ uint64, ev *trace.Event) bool {
		if ev.Kind != trace.KindSyscall || !ev.External || ev.Sysno != 0 || len(ev.Mem) != 1 || string(ev.Mem[0].Data) != "a\n" {
			return false
		}
		ev.Mem[0].Data = []byte("b\n")
		return true
	})
	if len(changed) != 1 {
		t.Fatalf("found %d external read events returning \"a\\n\", want 1; %s", len(changed), describeEvents(t, dir))
	}

	r := replay(t, edited)
	if r.Exit != replayExit {
		t.Errorf("exit %d, want %d", r.Exit, replayExit)
	}
	m := divergedRE.FindStringSubmatch(string(r.Stderr))
	switch {
	case m == nil:
		t.Errorf("stderr is not the one line %q", divergedRE)
	case m[2] != strconv.Itoa(pid):
		t.Errorf("divergence names thread %s, want the guest's only thread %d", m[2], pid)
	case m[4] != "uname" || m[3] == "uname":
		t.Errorf("divergence: expected %s got %s, want expected <path a's call> got uname", m[3], m[4])
	}
	if m != nil {
		if n, _ := strconv.ParseUint(m[1], 10, 64); n <= changed[0] {
			t.Errorf("diverged at event %d, not after the edited read (event %d)", n, changed[0])
		}
	}
	if !strings.HasPrefix(string(r.Stdout), started+"\n") {
		t.Errorf("stdout does not start with the recorded %q, printed before the divergence", started)
	}
	for _, after := range []string{"path b", "done"} {
		if strings.Contains(string(r.Stdout), after) {
			t.Errorf("stdout holds %q, written after the divergence", after)
		}
	}
	if t.Failed() {
		t.Logf("hermit replay of the edited trace: %s", describe(r))
	}

	// The interactive replay says so too, where it would have said the
	// recording ends, and ends as --autopilot does.
	ir := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "replay", "--ex", "continue", edited)
	if m == nil || ir.Exit != replayExit || !strings.Contains(string(ir.Stdout), " the replay ends early: replay diverged at event "+m[1]+": ") ||
		!strings.Contains(string(ir.Stderr), "hermit: replay diverged at event "+m[1]+": ") {
		t.Errorf("hermit replay --ex continue of the edited trace: want the divergence said where it stops, and exit %d; %s", replayExit, describe(ir))
	}
	// And gdb shows it before the end it sees.
	t.Run("gdb", func(t *testing.T) {
		requireDebugging(t, "gdb")
		g := hermitClient(t,
			"replay", "--gdb", edited, "--", "-nx", "-batch", "-ex", "continue", "-ex", "continue")
		// Once by gdb (the stub's console output), once by hermit as
		// it ends.
		if m == nil || g.Exit != replayExit || strings.Count(string(g.Stdout)+string(g.Stderr), "hermit: replay diverged at event "+m[1]+": ") != 2 {
			t.Errorf("gdb on the edited trace: want the divergence shown by gdb and by hermit, and exit %d; %s", replayExit, describe(g))
		}
	})
}

// TestRecordReplayCrash records guests that die of SIGSEGV: recording and
// replay both exit 139 after the same output.
func TestRecordReplayCrash(t *testing.T) {
	for _, mode := range []string{"segv", "thread-segv"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "trace")
			rec := record(t, dir, nil, cGuest("die.c", mode)(t))
			if want := "dying by " + mode + "\n"; rec.Exit != 128+11 || string(rec.Stdout) != want {
				t.Fatalf("hermit record: want exit 139 and stdout %q, got %s", want, describe(rec))
			}
			sameRun(t, "hermit replay", rec, replay(t, dir))
		})
	}
}

// panicRE matches the marks of a Go panic or fatal error on stderr.
var panicRE = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[)`)

// damageRE matches a message saying that the trace is damaged.
var damageRE = regexp.MustCompile(`(?i)truncat|damage|corrupt`)

// TestReplayTruncated cuts the events file of a recording, as a crash of
// the recorder or a partial copy would, and checks that the replay prints a
// prefix of the recorded output, says the trace is truncated and exits 125.
func TestReplayTruncated(t *testing.T) {
	const lines = 50000 // more events than one block holds
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, cGuest("lines.c", strconv.Itoa(lines))(t))
	if rec.Exit != 0 || bytes.Count(rec.Stdout, []byte("\n")) != lines {
		t.Fatalf("hermit record: want exit 0 and %d lines, got exit %d, %d lines, stderr:\n%s",
			lines, rec.Exit, bytes.Count(rec.Stdout, []byte("\n")), rec.Stderr)
	}
	size := eventsSize(t, dir)
	cases := []struct {
		name      string
		cut       func(t *testing.T) int64
		wantLines bool // events before the cut print some lines
	}{
		{"events file cut in half", func(*testing.T) int64 { return size / 2 }, false},
		{"last block cut in half", func(t *testing.T) int64 {
			start := lastBlockStart(t, dir)
			return start + (size-start)/2
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cut := filepath.Join(t.TempDir(), "cut")
			copyTree(t, dir, cut)
			at := c.cut(t)
			cutEvents(t, cut, at)
			r, err := trace.Open(cut)
			if err != nil {
				t.Fatalf("open the cut trace: %v", err)
			}
			if r.Truncation() == nil {
				t.Fatalf("events file cut at %d of %d bytes: the trace package sees no damage", at, size)
			}
			r.Close()

			got := replay(t, cut)
			if got.Exit != replayExit {
				t.Errorf("exit %d, want %d", got.Exit, replayExit)
			}
			if !damageRE.Match(got.Stderr) {
				t.Errorf("stderr does not say the trace is truncated or damaged")
			}
			if panicRE.Match(got.Stderr) {
				t.Errorf("stderr shows a Go panic")
			}
			if !bytes.HasPrefix(rec.Stdout, got.Stdout) {
				t.Errorf("stdout is not a prefix of the recording's: %s", firstDiff(rec.Stdout, got.Stdout))
			}
			if c.wantLines && len(got.Stdout) == 0 {
				t.Errorf("stdout is empty: the events before the damage were not replayed")
			}
			if t.Failed() {
				t.Logf("hermit replay: exit %d, %d stdout lines, stderr:\n%s", got.Exit, bytes.Count(got.Stdout, []byte("\n")), got.Stderr)
			}
		})
	}
}

// TestReplayInheritedFds: a replay's guest inherits the descriptors the
// recording's did (stand-ins), however many the shell that starts the
// replay holds: the numbers its opens get are the recording's (a replay
// from a shell with more open descriptors diverged at the guest's first
// open).
func TestReplayInheritedFds(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	py := testenv.Require(t, "python3")
	hermit := testenv.Hermit(t)
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.RunWith(t, hermitOpts(t, nil), sh, "-c", `exec 7</dev/null; exec "$@"`, "sh",
		hermit, "record", "-o", dir, "--", py, "-c", "import os; print(os.pipe())")
	if rec.Exit != 0 || string(rec.Stdout) != "(3, 4)\n" {
		t.Fatalf("hermit record: want (3, 4); %s", describe(rec))
	}
	for _, fds := range []string{"exec 3</dev/null 4</dev/null 9</dev/null", "exec 7<&-"} {
		rep := testenv.RunWith(t, hermitOpts(t, nil), sh, "-c", fds+`; exec "$@"`, "sh", hermit, "replay", "--autopilot", dir)
		if rep.Exit != 0 || string(rep.Stdout) != string(rec.Stdout) {
			t.Errorf("replay after %q: want the recording's %q; %s", fds, rec.Stdout, describe(rep))
		}
	}
}

// TestInheritedFd3: the guest inherits descriptor 3 as it inherits the
// others (make hands its jobserver to a sub-make as 3 and 4, a
// socket-activated server gets its sockets from 3), and its reads from an
// inherited pipe or file are recorded. (The launcher's own pipe took 3: "sh: 3:
// Bad file descriptor", and a sub-make under hermit ran with -j1; and a
// pipe whose writer outside had written and gone looked internal, so its
// reads ran unrecorded and the replay read nothing.)
func TestInheritedFd3(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	hermit := testenv.Hermit(t)
	const guest = `read x <&3 && echo "$x"`
	// A pipe on 3, written to before the guest reads it.
	onFd3 := func(argv ...string) testenv.Result {
		return testenv.RunWith(t, hermitOpts(t, nil), sh, append([]string{"-c", `echo "from fd 3" | (exec 3<&0 </dev/null; exec "$@")`, "sh"}, argv...)...)
	}
	t.Run("run", func(t *testing.T) {
		if r := onFd3(hermit, "run", "--", sh, "-c", guest); r.Exit != 0 || string(r.Stdout) != "from fd 3\n" {
			t.Errorf("hermit run, fd 3 inherited: want its line; %s", describe(r))
		}
	})
	t.Run("record and replay", func(t *testing.T) {
		recordThrough(t, []string{`echo "from fd 3" | (exec 3<&0 </dev/null; exec "$@")`, "sh"}, guest, "from fd 3\n")
	})
	t.Run("a file, recorded and replayed", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "four")
		if err := os.WriteFile(file, []byte("from a file\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		recordThrough(t, []string{`exec 4<"$1"; shift; exec "$@"`, "sh", file}, `head -c 5 <&4; echo; cat <&4`, "from \na file\n")
	})
	t.Run("access modes, replayed", func(t *testing.T) {
		// A replay's stand-ins are opened as the recording's were:
		// F_GETFL says the same (they were all /dev/null read-write).
		python := testenv.Require(t, "python3")
		file := filepath.Join(t.TempDir(), "modes")
		setup := []string{`exec 5>>"$1" 4<"$1"; shift; echo | (exec 6<&0 </dev/null; exec "$@")`, "sh", file}
		guest := python + ` -c 'import fcntl; print(*(fcntl.fcntl(fd, fcntl.F_GETFL) for fd in (4, 5, 6)))'`
		native := testenv.RunWith(t, hermitOpts(t, nil), sh, append(append([]string{"-c"}, setup...), sh, "-c", guest)...)
		if native.Exit != 0 || len(strings.Fields(string(native.Stdout))) != 3 {
			t.Fatalf("natively: want three flags; %s", describe(native))
		}
		recordThrough(t, setup, guest, string(native.Stdout))
	})
	t.Run("make's jobserver", func(t *testing.T) {
		mk := testenv.Require(t, "make")
		top := t.TempDir()
		if err := os.Mkdir(filepath.Join(top, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range map[string]string{
			"Makefile":     "all:\n\t+$(HERMIT) $(MAKE) -C sub\n",
			"sub/Makefile": "all: a b\na b:\n\t@echo $@\n",
		} {
			if err := os.WriteFile(filepath.Join(top, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := testenv.RunWith(t, hermitOpts(t, nil), mk, "-s", "-j2", "-C", top, "HERMIT="+hermit+" run --")
		if r.Exit != 0 || strings.Contains(string(r.Stderr), "jobserver unavailable") {
			t.Errorf("make -j2 with a sub-make under hermit: want it to use the jobserver; %s", describe(r))
		}
	})
}

// recordThrough records `sh -c guest` under hermit started by `sh -c
// setup...` (which opens the descriptors the guest inherits and execs its
// arguments), and checks the recording prints want and its replay the
// same.
func recordThrough(t *testing.T, setup []string, guest, want string) {
	t.Helper()
	sh, hermit := testenv.Require(t, "sh"), testenv.Hermit(t)
	dir := filepath.Join(t.TempDir(), "trace")
	args := append(append([]string{"-c"}, setup...), hermit, "record", "-o", dir, "--", sh, "-c", guest)
	rec := testenv.RunWith(t, hermitOpts(t, nil), sh, args...)
	if rec.Exit != 0 || string(rec.Stdout) != want {
		t.Fatalf("hermit record: want %q; %s", want, describe(rec))
	}
	rep := testenv.RunWith(t, hermitOpts(t, nil), hermit, "replay", "--autopilot", dir)
	if rep.Exit != 0 || string(rep.Stdout) != string(rec.Stdout) {
		t.Errorf("replay: want the recording's %q; %s", rec.Stdout, describe(rep))
	}
}

// TestReplayMadeDirectory: a file the guest makes by a rename in a
// directory it made, and opens later from another process, is not in the
// replay's rebuilt root from the start (where the first process, whose
// chdir looks for it before it makes it, found it: git init diverged).
func TestReplayMadeDirectory(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	script := `cd "$1" && if cd made 2>/dev/null; then echo "made was there"; cd ..; fi && mkdir made && echo hi > made/f.tmp && mv made/f.tmp made/f && sh -c 'cat made/f'`
	rec := recordReplay(t, nil, []string{sh, "-c", script, "sh", t.TempDir()})
	if string(rec.Stdout) != "hi\n" {
		t.Errorf("hermit record: want hi; %s", describe(rec))
	}
}

// TestReplayToAnotherStdout: a recording made with stdout a pipe (as in
// CI, or under hermit chaos) replays with stdout a file, /dev/null or a
// pipe, though the guest sets stdout's flags from what F_GETFL said,
// which differ by what stdout is (Node at its start; the replay diverged
// at that fcntl(F_SETFL)).
func TestReplayToAnotherStdout(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	dir := filepath.Join(t.TempDir(), "trace")
	argv := cGuest("setfl_stdout.c")(t)
	rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), append([]string{"record", "-o", dir, "--"}, argv...)...)
	const want = "stdout made non-blocking and back\n"
	if rec.Exit != 0 || string(rec.Stdout) != want {
		t.Fatalf("hermit record: want %q; %s", want, describe(rec))
	}
	out := filepath.Join(t.TempDir(), "out")
	for _, to := range []string{`> "$2"`, "> /dev/null", "| cat"} {
		rep := testenv.RunWith(t, hermitOpts(t, nil), sh, "-c", `"$1" replay --autopilot "$3" `+to, "sh", testenv.Hermit(t), out, dir)
		got, _ := os.ReadFile(out)
		if to == `> "$2"` {
			rep.Stdout = got
		}
		if rep.Exit != 0 || to != "> /dev/null" && string(rep.Stdout) != want {
			t.Errorf("replay with stdout %s: want exit 0 and the recording's output; %s", to, describe(rep))
		}
	}
}
