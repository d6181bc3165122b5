package tests

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	replaypkg "github.com/hermitdbg/hermit/replay"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestSessionOverRecording drives a replay Session over a recording of the
// racy multi-threaded guest: event stops, registers, a global, steps, a
// breakpoint on the worker function, a watchpoint on the shared counter
// and restarts, each run ending with the recorded output and status.
func TestSessionOverRecording(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root (ptrace, pid and mount namespaces)")
	}
	testenv.RequireDebugRegs(t)
	hermit := testenv.Hermit(t)
	bin := testenv.BuildC(t, "racy_counter.c", "-O0", "-no-pie")
	worker, counter := symbol(t, bin, "worker"), symbol(t, bin, "counter")
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.Run(t, time.Minute, hermit, "record", "-o", dir, "--", bin)
	if rec.Exit != 0 || len(rec.Stdout) == 0 {
		t.Fatalf("record: exit %d\n%s%s", rec.Exit, rec.Stdout, rec.Stderr)
	}

	r, err := replaypkg.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var s *replaypkg.Session
	// O_APPEND: every run writes from the start of the truncated file.
	out, err := os.OpenFile(filepath.Join(t.TempDir(), "out"), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	restart := func() {
		t.Helper()
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
		if err := out.Truncate(0); err != nil {
			t.Fatal(err)
		}
	}
	defer out.Close()
	// Each run's output, checked and cleared when the run ends.
	checkRun := func(what string, st replaypkg.Stop, err error) {
		t.Helper()
		if err != nil || st.Reason != replaypkg.ReasonExited {
			t.Fatalf("%s: %v, %v; want the end of the run", what, st, err)
		}
		got, _ := os.ReadFile(out.Name())
		if !bytes.Equal(got, rec.Stdout) || st.Result.ExitCode != rec.Exit {
			t.Fatalf("%s: exit %d, output\n%s\nwant exit %d, output\n%s", what, st.Result.ExitCode, got, rec.Exit, rec.Stdout)
		}
		if err := out.Truncate(0); err != nil {
			t.Fatal(err)
		}
	}
	s, err = replaypkg.NewSession(r.Starter(replaypkg.Options{Stdout: out, Stderr: out, CPU: -1}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// Stop at an event in the middle: registers and the counter.
	mid := r.Events / 2
	st, err := s.RunToEvent(mid)
	if err != nil || st.Reason != replaypkg.ReasonEvent || s.Event() < mid {
		t.Fatalf("RunToEvent(%d): %v, %v, at event %d", mid, st, err, s.Event())
	}
	tid := s.Current()
	regs, err := s.Regs(tid)
	if err != nil || regs.Rip == 0 || regs.Rsp == 0 {
		t.Fatalf("Regs(%d) = rip %#x rsp %#x, %v", tid, regs.Rip, regs.Rsp, err)
	}
	c1 := readCounter(t, s, tid, counter)

	// Fifty single-steps of one thread.
	st, err = s.Step(tid, 50)
	if err != nil || st.Reason != replaypkg.ReasonStep || st.Steps != 50 {
		t.Fatalf("Step(%d, 50): %v, %v", tid, st, err)
	}
	if r2, _ := s.Regs(tid); r2.Rip == regs.Rip && r2.Rsp == regs.Rsp {
		t.Errorf("50 steps left rip at %#x", r2.Rip)
	}

	// A breakpoint on the worker function, then a watchpoint on the counter.
	restart()
	if err := s.SetBreakpoint(worker); err != nil {
		t.Fatal(err)
	}
	st, err = s.Continue()
	if err != nil || st.Reason != replaypkg.ReasonBreakpoint || st.Addr != worker {
		t.Fatalf("Continue to worker: %v, %v", st, err)
	}
	if r2, err := s.Regs(st.Tid); err != nil || r2.Rip != worker {
		t.Fatalf("at the breakpoint rip is %#x (%v), want %#x", r2.Rip, err, worker)
	}
	if err := s.ClearBreakpoint(worker); err != nil {
		t.Fatal(err)
	}
	id, err := s.SetWatchpoint(counter, 8, replaypkg.WatchWrite)
	if err != nil {
		t.Fatal(err)
	}
	before := readCounter(t, s, st.Tid, counter)
	st, err = s.Continue()
	if err != nil || st.Reason != replaypkg.ReasonWatchpoint || st.Watch != id {
		t.Fatalf("Continue to the counter's watchpoint: %v, %v", st, err)
	}
	if after := readCounter(t, s, st.Tid, counter); after == before {
		t.Errorf("watchpoint hit but the counter stayed %d", after)
	}
	if err := s.ClearWatchpoint(id); err != nil {
		t.Fatal(err)
	}
	st, err = s.Continue()
	checkRun("run to the end after the watchpoint", st, err)

	// Restart and run to the end twice more: the same every time, and the
	// counter at the middle event is the same as before.
	for i := 0; i < 2; i++ {
		restart()
		if st, err := s.RunToEvent(mid); err != nil || st.Reason != replaypkg.ReasonEvent {
			t.Fatalf("RunToEvent(%d) after restart: %v, %v", mid, st, err)
		}
		if c := readCounter(t, s, s.Current(), counter); c != c1 {
			t.Errorf("counter at event %d: %d after a restart, %d before", mid, c, c1)
		}
		st, err := s.Continue()
		checkRun("run to the end after a restart", st, err)
	}
}

func symbol(t *testing.T, bin, name string) uint64 {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s has no symbol %s", bin, name)
	return 0
}

func readCounter(t *testing.T, s *replaypkg.Session, tid int, addr uint64) uint64 {
	t.Helper()
	var b [8]byte
	if n, err := s.ReadMem(tid, addr, b[:]); n != 8 || err != nil {
		t.Fatalf("ReadMem(%#x) = %d, %v", addr, n, err)
	}
	return binary.LittleEndian.Uint64(b[:])
}
