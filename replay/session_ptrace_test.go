package replay

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/ptrace"
)

// The Session on real guests, without a trace: guestStarter launches the
// program under the engine as hermit run does, with a journal that only
// counts events (each intercepted syscall is one). Every run of it is
// identical, as every run of a recording is.

// countJournal calls onEvent at every intercepted syscall and changes
// nothing.
type countJournal struct {
	n       uint64
	onEvent func(uint64)
}

func (j *countJournal) Enter(*detcore.Call) error {
	if j.onEvent != nil {
		j.onEvent(j.n)
	}
	j.n++
	return nil
}
func (j *countJournal) Native(*detcore.Call) detcore.Outcome    { return detcore.Outcome{} }
func (j *countJournal) Exit(*detcore.Call) (bool, int64, error) { return false, 0, nil }
func (j *countJournal) Exec(int, int) error                     { return nil }

// guestStarter starts runs of one program; it keeps each run, for its
// output.
type guestStarter struct {
	path string
	runs []*guestRun
}

// guestRun is one run: a Runner.
type guestRun struct {
	tr  *ptrace.Tracer
	eng *detcore.Engine
	j   *countJournal
	// out delivers the guest's stdout and stderr once it has closed them.
	out chan []byte
}

func (g *guestStarter) start(h Hooks) (Runner, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	tr, root, err := ptrace.Start(ptrace.Options{
		Path: g.path, Argv: []string{g.path}, Env: []string{"PATH=/usr/bin:/bin", "LC_ALL=C"},
		CPU: ptrace.CurrentCPU(), Hostname: "hermit", Traced: detcore.InterceptedSyscalls(),
		TrapTSC: true, CPUs: detcore.DefaultCPUs, Stdin: null, Stdout: pw, Stderr: pw,
	})
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, err
	}
	r := &guestRun{tr: tr, j: &countJournal{onEvent: h.OnEvent}, out: make(chan []byte, 1)}
	go func() {
		b, _ := io.ReadAll(pr)
		pr.Close()
		r.out <- b
	}()
	var t detcore.Tracer = tr
	if h.Wrap != nil {
		t = h.Wrap(tr)
	}
	r.eng = detcore.NewEngine(t, detcore.Config{TrapTSC: true, Timeslice: 32, Journal: r.j}, root)
	g.runs = append(g.runs, r)
	return r, nil
}

// last returns the run started last.
func (g *guestStarter) last() *guestRun { return g.runs[len(g.runs)-1] }

// output waits for the run's output (once).
func (r *guestRun) output() []byte { return <-r.out }

func (r *guestRun) Engine() *detcore.Engine { return r.eng }
func (r *guestRun) Kill()                   { r.tr.KillAll() }

func (r *guestRun) Run() (detcore.Result, error) {
	res, err := r.eng.Run()
	if err != nil {
		r.tr.KillAll()
	}
	r.tr.Close()
	return res, err
}

// guestSession runs bin once without a debugger (skipping t if it cannot
// run under ptrace here) and starts a Session of its runs; the caller
// closes it.
func guestSession(t *testing.T, bin string) (*guestStarter, plainOutcome, *Session) {
	t.Helper()
	g := &guestStarter{path: bin}
	want := g.plainRun()
	if want.err != nil {
		t.Skip("cannot run a guest under ptrace here: ", want.err)
	}
	s, err := NewSession(g.start)
	if err != nil {
		t.Fatal(err)
	}
	return g, want, s
}

// lockedThread runs f on a goroutine locked to a thread of its own, which
// ends with it (ptrace binds the guest to it).
func lockedThread[T any](f func() T) T {
	ch := make(chan T, 1)
	go func() {
		runtime.LockOSThread()
		ch <- f()
	}()
	return <-ch
}

// plainOutcome is what a run without a debugger shows.
type plainOutcome struct {
	out    []byte
	res    detcore.Result
	events uint64
	err    error
}

