package replay

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/ptrace"
)

// TestTimelineExact goes forwards through a real guest noting the
// registers at each stop, then backwards, and checks that every place it
// comes back to has the registers it had going forwards: instruction
// steps undone one by one, a watchpoint found backwards before the write
// that a step then makes again, a checkpoint restarted twice (from its
// run, then from an earlier one), and the start of the recording. Going
// forwards again after all that ends as a plain run does.
func TestTimelineExact(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (ptrace, pid and mount namespaces)")
	}
	if !ptrace.DebugRegsTrigger() {
		t.Skip("needs watchpoints, and this machine's debug registers never trigger")
	}
	bin := buildGuest(t, "racy_counter.c")
	syms, _ := symbols(t, bin, "worker", "counter")
	worker, counter := syms["worker"].Value, syms["counter"].Value
	_, want, s := guestSession(t, bin)
	tl := NewTimeline(s, TimelineOptions{})
	defer func() {
		if err := tl.Close(); err != nil {
			t.Error(err)
		}
	}()
	regs := func(what string) abi.Regs {
		t.Helper()
		st := tl.Where()
		r, err := s.Regs(st.Tid)
		if err != nil {
			t.Fatalf("%s: registers of thread %d: %v", what, st.Tid, err)
		}
		return r
	}

	// Forwards: the breakpoint, then ten single steps.
	if err := s.SetBreakpoint(worker); err != nil {
		t.Fatal(err)
	}
	st, err := tl.Continue()
	mustStop(t, "Continue to worker", st, err, ReasonBreakpoint)
	if err := s.ClearBreakpoint(worker); err != nil {
		t.Fatal(err)
	}
	tid := st.Tid
	var trail []abi.Regs
	trail = append(trail, regs("at worker"))
	for i := 0; i < 10; i++ {
		st, err = tl.Step(tid, 1)
		mustStop(t, "Step 1", st, err, ReasonStep)
		trail = append(trail, regs("a step"))
	}
	// Backwards, one instruction at a time, to the breakpoint.
	for i := len(trail) - 2; i >= 0; i-- {
		st, err := tl.ReverseStep(tl.Where().Tid)
		mustStop(t, "ReverseStep", st, err, ReasonStep)
		if r := regs("a step back"); r != trail[i] {
			t.Fatalf("%d steps from worker, going back: rip %#x rsp %#x; going forwards it was rip %#x rsp %#x", i, r.Rip, r.Rsp, trail[i].Rip, trail[i].Rsp)
		}
	}

	// A watchpoint going forwards, a checkpoint there, on past it.
	if _, err := s.SetWatchpoint(counter, 8, WatchWrite); err != nil {
		t.Fatal(err)
	}
	st, err = tl.Continue()
	mustStop(t, "Continue to the counter's write", st, err, ReasonWatchpoint)
	atWrite := regs("after the write")
	writer := tl.vtidOf(tl.Where().Tid)
	id, err := tl.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		st, err = tl.Continue()
		mustStop(t, "Continue to a later write", st, err, ReasonWatchpoint)
	}
	later := regs("a later write")

	// Backwards to the write it stopped at (a watchpoint stops after
	// the access): before it, so one step makes it again.
	st, err = tl.ReverseContinue()
	mustStop(t, "ReverseContinue to the write before", st, err, ReasonWatchpoint)
	before := regs("before the write")
	st, err = tl.Step(tl.Where().Tid, 1)
	mustStop(t, "the writing step", st, err, ReasonWatchpoint)
	if r := regs("the write again"); r.Rip == before.Rip {
		t.Errorf("the step after ReverseContinue did not move from %#x", before.Rip)
	}

	// The checkpoint, twice, and forwards to the same place.
	for i := 0; i < 2; i++ {
		st, err = tl.RestartCheckpoint(id)
		mustStop(t, "RestartCheckpoint", st, err, ReasonWatchpoint)
		// The same thread, by its recorded id: a restart may be a new
		// run, whose host tids are others.
		if r := regs("at the checkpoint"); r != atWrite || tl.vtidOf(tl.Where().Tid) != writer {
			t.Fatalf("restart %d: rip %#x in thread %d; the checkpoint was made at rip %#x in thread %d", i, r.Rip, tl.vtidOf(tl.Where().Tid), atWrite.Rip, writer)
		}
	}
	for i := 0; i < 3; i++ {
		st, err = tl.Continue()
		mustStop(t, "Continue to a later write", st, err, ReasonWatchpoint)
	}
	if r := regs("the later write again"); r != later {
		t.Errorf("the third write after the checkpoint: rip %#x, the first time rip %#x", r.Rip, later.Rip)
	}

	// The start, and nothing before it.
	if err := s.ClearWatchpoint(0); err != nil {
		t.Fatal(err)
	}
	st, err = tl.ReverseContinue()
	if !errors.Is(err, ErrHistoryStart) || st.Reason != ReasonStart {
		t.Fatalf("ReverseContinue with nothing set: %v, %v; want the start and ErrHistoryStart", st, err)
	}
	if _, err := tl.ReverseStep(tl.Where().Tid); !errors.Is(err, ErrHistoryStart) {
		t.Errorf("ReverseStep at the start: %v, want ErrHistoryStart", err)
	}

	// And on to the end, as a plain run ends.
	st, err = tl.Continue()
	if err != nil || st.Reason != ReasonExited || st.Result.ExitCode != want.res.ExitCode || st.Event != want.events {
		t.Errorf("Continue to the end: %v, %v; a plain run exits %d after %d events", st, err, want.res.ExitCode, want.events)
	}
}

