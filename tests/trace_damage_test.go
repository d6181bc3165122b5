package tests

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
	"github.com/hermitdbg/hermit/trace"
)

// traceInfo runs `hermit trace info DIR`.
func traceInfo(t *testing.T, dir string) testenv.Result {
	t.Helper()
	return testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "trace", "info", dir)
}

// TestReplayWithoutIndex checks that the index is only an accelerator: a
// recording whose index is missing or damaged, but whose events file is
// intact, replays byte for byte as recorded, and trace info and dump read
// it whole with at most one warning line.
func TestReplayWithoutIndex(t *testing.T) {
	const lines = 50000 // more events than one block holds
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, cGuest("lines.c", strconv.Itoa(lines))(t))
	if rec.Exit != 0 || bytes.Count(rec.Stdout, []byte("\n")) != lines {
		t.Fatalf("hermit record: want exit 0 and %d lines, got %s", lines, describe(rec))
	}
	orig, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	events := orig.Count()
	orig.Close()
	index, err := os.ReadFile(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		index []byte // nil: removed
	}{
		{"no index", nil},
		{"flipped index byte", func() []byte {
			b := bytes.Clone(index)
			b[len(b)/2] ^= 0x40
			return b
		}()},
		{"index cut in half", index[:len(index)/2]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cp := filepath.Join(t.TempDir(), "copy")
			copyTree(t, dir, cp)
			p := filepath.Join(cp, "index")
			if c.index == nil {
				os.Remove(p)
			} else if err := os.WriteFile(p, c.index, 0o600); err != nil {
				t.Fatal(err)
			}
			got := replay(t, cp)
			sameRun(t, "hermit replay --autopilot", rec, guestResult(got))
			if n := bytes.Count(got.Stderr, []byte("hermit: ")); n > 1 {
				t.Errorf("replay printed %d lines of its own, want at most one warning:\n%s", n, got.Stderr)
			}

			info := traceInfo(t, cp)
			if info.Exit != 0 || !bytes.Contains(info.Stdout, []byte("complete, all blocks and blobs intact")) ||
				!bytes.Contains(info.Stdout, []byte(strconv.FormatUint(events, 10)+" in ")) {
				t.Errorf("hermit trace info: want exit 0, %d events, complete; got %s", events, describe(info))
			}
			if n := bytes.Count(info.Stderr, []byte("\n")); n > 1 || n == 1 && !bytes.Contains(info.Stderr, []byte("index")) {
				t.Errorf("hermit trace info: stderr is not at most one warning about the index:\n%s", info.Stderr)
			}
			dump := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "trace", "dump", cp)
			if n := uint64(bytes.Count(dump.Stdout, []byte("\n"))); dump.Exit != 0 || n != events {
				t.Errorf("hermit trace dump: exit %d, %d lines; want 0, %d\n%s", dump.Exit, n, events, dump.Stderr)
			}
		})
	}
}

// guestResult drops hermit's own warning lines from a replay's stderr.
func guestResult(r testenv.Result) testenv.Result {
	r.Stderr = guestStderr(r.Stderr)
	return r
}

// TestReplayFirstBlockCut cuts the events file inside its first block, so
// that no event, not even the program's file, is readable: the replay must
// say that the events file is damaged and how, not guess that the trace
// never held the program, and exit 125; trace info must say the same.
func TestReplayFirstBlockCut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, cGuest("lines.c", "3")(t))
	if rec.Exit != 0 {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	at := eventsSize(t, dir) / 2 // a short recording: one block
	for _, withIndex := range []bool{true, false} {
		name := "with index"
		if !withIndex {
			name = "without index"
		}
		t.Run(name, func(t *testing.T) {
			cut := filepath.Join(t.TempDir(), "cut")
			copyTree(t, dir, cut)
			cutEvents(t, cut, at)
			if !withIndex {
				os.Remove(filepath.Join(cut, "index"))
			}
			if r, err := trace.Open(cut); err != nil || r.Count() != 0 {
				t.Fatalf("the events file cut at byte %d is not cut inside its first block: %v", at, err)
			} else {
				r.Close()
			}

			got := replay(t, cut)
			msg := string(got.Stderr)
			if got.Exit != replayExit {
				t.Errorf("exit %d, want %d", got.Exit, replayExit)
			}
			if strings.Count(msg, "\n") != 1 || !damageRE.MatchString(msg) || !strings.Contains(msg, "events file") ||
				!strings.Contains(msg, "byte "+strconv.FormatInt(at, 10)) || strings.Contains(msg, "does not hold the program") {
				t.Errorf("stderr is not one line naming the events file and its cut at byte %d:\n%s", at, msg)
			}
			if panicRE.Match(got.Stderr) || len(got.Stdout) != 0 {
				t.Errorf("replay shows a panic or guest output: %s", describe(got))
			}

			info := traceInfo(t, cut)
			want := "hermit trace info: " + filepath.Join(cut, "events") + ": truncated at event 0 (block 0)\n"
			if info.Exit != 1 || string(info.Stderr) != want {
				t.Errorf("hermit trace info: exit %d, stderr %q; want 1, %q", info.Exit, info.Stderr, want)
			}
			if !bytes.Contains(info.Stdout, []byte("the events file is cut at byte "+strconv.FormatInt(at, 10)+", inside block 0")) {
				t.Errorf("hermit trace info: status does not say where the events file is cut:\n%s", info.Stdout)
			}
		})
	}
}