// plainRun runs the program once with no debugger.
func (g *guestStarter) plainRun() plainOutcome {
	return lockedThread(func() plainOutcome {
		r, err := g.start(Hooks{})
		if err != nil {
			return plainOutcome{err: err}
		}
		res, err := r.Run()
		gr := r.(*guestRun)
		return plainOutcome{out: gr.output(), res: res, events: gr.j.n, err: err}
	})
}

// buildGuest compiles tests/guests/src, without PIE so that its symbols'
// addresses are the run's.
func buildGuest(t *testing.T, src string, flags ...string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("needs a C compiler (cc): ", err)
	}
	out := filepath.Join(t.TempDir(), "guest")
	args := append([]string{"-g", "-O0", "-pthread", "-no-pie", "-o", out, filepath.Join("..", "tests", "guests", src)}, flags...)
	cmd := exec.Command(cc, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cc %s: %v\n%s", src, err, b)
	}
	return out
}

// symbols returns the named symbols of the executable at path, and the
// bytes of its file at their addresses.
func symbols(t *testing.T, path string, names ...string) (map[string]elf.Symbol, func(addr uint64, n int) []byte) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if f.Type != elf.ET_EXEC {
		t.Fatalf("%s is %v, want a fixed-address executable", path, f.Type)
	}
	all, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	syms := map[string]elf.Symbol{}
	for _, s := range all {
		syms[s.Name] = s
	}
	for _, n := range names {
		if _, ok := syms[n]; !ok {
			t.Fatalf("%s has no symbol %s", path, n)
		}
	}
	text := func(addr uint64, n int) []byte {
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr+uint64(n) <= p.Vaddr+p.Filesz {
				b := make([]byte, n)
				if _, err := p.ReadAt(b, int64(addr-p.Vaddr)); err != nil {
					t.Fatal(err)
				}
				return b
			}
		}
		t.Fatalf("%#x is not in the file", addr)
		return nil
	}
	return syms, text
}

func readU64(t *testing.T, s *Session, tid int, addr uint64) uint64 {
	t.Helper()
	var b [8]byte
	if n, err := s.ReadMem(tid, addr, b[:]); n != 8 || err != nil {
		t.Fatalf("ReadMem(%d, %#x) = %d, %v", tid, addr, n, err)
	}
	return binary.LittleEndian.Uint64(b[:])
}

func mustStop(t *testing.T, what string, st Stop, err error, want StopReason) Stop {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if st.Reason != want {
		t.Fatalf("%s: stopped at %v, want a %v stop", what, st, want)
	}
	return st
}

// checkEnd checks that a run that has exited behaved as the plain run.
func checkEnd(t *testing.T, what string, g *guestStarter, st Stop, want plainOutcome) {
	t.Helper()
	if got := g.last().output(); !bytes.Equal(got, want.out) {
		t.Errorf("%s: output differs from a run without a debugger:\n%s\nwant:\n%s", what, got, want.out)
	}
	if st.Result.ExitCode != want.res.ExitCode || st.Result.Stats.Digest != want.res.Stats.Digest {
		t.Errorf("%s: exit %d, digest %016x; want %d, %016x", what, st.Result.ExitCode, st.Result.Stats.Digest, want.res.ExitCode, want.res.Stats.Digest)
	}
	if st.Event != want.events {
		t.Errorf("%s: %d events, want %d", what, st.Event, want.events)
	}
}

