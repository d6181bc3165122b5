package tests

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/internal/procrun"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// The bounds that keep a hung replay or debugger from stalling the suite.
const (
	// listenTimeout bounds the wait for `hermit replay --gdb-port 0` to say
	// where it listens.
	listenTimeout = time.Minute
	// clientTimeout bounds one whole gdb or lldb batch session.
	clientTimeout = 3 * time.Minute
	// exitTimeout bounds the wait for the replay to exit once the debugger
	// is gone.
	exitTimeout = 30 * time.Second
	// stubLifetime is the hard limit on a debug server's life: after it
	// the whole process group is killed whatever the test is doing.
	stubLifetime = 6 * time.Minute
)

// listeningRE finds the address in the line hermit prints once it listens.
var listeningRE = regexp.MustCompile(`listening for a debugger on (\S+:\d+)`)

// lockedBuffer is a bytes.Buffer that a process writes while a test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

// stub is a debug server (hermit replay --gdb-port 0) running in the
// background, in its own process group.
type stub struct {
	cmd            *exec.Cmd
	addr           string
	stdout, stderr lockedBuffer
	done           chan struct{} // closed once the process has been reaped
	exit           int           // shell-style status; valid once done is closed
}

// startStub starts argv in its own process group and waits (at most
// listenTimeout) until findAddr finds the address to connect to in its
// stderr. The process is killed when stubLifetime runs out and when the test
// ends, so that neither a failing test nor a hang leaves it behind.
func startStub(t *testing.T, env []string, findAddr func(stderr []byte) string, argv ...string) *stub {
	t.Helper()
	s := &stub{cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{})}
	// A stub still running when its test failed is sent SIGABRT first:
	// its goroutines' stacks go to its stderr, which the test logs.
	s.cmd.Env = append(append(os.Environ(), "GOTRACEBACK=all"), env...)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.cmd.WaitDelay = 5 * time.Second
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", strings.Join(argv, " "), err)
	}
	go func() {
		s.cmd.Wait()
		s.exit = -1
		if ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			s.exit = ws.ExitStatus()
			if ws.Signaled() {
				s.exit = 128 + int(ws.Signal())
			}
		}
		close(s.done)
	}()
	hard := time.AfterFunc(stubLifetime, s.kill)
	t.Cleanup(func() {
		hard.Stop()
		if t.Failed() {
			s.dumpStacks()
		}
		s.kill()
		<-s.done
		if t.Failed() {
			t.Logf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(argv, " "), s.exit, s.stdout.Bytes(), s.stderr.Bytes())
		}
	})

	deadline := time.Now().Add(listenTimeout)
	for {
		if s.addr = findAddr(s.stderr.Bytes()); s.addr != "" {
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("%s exited %d before listening:\n%s%s", strings.Join(argv, " "), s.exit, s.stdout.Bytes(), s.stderr.Bytes())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			t.Fatalf("%s: no address to connect to after %v; stderr:\n%s", strings.Join(argv, " "), listenTimeout, s.stderr.Bytes())
		}
	}
}

// startReplay starts `hermit replay --gdb-port 0 FLAGS DIR` and waits until
// it listens.
func startReplay(t *testing.T, dir string, flags ...string) *stub {
	t.Helper()
	argv := append(append([]string{testenv.Hermit(t), "replay", "--gdb-port", "0"}, flags...), dir)
	return startStub(t, []string{"HERMIT_TRACE_DIR=" + t.TempDir()}, func(stderr []byte) string {
		if m := listeningRE.FindSubmatch(stderr); m != nil {
			return string(m[1])
		}
		return ""
	}, argv...)
}

// announced waits (at most 10 s) for a line of what hermit prints as it
// listens, which may follow the listening line startReplay waited for,
// and returns re's match, failing t without one.
func (s *stub) announced(t *testing.T, re *regexp.Regexp, what string) []string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !re.Match(s.stderr.Bytes()) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return mustMatch(t, re, string(s.stderr.Bytes()), what)
}

// dumpStacks has a stub that still runs print its goroutines' stacks
// (Go's answer to SIGABRT, which hermit leaves alone) and waits a little
// for them, after a line for each thread of its process group (state,
// kernel wait, CPU time): a hung replay says where it hangs, and whether
// it spins or waits.
func (s *stub) dumpStacks() {
	select {
	case <-s.done:
		return
	default:
	}
	if out, err := exec.Command("ps", "-eL", "-o", "ppid=,pid=,tid=,stat=,wchan:32=,time=,comm=").Output(); err == nil {
		fmt.Fprintf(&s.stderr, "the stub's threads and its descendants' (ppid pid tid state wchan time comm):\n%s", descendants(string(out), s.cmd.Process.Pid))
	}
	syscall.Kill(s.cmd.Process.Pid, syscall.SIGABRT)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
	}
}