// TestTimelineLongLoop goes back one instruction from the call that
// follows a loop of 50,000 iterations without a system call: the
// instruction counting anchors on the loop rather than stepping all of it
// (its progress lines say so), and lands where a step forwards leaves the
// same registers as before. Its loop of three instructions (-DASM_LOOP)
// ends each counting chunk at the anchor (an arrival once counted twice,
// which sent the replay past the stop, to the end).
func TestTimelineLongLoop(t *testing.T) {
	for name, flags := range map[string][]string{"C loop": nil, "loop of three instructions": {"-DASM_LOOP"}} {
		t.Run(name, func(t *testing.T) { testLongLoop(t, flags) })
	}
}

func testLongLoop(t *testing.T, flags []string) {
	var progress []string
	s, tl, st := atAfterLoop(t, flags, TimelineOptions{Progress: func(m string) { progress = append(progress, m) }})
	at, _ := s.Regs(st.Tid)
	st, err := tl.ReverseStep(st.Tid)
	mustStop(t, "ReverseStep from after", st, err, ReasonStep)
	back, _ := s.Regs(st.Tid)
	if back.Rip == at.Rip || back.Rsp != at.Rsp+8 {
		t.Errorf("one instruction back from after: rip %#x rsp %#x; want the call, with rsp %#x", back.Rip, back.Rsp, at.Rsp+8)
	}
	st, err = tl.Step(st.Tid, 1)
	mustStop(t, "Step forwards again", st, err, ReasonStep)
	if r, _ := s.Regs(st.Tid); r != at {
		t.Errorf("a step forwards from there: rip %#x rsp %#x; want rip %#x rsp %#x as at after", r.Rip, r.Rsp, at.Rip, at.Rsp)
	}
	anchored := false
	for _, m := range progress {
		anchored = anchored || strings.Contains(m, "passes through")
	}
	if !anchored {
		t.Errorf("going back did not anchor on the loop; progress: %q", progress)
	}
}

// atAfterLoop starts a Timeline over long_loop, built with cc flags
// flags, and brings it to the breakpoint at after, past the loop; the
// Timeline is closed at the end of the test.
func atAfterLoop(t *testing.T, flags []string, opts TimelineOptions) (*Session, *Timeline, Stop) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (ptrace, pid and mount namespaces)")
	}
	bin := buildGuest(t, "long_loop.c", flags...)
	syms, _ := symbols(t, bin, "after")
	_, _, s := guestSession(t, bin)
	tl := NewTimeline(s, opts)
	t.Cleanup(func() { tl.Close() })
	if err := s.SetBreakpoint(syms["after"].Value); err != nil {
		t.Fatal(err)
	}
	st, err := tl.Continue()
	return s, tl, mustStop(t, "Continue to after", st, err, ReasonBreakpoint)
}