func TestSessionPtrace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (ptrace, pid and mount namespaces)")
	}
	bin := buildGuest(t, "racy_counter.c")
	syms, file := symbols(t, bin, "main", "worker", "counter", "finished")
	worker, counter, finished := syms["worker"].Value, syms["counter"].Value, syms["finished"].Value
	g := &guestStarter{path: bin}
	want := g.plainRun()
	if want.err != nil {
		t.Skip("cannot run a guest under ptrace here: ", want.err)
	}
	if again := g.plainRun(); !bytes.Equal(again.out, want.out) || again.res.Stats.Digest != want.res.Stats.Digest {
		t.Fatalf("two runs without a debugger differ:\n%s\n%s", want.out, again.out)
	}

	s, err := NewSession(g.start)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	st := s.LastStop()
	ts := s.Threads()
	if st.Reason != ReasonStart || st.Event != 0 || len(ts) != 1 || st.Tid != ts[0].Tid || ts[0].Vtid != 2 {
		t.Fatalf("new session at %v, threads %+v; want the start, one thread with guest tid 2", st, ts)
	}
	root := st.Tid
	st, err = s.Step(root, 100)
	if st = mustStop(t, "Step 100 from the start", st, err, ReasonStep); st.Steps != 100 || st.Tid != root {
		t.Errorf("Step 100 from the start: %v", st)
	}

	// An event boundary: registers and the counter.
	st, err = s.RunToEvent(3)
	mustStop(t, "RunToEvent(3)", st, err, ReasonEvent)
	if st.Event != 3 || s.Event() != 3 {
		t.Errorf("at event %d (Event() %d), want 3", st.Event, s.Event())
	}
	if r, err := s.Regs(s.Current()); err != nil || r.Rip == 0 {
		t.Errorf("Regs(%d) = rip %#x, %v", s.Current(), r.Rip, err)
	}
	if v := readU64(t, s, root, counter); v != 0 {
		t.Errorf("counter %d before any thread ran, want 0", v)
	}

	st, err = s.ContinueTo(4)
	mustStop(t, "ContinueTo(4)", st, err, ReasonEvent)
	if _, err := s.ContinueTo(2); err == nil {
		t.Error("ContinueTo an earlier event succeeded")
	}

	// A breakpoint on worker.
	if err := s.SetBreakpoint(worker); err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	if _, err := s.ReadMem(root, worker, b[:]); err != nil || !bytes.Equal(b[:], file(worker, 4)) {
		t.Errorf("code at the breakpoint reads % x, %v; want the file's % x", b, err, file(worker, 4))
	}
	st, err = s.Continue()
	st = mustStop(t, "Continue to worker", st, err, ReasonBreakpoint)
	t.Logf("breakpoint: %v", st)
	thr := st.Tid
	if r, err := s.Regs(thr); err != nil || r.Rip != worker || st.Addr != worker {
		t.Errorf("at the breakpoint: rip %#x (%v), Addr %#x; want %#x", r.Rip, err, st.Addr, worker)
	}

	// Single-steps of that thread, over the breakpoint first.
	st, err = s.Step(thr, 50)
	st = mustStop(t, "Step 50", st, err, ReasonStep)
	r1, _ := s.Regs(thr)
	if st.Tid != thr || st.Steps != 50 || r1.Rip == worker {
		t.Errorf("after 50 steps: %v, rip %#x; want thread %d, 50 steps, away from %#x", st, r1.Rip, thr, worker)
	}
	st, err = s.Step(thr, 1)
	mustStop(t, "Step 1", st, err, ReasonStep)
	if r2, _ := s.Regs(thr); r2.Rip == r1.Rip {
		t.Errorf("one step did not move rip from %#x", r1.Rip)
	}

	// A write watchpoint on the counter.
	if err := s.ClearBreakpoint(worker); err != nil {
		t.Fatal(err)
	}
	id, err := s.SetWatchpoint(counter, 8, WatchWrite)
	if !ptrace.DebugRegsTrigger() {
		// Where they never trigger, a watchpoint is refused, not set
		// to be missed.
		if !errors.Is(err, ptrace.ErrDebugRegsDead) {
			t.Fatalf("SetWatchpoint on a machine whose debug registers never trigger: %v, want ptrace.ErrDebugRegsDead", err)
		}
		t.Skip("the rest needs watchpoints, and this machine's debug registers never trigger")
	}
	if err != nil {
		t.Fatal(err)
	}
	before := readU64(t, s, root, counter)
	changed := false
	for i := 0; i < 10 && !changed; i++ {
		st, err = s.Continue()
		st = mustStop(t, "Continue to the watchpoint", st, err, ReasonWatchpoint)
		if st.Watch != id || st.Addr != counter {
			t.Fatalf("hit %v, want watchpoint %d at %#x", st, id, counter)
		}
		after := readU64(t, s, st.Tid, counter)
		changed = after != before
		before = after
	}
	t.Logf("watchpoint: %v, counter %d", st, before)
	if !changed {
		t.Error("10 watchpoint hits, and the counter never changed")
	}
	if err := s.ClearWatchpoint(id); err != nil {
		t.Fatal(err)
	}

	// A fresh run to its end, with a breakpoint, a watchpoint and steps
	// across syscalls and thread creation along the way: the guest must
	// not notice.
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if st := s.LastStop(); st.Reason != ReasonStart || st.Event != 0 {
		t.Fatalf("after Restart at %v, want the start", st)
	}
	// Host tids change from run to run; guest tids do not.
	if ts := s.Threads(); len(ts) != 1 || ts[0].Vtid != 2 {
		t.Fatalf("after Restart threads %+v, want one with guest tid 2", ts)
	}
	root = s.Current()
	st, err = s.RunToEvent(1)
	mustStop(t, "RunToEvent(1)", st, err, ReasonEvent)
	st, err = s.Step(root, 20000)
	st = mustStop(t, "Step 20000 from event 1", st, err, ReasonStep)
	t.Logf("Step 20000 from event 1: %v", st)
	if st.Event <= 2 {
		t.Errorf("20000 steps from event 1 ended at event %d: they crossed no syscall", st.Event)
	}
	if err := s.SetBreakpoint(syms["main"].Value); err != nil {
		t.Fatal(err)
	}
	st, err = s.Continue()
	mustStop(t, "Continue to main", st, err, ReasonBreakpoint)
	if err := s.ClearBreakpoint(syms["main"].Value); err != nil {
		t.Fatal(err)
	}
	atMain := st.Event
	st, err = s.Step(root, 10000)
	st = mustStop(t, "Step 10000 from main", st, err, ReasonStep)
	t.Logf("Step 10000 from main (event %d): %v, %d threads", atMain, st, len(s.Threads()))
	if len(s.Threads()) < 2 {
		t.Errorf("10000 steps from main created no thread")
	}
	if err := s.SetBreakpoint(worker); err != nil {
		t.Fatal(err)
	}
	if id, err = s.SetWatchpoint(finished, 4, WatchWrite); err != nil {
		t.Fatal(err)
	}
	hits := map[StopReason]int{}
	for st.Reason != ReasonExited {
		st, err = s.Continue()
		if err != nil {
			t.Fatalf("Continue: %v", err)
		}
		hits[st.Reason]++
		t.Logf("Continue: %v", st)
		switch st.Reason {
		case ReasonBreakpoint:
			if r, _ := s.Regs(st.Tid); r.Rip != worker {
				t.Errorf("breakpoint hit at rip %#x, want %#x", r.Rip, worker)
			}
		case ReasonWatchpoint:
			var v [4]byte
			if _, err := s.ReadMem(st.Tid, finished, v[:]); err != nil || int(binary.LittleEndian.Uint32(v[:])) != hits[ReasonWatchpoint] {
				t.Errorf("watchpoint hit %d: finished = %d (%v)", hits[ReasonWatchpoint], binary.LittleEndian.Uint32(v[:]), err)
			}
		case ReasonExited:
		default:
			t.Fatalf("Continue stopped at %v", st)
		}
	}
	// Threads that started while main was stepped missed the breakpoint.
	if hits[ReasonBreakpoint] < 1 || hits[ReasonWatchpoint] != 8 {
		t.Errorf("hits %v, want breakpoint hits and 8 watchpoint hits", hits)
	}
	checkEnd(t, "debugged run", g, st, want)
	if _, err := s.Regs(root); err != ErrExited {
		t.Errorf("Regs after the end: %v, want ErrExited", err)
	}

	// Back in time: a new run, to its end with the breakpoint and the
	// watchpoint still set (RunToEvent passes them), twice.
	for i := range 2 {
		st, err = s.RunToEvent(5)
		mustStop(t, "RunToEvent(5) after the end", st, err, ReasonEvent)
		st, err = s.RunToEvent(want.events + 10)
		mustStop(t, "RunToEvent past the end", st, err, ReasonExited)
		checkEnd(t, fmt.Sprintf("run %d to the end", i), g, st, want)
	}
}

