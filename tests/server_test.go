package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/internal/procrun"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestReplayServerAcceptsFromOutside: a guest that accepts a connection
// from a client outside the container replays without the client.
func TestReplayServerAcceptsFromOutside(t *testing.T) {
	hermit := testenv.Hermit(t)
	py := testenv.Require(t, "python3")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(hermit, "record", "-o", dir, "--", py, filepath.Join(testenv.GuestsDir(t), "accept_once.py"), fmt.Sprint(port))
	done := make(chan procrun.Result, 1)
	go func() {
		res, err := procrun.Run(cmd, time.Minute)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	var reply []byte
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			if time.Since(start) > 30*time.Second {
				t.Fatalf("the recorded server never listened: %v", err)
			}
			continue
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		c.Write([]byte("ping"))
		buf := make([]byte, 100)
		n, _ := c.Read(buf)
		reply = buf[:n]
		c.Close()
		break
	}
	rec := <-done
	if rec.Exit != 0 || string(reply) != "pong ping" || !bytes.Contains(rec.Stdout, []byte("got b'ping' 127.0.0.1")) {
		t.Fatalf("record: exit %d, the client got %q, stdout\n%s\nstderr\n%s", rec.Exit, reply, rec.Stdout, rec.Stderr)
	}
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rep.Exit != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
		t.Fatalf("replay without the client: exit %d, stdout\n%s\nstderr\n%s\nwant\n%s", rep.Exit, rep.Stdout, rep.Stderr, rec.Stdout)
	}
}

// TestReplayLoopbackHTTP: a Go HTTP server and client in one guest,
// talking over loopback sockets, replay.
func TestReplayLoopbackHTTP(t *testing.T) {
	hermit := testenv.Hermit(t)
	bin := testenv.BuildGo(t, "httploop")
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.Run(t, time.Minute, hermit, "record", "-o", dir, "--", bin)
	want := "hello /x0\nhello /x1\nhello /x2\n"
	if rec.Exit != 0 || string(rec.Stdout) != want {
		t.Fatalf("record: exit %d, stdout %q\n%s", rec.Exit, rec.Stdout, rec.Stderr)
	}
	for i := 0; i < 2; i++ {
		rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
		if rep.Exit != 0 || string(rep.Stdout) != want {
			t.Fatalf("replay %d: exit %d, stdout %q\n%s", i, rep.Exit, rep.Stdout, rep.Stderr)
		}
	}
}

// TestReplayUnixClientOfHostServer: a guest talking to a server outside
// the container over a Unix socket (as to a host daemon) replays without
// the server; a socketpair between two guest processes still works in
// replay.
func TestReplayUnixClientOfHostServer(t *testing.T) {
	hermit := testenv.Hermit(t)
	py := testenv.Require(t, "python3")
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 100)
		n, _ := c.Read(buf)
		c.Write(append([]byte("echo "), buf[:n]...))
		c.Close()
	}()
	dir := filepath.Join(t.TempDir(), "trace")
	// --tmp=host: the socket lies under the host's /tmp, which a private
	// /tmp (an overlay) would hide.
	rec := testenv.Run(t, time.Minute, hermit, "record", "--tmp=host", "-o", dir, "--", py, filepath.Join(testenv.GuestsDir(t), "unix_client.py"), sock)
	if rec.Exit != 0 || string(rec.Stdout) != "got b'echo hello'\n" {
		t.Fatalf("record: exit %d, stdout %q\n%s", rec.Exit, rec.Stdout, rec.Stderr)
	}
	ln.Close()
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rep.Exit != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
		t.Fatalf("replay without the server: exit %d, stdout %q\n%s", rep.Exit, rep.Stdout, rep.Stderr)
	}

	pair := `import socket, os
a, b = socket.socketpair()
if os.fork() == 0:
    a.sendall(b"from the child"); os._exit(0)
print(b.recv(100)); os.wait()
`
	rec = testenv.Run(t, time.Minute, hermit, "record", "-o", dir+"2", "--", py, "-c", pair)
	if rec.Exit != 0 || string(rec.Stdout) != "b'from the child'\n" {
		t.Fatalf("record of a socketpair: exit %d, stdout %q\n%s", rec.Exit, rec.Stdout, rec.Stderr)
	}
	rep = testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir+"2")
	if rep.Exit != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
		t.Fatalf("replay of a socketpair: exit %d, stdout %q\n%s", rep.Exit, rep.Stdout, rep.Stderr)
	}
}

// TestReplayOfKilledRecording: a recording whose guest was killed from
// outside (hermit record got SIGTERM, as from a CI timeout) replays up to
// where it was killed, and ends the same way, status 137.
func TestReplayOfKilledRecording(t *testing.T) {
	hermit := testenv.Hermit(t)
	dir := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(hermit, "record", "-o", dir, "--", "sh", "-c", `echo started; read x; echo "after [$x]"`)
	stdin, err := cmd.StdinPipe() // kept open: the guest waits for a line forever
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 8)
	if _, err := io.ReadFull(stdout, line); err != nil || string(line) != "started\n" {
		cmd.Process.Kill()
		t.Fatalf("recorded guest printed %q, %v", line, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(stdout)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 137 || len(rest) != 0 {
		t.Fatalf("hermit record after SIGTERM: %v, more output %q; want status 137", err, rest)
	}
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rep.Exit != 137 || string(rep.Stdout) != "started\n" {
		t.Fatalf("replay: exit %d, stdout %q\n%s; want the recorded output and status 137", rep.Exit, rep.Stdout, rep.Stderr)
	}
}