// TestTimelineInterrupt: an Interrupt (the debugger's ^C) during a long
// reverse step cancels it: the replay is back where the command began,
// and goes on from there.
func TestTimelineInterrupt(t *testing.T) {
	s, tl, st := atAfterLoop(t, nil, TimelineOptions{})
	at, _ := s.Regs(st.Tid)
	done := make(chan struct{})
	go func() {
		// Again and again: one between two legs of the command is lost.
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
				s.Interrupt()
			}
		}
	}()
	_, err := tl.ReverseStep(st.Tid)
	close(done)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("ReverseStep interrupted: %v, want ErrInterrupted", err)
	}
	here := tl.Where()
	if r, _ := s.Regs(here.Tid); r != at || here.Reason != ReasonBreakpoint {
		t.Errorf("after the interrupted reverse step: %v, rip %#x; want the breakpoint at after, rip %#x", here, r.Rip, at.Rip)
	}
	st, err = tl.Continue()
	if err != nil || st.Reason != ReasonExited {
		t.Errorf("Continue to the end after the interrupt: %v, %v", st, err)
	}
}

// TestTimelineBackFromSyscall: one step back from a thread's system call
// lands on its syscall instruction, found by the thread's arrivals there,
// without stepping through the loop before it (which cost a trap per
// instruction: 84 s for a 100,000-round loop before an exit).
func TestTimelineBackFromSyscall(t *testing.T) {
	var progress []string
	s, tl, st := atAfterLoop(t, nil, TimelineOptions{Progress: func(m string) { progress = append(progress, m) }})
	st, err := tl.RunToEvent(st.Event)
	st = mustStop(t, "RunToEvent to the write after the loop", st, err, ReasonEvent)
	at, err := s.Regs(st.Tid)
	if err != nil || at.OrigRax != abi.SYS_WRITE {
		t.Fatalf("at the boundary after the loop: orig_rax %d, %v; want write's", at.OrigRax, err)
	}
	progress = nil
	back, err := tl.ReverseStep(st.Tid)
	if err != nil {
		t.Fatalf("ReverseStep from the write: %v", err)
	}
	r, _ := s.Regs(back.Tid)
	if back.Reason != ReasonStep || r.Rip != at.Rip-2 || r.Rax != abi.SYS_WRITE {
		t.Errorf("one step back from the write: %v, rip %#x, rax %d; want its syscall instruction at %#x, rax %d", back, r.Rip, r.Rax, at.Rip-2, abi.SYS_WRITE)
	}
	if len(progress) > 0 {
		t.Errorf("the step back from a system call stepped through the loop: %q", progress)
	}
	// And forwards again: over the write, as recorded.
	st2, err := tl.Step(back.Tid, 1)
	if r, _ := s.Regs(st2.Tid); err != nil || st2.Reason != ReasonStep || r.Rip != at.Rip || st2.Event <= st.Event {
		t.Errorf("a step forwards from there: %v, %v, rip %#x; want past the write (event %d), at %#x", st2, err, r.Rip, st.Event, at.Rip)
	}
}