// TestSessionCloseLeavesNoGuest kills runs paused at each kind of stop
// and checks that no guest thread survives.
func TestSessionCloseLeavesNoGuest(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (ptrace, pid and mount namespaces)")
	}
	bin := buildGuest(t, "racy_counter.c")
	syms, _ := symbols(t, bin, "worker")
	cases := []struct {
		name string
		to   func(s *Session) (Stop, error)
		want StopReason
	}{
		{"start", func(s *Session) (Stop, error) { return s.LastStop(), nil }, ReasonStart},
		{"event", func(s *Session) (Stop, error) { return s.RunToEvent(30) }, ReasonEvent},
		{"breakpoint", func(s *Session) (Stop, error) {
			if err := s.SetBreakpoint(syms["worker"].Value); err != nil {
				return Stop{}, err
			}
			return s.Continue()
		}, ReasonBreakpoint},
		{"step", func(s *Session) (Stop, error) { return s.Step(s.Current(), 1000) }, ReasonStep},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := &guestStarter{path: bin}
			s, err := NewSession(g.start)
			if err != nil {
				t.Skip("cannot run a guest under ptrace here: ", err)
			}
			st, err := c.to(s)
			mustStop(t, c.name, st, err, c.want)
			var tids []int
			for _, th := range s.Threads() {
				tids = append(tids, th.Tid)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			for _, tid := range tids {
				if _, err := os.Stat(fmt.Sprintf("/proc/%d", tid)); err == nil {
					t.Errorf("guest thread %d is still there after Close", tid)
				}
			}
			if _, err := s.Continue(); err != ErrClosed {
				t.Errorf("Continue after Close: %v, want ErrClosed", err)
			}
		})
	}
}

