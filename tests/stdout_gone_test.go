package tests

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestReplayStdoutReaderGone: `hermit record -- PROG | head`. The reader
// of hermit's stdout goes away while the program writes: its write fails
// with EPIPE or writes a part, and the kernel sends it SIGPIPE, which
// kills it or runs its handler. Replay, whose stdout takes everything,
// ends as the recording did: the same status, the same stderr (a
// handler's siginfo, Python's BrokenPipeError), and the output the
// recording's writes wrote. Replay made every write whole, and diverged
// (yes and cat went on writing where they had been killed) or, sending
// the SIGPIPE itself, gave the handler SI_TKILL from pid 0.
func TestReplayStdoutReaderGone(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		argv argvFunc
		// wantStderr, if set, is the recording's stderr.
		wantStderr string
	}{
		{"yes", tool("yes"), ""},
		{"cat of a large file", func(t *testing.T) []string {
			return []string{testenv.Require(t, "cat"), largeFile(t)}
		}, ""},
		{"SIGPIPE handler", cGuest("sigpipe_info.c"), "write: Broken pipe; SIGPIPE si_code 0, from itself, uid its own\n"},
		{"python3 print loop", tool("python3", "-c", "for i in range(10**6): print(i)"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			dir := filepath.Join(t.TempDir(), "trace")
			rec := recordIntoHead(t, dir, argv)
			if c.wantStderr != "" && string(rec.Stderr) != c.wantStderr {
				t.Fatalf("hermit record: stderr %q, want %q", rec.Stderr, c.wantStderr)
			}
			if rec.Exit == 0 && c.wantStderr == "" {
				t.Fatalf("hermit record: the program did not see its reader go: %s", describe(rec))
			}
			rep := replay(t, dir)
			raw := rep.Stderr
			rep.Stderr = guestStderr(rep.Stderr)
			if rep.Exit != rec.Exit || !bytes.Equal(rep.Stderr, rec.Stderr) {
				t.Errorf("replay: exit %d, stderr %q; the recording: exit %d, stderr %q\nreplay's stderr, hermit's lines included:\n%s",
					rep.Exit, rep.Stderr, rec.Exit, rec.Stderr, raw)
			}
			if !bytes.HasPrefix(rep.Stdout, rec.Stdout) || len(rep.Stdout) > 1<<20 {
				t.Errorf("replay wrote %d bytes, not starting with the %d bytes the reader took from the recording (%q)",
					len(rep.Stdout), len(rec.Stdout), truncated(rep.Stdout, 40))
			}
		})
	}
}

// recordIntoHead records argv with hermit's stdout a pipe whose reader
// takes 10 bytes and closes it. Stdout holds those bytes; stderr, the
// guest's lines only.
func recordIntoHead(t *testing.T, dir string, argv []string) testenv.Result {
	t.Helper()
	res, _ := intoHead(t, append([]string{"record", "-o", dir, "--"}, argv...))
	if !strings.Contains(string(res.Stderr), savedLine+dir) {
		t.Fatalf("hermit record: no trace saved\n%s", describe(res))
	}
	res.Stderr = guestStderr(res.Stderr)
	return res
}

// intoHead runs hermit with args, its stdout a pipe whose reader takes 10
// bytes and closes it, and returns what it did, and the signal that
// killed it, if one did.
func intoHead(t *testing.T, args []string) (testenv.Result, syscall.Signal) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Hermit(t), args...)
	cmd.Env = append(cmd.Environ(), "HERMIT_TRACE_DIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 10)
	n, _ := io.ReadFull(out, head)
	out.Close()
	err = cmd.Wait()
	res := testenv.Result{Stdout: head[:n], Stderr: stderr.Bytes()}
	var sig syscall.Signal
	if ee, ok := err.(*exec.ExitError); ok {
		res.Exit = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			sig = ws.Signal()
		}
	} else if err != nil {
		t.Fatalf("hermit %s: %v", strings.Join(args, " "), err)
	}
	return res, sig
}

// TestReplayIntoHead: `hermit replay --autopilot TRACE | head`. When the
// reader of replay's stdout goes, hermit dies of SIGPIPE, as a program
// writing to a pipe does, and says nothing. The program it replays never
// writes to that pipe, so it does not see it go: replay gave it hermit's
// stdout, its write failed there and not in the recording, and hermit
// said the replay had diverged.
func TestReplayIntoHead(t *testing.T) {
	t.Parallel()
	argv := tool("seq", "1", "200000")(t)
	dir := filepath.Join(t.TempDir(), "trace")
	if rec := record(t, dir, nil, argv); rec.Exit != 0 {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	rep, sig := intoHead(t, []string{"replay", "--autopilot", dir})
	if sig != syscall.SIGPIPE || len(rep.Stderr) != 0 || string(rep.Stdout) != "1\n2\n3\n4\n5\n" {
		t.Errorf("hermit replay | head: signal %v (want SIGPIPE), %s", sig, describe(rep))
	}
}

// largeFile returns a 16 MiB file of numbered lines.
func largeFile(t *testing.T) string {
	var b bytes.Buffer
	for i := 0; b.Len() < 16<<20; i++ {
		b.WriteString(strings.Repeat("line ", 10))
		b.WriteString(string(rune('0' + i%10)))
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "large")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