// descendants keeps the lines of ps's output (ppid, pid first) of pid
// and the processes it started, theirs, and so on.
func descendants(ps string, pid int) string {
	ours := map[string]bool{strconv.Itoa(pid): true}
	lines := strings.Split(ps, "\n")
	for grew := true; grew; {
		grew = false
		for _, line := range lines {
			if f := strings.Fields(line); len(f) > 1 && ours[f[0]] && !ours[f[1]] {
				ours[f[1]], grew = true, true
			}
		}
	}
	var b strings.Builder
	for _, line := range lines {
		if f := strings.Fields(line); len(f) > 1 && ours[f[1]] {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// kill kills the stub's process group (if it still runs).
func (s *stub) kill() {
	select {
	case <-s.done:
	default:
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// wait waits (at most exitTimeout) for the stub to exit and returns its
// status and output; a stub still running then is killed and fails t.
func (s *stub) wait(t *testing.T) testenv.Result {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(exitTimeout):
		s.kill()
		<-s.done
		t.Fatalf("%s still running %v after the debugger ended; stderr:\n%s", strings.Join(s.cmd.Args, " "), exitTimeout, s.stderr.Bytes())
	}
	return testenv.Result{Stdout: s.stdout.Bytes(), Stderr: s.stderr.Bytes(), Exit: s.exit}
}

// halfPacketAndGo is a debugger that connects to addr, sends half a
// packet and goes away.
func halfPacketAndGo(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("+$qSupported:multiprocess+;swbr")); err != nil {
		t.Fatal(err)
	}
	conn.Close()
}

// step is one debugger command and what the debugger printed for it.
type step struct {
	cmd, out string
}

// transcript is what a debugger session printed, stdout and stderr
// interleaved as the user sees them, cut into one step per command.
type transcript struct {
	text  string
	steps []step // steps[0] is what came before the first command
}

// split cuts text at the lines that start with prompt followed by a
// command: the marker lines gdb echoes and lldb's own command echo.
func split(text, prompt string) transcript {
	tr := transcript{text: text, steps: []step{{}}}
	for _, line := range strings.SplitAfter(text, "\n") {
		if cmd, ok := strings.CutPrefix(line, prompt); ok {
			tr.steps = append(tr.steps, step{cmd: strings.TrimSuffix(cmd, "\n")})
			continue
		}
		tr.steps[len(tr.steps)-1].out += line
	}
	return tr
}

// out returns the output of the nth (from 0) run of cmd, failing t if the
// session did not get that far.
func (tr transcript) out(t *testing.T, cmd string, nth int) string {
	t.Helper()
	for _, s := range tr.steps[1:] {
		if s.cmd == cmd {
			if nth == 0 {
				return s.out
			}
			nth--
		}
	}
	t.Fatalf("the transcript has no %q (run %d):\n%s", cmd, nth, tr.text)
	return ""
}

// gdbPrompt begins the marker line echoed before each gdb command (gdb's
// batch mode prints no prompt and does not echo commands).
const gdbPrompt = "(gdb) "

// runGDB runs `gdb -nx -batch` with the commands in dir (where no binary
// lies, so gdb has only what the target gives it) and returns the
// transcript. Each -ex command runs even if one before it failed.
func runGDB(t *testing.T, dir string, cmds ...string) transcript {
	t.Helper()
	gdb := testenv.Require(t, "gdb")
	args := []string{"-nx", "-batch",
		// No network look-ups for debug info.
		"-iex", "set debuginfod enabled off",
		// A replay may take a while to answer a packet (a goto replays
		// from the start); the default is 2s, and rr's gdb command line
		// sets a longer one too.
		"-iex", "set remotetimeout 60",
	}
	for _, c := range cmds {
		args = append(args, "-ex", "echo "+gdbPrompt+c+`\n`, "-ex", c)
	}
	return split(runClient(t, dir, gdb, args...), gdbPrompt)
}

// lldbPrompt begins the line lldb's batch mode echoes for each command.
const lldbPrompt = "(lldb) "

// runLLDB runs `lldb --batch` with the commands, on exe if it is not "",
// and returns the transcript.
func runLLDB(t *testing.T, dir, exe string, cmds ...string) transcript {
	t.Helper()
	lldb := testenv.Require(t, "lldb")
	args := []string{"--no-lldbinit", "--batch"}
	if exe != "" {
		args = append(args, exe)
	}
	for _, c := range cmds {
		args = append(args, "-o", c)
	}
	return split(runClient(t, dir, lldb, args...), lldbPrompt)
}

// runClient runs a debugger in dir under clientTimeout, stdin /dev/null and
// stdout and stderr in one pipe, and returns what it printed.
func runClient(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS=", "TERM=dumb")
	cmd.Stdout, cmd.Stderr = &out, &out
	_, err := procrun.Run(cmd, clientTimeout)
	if err != nil {
		t.Fatalf("%s %s: %v; output so far:\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// clientErrorRE finds the lines of a transcript that report a failure:
// gdb's and lldb's errors and warnings and remote protocol complaints.
var clientErrorRE = regexp.MustCompile(`(?mi)^.*\b(error|warning|cannot|can't|couldn't|could not|unable|not supported|unsupported|unknown|failed|invalid|timed out|protocol|bogus|malformed|truncated|Remote connection closed|Ignoring packet)\b.*$`)

// gdbRemoteFiles is the warning gdb gives whenever it reads the program's
// files from the target, as it does from gdbserver: what these tests want.
var gdbRemoteFiles = regexp.MustCompile(`^warning: File transfers from remote targets can be slow\. Use "set sysroot" to access files locally instead\.$`)

// noClientErrors fails t for every line of tr reporting an error or a
// warning, except gdb's warning about reading files from the target and
// those matching allow (nil: none).
func noClientErrors(t *testing.T, tr transcript, allow *regexp.Regexp) {
	t.Helper()
	var bad []string
	for _, l := range clientErrorRE.FindAllString(tr.text, -1) {
		if !gdbRemoteFiles.MatchString(l) && (allow == nil || !allow.MatchString(l)) {
			bad = append(bad, l)
		}
	}
	if len(bad) > 0 {
		t.Errorf("the debugger reported errors:\n  %s\ntranscript:\n%s", strings.Join(bad, "\n  "), tr.text)
	}
}

// lldbNoise matches the lines a Debian lldb 14 prints on every start
// because its Python module is not where it looks (its script interpreter
// is then off; the CLI works).
var lldbNoise = regexp.MustCompile(`^(Traceback \(most recent call last\):|  File "<string>", line 1, in <module>|ModuleNotFoundError: No module named 'lldb.embedded_interpreter')$`)

// guestRun is what gdb_threads printed: the facts a debugger must agree with.
type guestRun struct {
	pid, mainTid int
	global       string      // the address of global, as printed by %p
	workerTid    map[int]int // worker id -> tid
	final        string      // global's final value
}

var (
	guestMainRE   = regexp.MustCompile(`(?m)^main pid (\d+) tid (\d+) &global (0x[0-9a-f]+)$`)
	guestWorkerRE = regexp.MustCompile(`(?m)^worker (\d+) tid (\d+)$`)
	guestFinalRE  = regexp.MustCompile(`(?m)^global = (\d+)$`)
)

// parseGuest parses gdb_threads' stdout.
func parseGuest(t *testing.T, stdout []byte) guestRun {
	t.Helper()
	m := guestMainRE.FindSubmatch(stdout)
	f := guestFinalRE.FindSubmatch(stdout)
	ws := guestWorkerRE.FindAllSubmatch(stdout, -1)
	if m == nil || f == nil || len(ws) != 3 {
		t.Fatalf("gdb_threads printed an unexpected output:\n%s", stdout)
	}
	g := guestRun{pid: atoi(t, m[1]), mainTid: atoi(t, m[2]), global: string(m[3]), final: string(f[1]), workerTid: map[int]int{}}
	for _, w := range ws {
		g.workerTid[atoi(t, w[1])] = atoi(t, w[2])
	}
	return g
}

// tids returns the guest's thread ids, sorted.
func (g guestRun) tids() string {
	ids := []int{g.mainTid, g.workerTid[0], g.workerTid[1], g.workerTid[2]}
	return sortedInts(ids)
}

func sortedInts(ids []int) string {
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			if ids[j] < ids[i] {
				ids[i], ids[j] = ids[j], ids[i]
			}
		}
	}
	return fmt.Sprint(ids)
}

func atoi(t *testing.T, b []byte) int {
	t.Helper()
	n, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// mustMatch returns re's submatches in s, failing t (naming what) if there
// are none.
func mustMatch(t *testing.T, re *regexp.Regexp, s, what string) []string {
	t.Helper()
	m := re.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%s: no match for %s in:\n%s", what, re, s)
	}
	return m
}

// hermitClient runs hermit with args that start a debugger (hermit
// replay --gdb, or gdb under hermit run), with a client's timeout and
// no debuginfod lookups.
func hermitClient(t *testing.T, args ...string) testenv.Result {
	t.Helper()
	return testenv.RunWith(t, testenv.Opts{Timeout: clientTimeout, Env: []string{"DEBUGINFOD_URLS="}}, testenv.Hermit(t), args...)
}

// servedThreads records the multi-threaded guest, and serves a replay of
// it with hermit's replay flags: the trace, the recording's result, what
// the guest printed, and the stub.
func servedThreads(t *testing.T, flags ...string) (string, testenv.Result, guestRun, *stub) {
	t.Helper()
	dir, rec := recordThreads(t)
	g := parseGuest(t, rec.Stdout)
	return dir, rec, g, startReplay(t, dir, flags...)
}
