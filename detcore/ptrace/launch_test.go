package ptrace

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadLaunchSlow: a launcher that reports after launchNote gets a note
// and is still waited for; one that says nothing until launchLimit is
// given up on.
func TestReadLaunchSlow(t *testing.T) {
	defer func(n, l time.Duration) { launchNote, launchLimit = n, l }(launchNote, launchLimit)
	launchNote, launchLimit = 20*time.Millisecond, 2*time.Second

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.Write([]byte{0, 0, 0})
		time.Sleep(100 * time.Millisecond)
		w.Write([]byte{0, 0, 0, 0, 7})
		w.Close()
	}()
	var notes []string
	b, n, err := readLaunch(r, func(s string) { notes = append(notes, s) })
	if err != nil || n != 8 || b[7] != 7 {
		t.Errorf("a slow report: %v, %d bytes %v; want all 8", err, n, b)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "has not started after 20ms") {
		t.Errorf("notes %q, want one saying it waits", notes)
	}

	launchLimit = 50 * time.Millisecond
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	if _, n, err := readLaunch(r2, nil); !errors.Is(err, os.ErrDeadlineExceeded) || n != 0 {
		t.Errorf("a silent launcher: %v after %d bytes; want the deadline", err, n)
	}
}

// TestLaunchedUnreported: when the launcher's report does not come whole,
// the launch goes on once the launcher's child has stopped itself (it
// waited for the launcher's exit, for ever: the launcher lives as long
// as its child), and fails once the launcher has exited. A shell stands
// for the launcher, and its child shell stops itself.
func TestLaunchedUnreported(t *testing.T) {
	defer func(l time.Duration) { launchLimit = l }(launchLimit)
	launchLimit = 10 * time.Second

	launcher := exec.Command("/bin/sh", "-c", `/bin/sh -c 'kill -STOP $$' & wait`)
	if err := launcher.Start(); err != nil {
		t.Fatal(err)
	}
	defer launcher.Process.Kill()
	tr := &Tracer{initPid: launcher.Process.Pid}
	child, err := tr.launchedUnreported("guest", io.EOF)
	if err != nil {
		t.Fatalf("with the launcher's child stopped: %v", err)
	}
	if st := procState(child); st != 'T' && st != 't' {
		t.Errorf("launchedUnreported returned %d, in state %q, not the stopped child", child, st)
	}
	syscall.Kill(child, syscall.SIGKILL)

	exited := exec.Command("/bin/sh", "-c", "exit 3")
	if err := exited.Start(); err != nil {
		t.Fatal(err)
	}
	tr = &Tracer{initPid: exited.Process.Pid}
	if _, err := tr.launchedUnreported("guest", io.EOF); err == nil || !strings.Contains(err.Error(), "the launcher exited before the program started") {
		t.Errorf("with the launcher gone: %v, want that it exited", err)
	}
}