// lineAddr returns the address of the first instruction of the line of
// src (a file of tests/guests) that contains text.
func lineAddr(t *testing.T, bin, src, text string) uint64 {
	t.Helper()
	code, err := os.ReadFile(filepath.Join("..", "tests", "guests", src))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(code, []byte(text))
	if i < 0 {
		t.Fatalf("%s has no %q", src, text)
	}
	line := bytes.Count(code[:i], []byte("\n")) + 1
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break
		}
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			continue
		}
		var e dwarf.LineEntry
		for lr.Next(&e) == nil {
			if e.IsStmt && e.Line == line && filepath.Base(e.File.Name) == src {
				return e.Address
			}
		}
	}
	t.Fatalf("no code for %s:%d", src, line)
	return 0
}

// TestSessionBreakpointsInEveryProcess sets a breakpoint that forked
// children and an exec'd image run too, and continues from hit to hit to
// the end, which must be that of a run without a debugger.
func TestSessionBreakpointsInEveryProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (ptrace, pid and mount namespaces)")
	}
	cases := []struct {
		src, line string
		hits      int
	}{
		// main runs once in each image of the process.
		{"exec_self.c", "if (argc == 1)", 2},
		// Right after fork: the parent and each of the 100 children.
		{"fork_wait.c", "CHECK(pids[i] >= 0);", 200},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			bin := buildGuest(t, c.src)
			addr := lineAddr(t, bin, c.src, c.line)
			g, want, s := guestSession(t, bin)
			defer s.Close()
			if err := s.SetBreakpoint(addr); err != nil {
				t.Fatal(err)
			}
			hits := 0
			tids := map[int]bool{}
			for {
				st, err := s.Continue()
				if err != nil {
					t.Fatal(err)
				}
				if st.Reason == ReasonExited {
					checkEnd(t, "debugged run", g, st, want)
					break
				}
				mustStop(t, "Continue", st, nil, ReasonBreakpoint)
				if r, err := s.Regs(st.Tid); err != nil || r.Rip != addr {
					t.Fatalf("hit %d: rip %#x (%v), want %#x", hits, r.Rip, err, addr)
				}
				hits++
				tids[st.Tid] = true
			}
			if hits != c.hits {
				t.Errorf("%d hits by %d threads, want %d", hits, len(tids), c.hits)
			}
		})
	}
}
