package ptrace

import (
	"errors"
	"os"
	"strings"
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