// TestTimelineInterruptComputing: an Interrupt while the only thread
// computes without a syscall stops it inside the computation (a kick),
// not at its next call. Going back from that place is refused, as it is
// from a breakpoint in the loop reached from it (the first arrival there
// is not that one); from a breakpoint past the loop, reached in the same
// stretch, a reverse continue finds the earlier breakpoint exactly.
func TestTimelineInterruptComputing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (ptrace, pid and mount namespaces)")
	}
	bin := buildGuest(t, "crunch.c", "-O1")
	syms, _ := symbols(t, bin, "crunch", "report")
	_, _, s := guestSession(t, bin)
	tl := NewTimeline(s, TimelineOptions{NoAuto: true})
	t.Cleanup(func() { tl.Close() })
	crunch, report := syms["crunch"], syms["report"]
	setBreak := func(addr uint64) {
		t.Helper()
		if err := s.SetBreakpoint(addr); err != nil {
			t.Fatal(err)
		}
	}
	clearBreak := func(addr uint64) {
		t.Helper()
		if err := s.ClearBreakpoint(addr); err != nil {
			t.Fatal(err)
		}
	}
	setBreak(crunch.Value)
	st, err := tl.Continue()
	st = mustStop(t, "Continue to crunch", st, err, ReasonBreakpoint)
	atCrunch, _ := s.Regs(st.Tid)
	clearBreak(crunch.Value)
	go func() {
		time.Sleep(300 * time.Millisecond)
		s.Interrupt()
	}()
	st, err = tl.Continue()
	st = mustStop(t, "Continue interrupted", st, err, ReasonInterrupt)
	here, _ := s.Regs(st.Tid)
	if here.Rip < crunch.Value || here.Rip >= crunch.Value+crunch.Size {
		t.Fatalf("interrupted at %#x, want inside crunch [%#x, %#x)", here.Rip, crunch.Value, crunch.Value+crunch.Size)
	}
	refused := func(what string, st Stop, err error, want abi.Regs) {
		t.Helper()
		if !errors.Is(err, errInexact) {
			t.Errorf("%s: %v, %v; want it refused (%v)", what, st, err, errInexact)
		}
		if r, _ := s.Regs(tl.Where().Tid); r != want {
			t.Errorf("after the refused %s: rip %#x, want the replay where it was, rip %#x", what, r.Rip, want.Rip)
		}
	}
	st, err = tl.ReverseStep(st.Tid)
	refused("ReverseStep from the interrupt", st, err, here)
	// A breakpoint in the loop: the continue from the interrupt's place
	// stops at the next round, not the first.
	setBreak(here.Rip)
	st, err = tl.Continue()
	st = mustStop(t, "Continue to the loop's breakpoint", st, err, ReasonBreakpoint)
	round, _ := s.Regs(st.Tid)
	st, err = tl.ReverseContinue()
	refused("ReverseContinue from the next round", st, err, round)
	clearBreak(here.Rip)
	// Past the loop, in the same stretch.
	setBreak(crunch.Value)
	setBreak(report.Value)
	st, err = tl.Continue()
	st = mustStop(t, "Continue to report", st, err, ReasonBreakpoint)
	atReport, _ := s.Regs(st.Tid)
	if atReport.Rip != report.Value {
		t.Fatalf("stopped at %#x, want report at %#x", atReport.Rip, report.Value)
	}
	// Trying the guess replays the loop: an Interrupt ends that, and the
	// replay is back at report, the guess kept.
	go func() {
		time.Sleep(300 * time.Millisecond)
		s.Interrupt()
	}()
	st, err = tl.ReverseContinue()
	if r, _ := s.Regs(tl.Where().Tid); !errors.Is(err, ErrInterrupted) || r != atReport {
		t.Errorf("ReverseContinue from report, interrupted: %v, %v at rip %#x; want ErrInterrupted at report, rip %#x", st, err, r.Rip, atReport.Rip)
	}
	st, err = tl.ReverseContinue()
	st = mustStop(t, "ReverseContinue from report", st, err, ReasonBreakpoint)
	if r, _ := s.Regs(st.Tid); r != atCrunch {
		t.Errorf("back from report: rip %#x rsp %#x; want crunch's entry as first reached, rip %#x rsp %#x", r.Rip, r.Rsp, atCrunch.Rip, atCrunch.Rsp)
	}
	st, err = tl.Continue()
	st = mustStop(t, "Continue to report again", st, err, ReasonBreakpoint)
	if r, _ := s.Regs(st.Tid); r != atReport {
		t.Errorf("forwards again: rip %#x, want report's stop as before, rip %#x", r.Rip, atReport.Rip)
	}
	// One instruction back from report counts the loop's rounds from
	// crunch's entry, a trap each (for many minutes): an Interrupt ends
	// the count, and the replay is back at report.
	go func() {
		time.Sleep(time.Second)
		s.Interrupt()
	}()
	st, err = tl.ReverseStep(st.Tid)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("ReverseStep over the loop, interrupted: %v, %v; want ErrInterrupted", st, err)
	}
	if r, _ := s.Regs(tl.Where().Tid); r != atReport {
		t.Errorf("after the interrupted step back: rip %#x, want report's stop, rip %#x", r.Rip, atReport.Rip)
	}
}
