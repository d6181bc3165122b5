package replay

import (
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
)

type harness struct {
	t       *testing.T
	f       *fakeCPU
	l       *layer
	tr      detcore.Tracer
	intr    atomic.Bool
	signals atomic.Bool
	stops   []Stop
	// onPause runs at each pause, on behalf of the Session; it returns
	// the goal to resume with.
	onPause func(st Stop) goal
}

func newHarness(t *testing.T, f *fakeCPU) *harness {
	h := &harness{t: t, f: f}
	h.l = newLayer(&h.intr, &h.signals)
	h.tr = h.l.wrap(f)
	h.l.list = f.list
	h.l.stop = func(st Stop) {
		h.stops = append(h.stops, st)
		g := goal{breaks: true}
		if h.onPause != nil {
			g = h.onPause(st)
		}
		h.l.setGoal(g)
	}
	return h
}

// resume plays the engine: it resumes tid and returns the stop it sees.
func (h *harness) resume(tid int, mode detcore.ResumeMode) detcore.Stop {
	h.t.Helper()
	if err := h.tr.Resume(tid, mode, 0); err != nil {
		h.t.Fatalf("Resume(%d, %s): %v", tid, modeNames[mode], err)
	}
	st, err := h.tr.Wait()
	if err != nil {
		h.t.Fatalf("Wait: %v", err)
	}
	return st
}

func TestClassifyTrap(t *testing.T) {
	type looked struct{ afterSyscall, atBreak bool }
	cases := []struct {
		name string
		f    trapFacts
		look *looked // nil: look must not be called
		want trapClass
	}{
		{"our step", trapFacts{dr6: dr6Step, ourStep: true}, nil, trapClass{step: true, watch: -1}},
		{"our step out of a syscall", trapFacts{ourStep: true, inSyscall: true}, nil, trapClass{step: true, watch: -1}},
		{"our step over a native syscall", trapFacts{ourStep: true}, &looked{afterSyscall: true}, trapClass{step: true, watch: -1}},
		{"our step onto our int3", trapFacts{ourStep: true}, &looked{atBreak: true}, trapClass{brk: true, watch: -1}},
		{"guest int3 while stepping", trapFacts{ourStep: true}, &looked{}, trapClass{watch: -1}},
		{"guest's own single-step", trapFacts{dr6: dr6Step}, &looked{}, trapClass{watch: -1}},
		{"our int3 after the guest's own single-step", trapFacts{dr6: dr6Step}, &looked{atBreak: true}, trapClass{brk: true, watch: -1}},
		{"watchpoint 1", trapFacts{dr6: 1 << 1, watching: 0b11}, nil, trapClass{watch: 1}},
		{"watchpoint and our step", trapFacts{dr6: dr6Step | 1, watching: 1, ourStep: true}, nil, trapClass{step: true, watch: 0}},
		{"stale bit of an unused slot", trapFacts{dr6: 1 << 2, watching: 0b11}, &looked{}, trapClass{watch: -1}},
		{"step over a breakpoint", trapFacts{dr6: dr6Step, stepOver: true}, nil, trapClass{step: true, watch: -1}},
		{"step over a breakpoint on a syscall", trapFacts{stepOver: true}, nil, trapClass{step: true, watch: -1}},
		{"step over a breakpoint on a guest int3", trapFacts{stepOver: true, overInt3: true}, nil, trapClass{watch: -1}},
		{"our breakpoint", trapFacts{}, &looked{atBreak: true}, trapClass{brk: true, watch: -1}},
		{"guest int3", trapFacts{}, &looked{}, trapClass{watch: -1}},
		{"guest raise after a syscall", trapFacts{}, &looked{afterSyscall: true}, trapClass{watch: -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			look := func() (bool, bool) {
				if c.look == nil {
					t.Fatal("look called, but the debug registers decide")
				}
				return c.look.afterSyscall, c.look.atBreak
			}
			if got := classifyTrap(c.f, look); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestBreakpointStepOver(t *testing.T) {
	// nop nop [nop: breakpoint] nop syscall(intercepted) exit
	f := newFakeCPU(0x1000, 0x90, 0x90, 0x90, 0x90, 0x0f, 0x05, 0xf4)
	f.setIntercepted(0x1004)
	h := newHarness(t, f)
	if err := h.l.insert(0x1002); err != nil {
		t.Fatal(err)
	}
	if f.byteAt(0x1002) != int3 {
		t.Fatalf("byte at the breakpoint %#x, want cc", f.byteAt(0x1002))
	}
	h.onPause = func(st Stop) goal {
		if got := f.regs(t, 1).Rip; got != 0x1002 {
			t.Errorf("at the breakpoint, rip %#x, want 0x1002", got)
		}
		var b [3]byte
		if n, err := h.l.readMem(1, 0x1001, b[:]); n != 3 || err != nil || b != [3]byte{0x90, 0x90, 0x90} {
			t.Errorf("readMem = %d, %v, % x; want the original bytes", n, err, b)
		}
		if f.byteAt(0x1002) != int3 {
			t.Errorf("the int3 is gone while paused")
		}
		return goal{breaks: true}
	}
	h.l.setGoal(goal{breaks: true})
	mark := f.logLen()
	st := h.resume(1, detcore.ResumeCont)
	if st.Kind != detcore.StopSeccomp || f.regs(t, 1).Rip != 0x1006 {
		t.Fatalf("engine saw %+v at %#x, want the seccomp stop at 0x1006", st, f.regs(t, 1).Rip)
	}
	want := []Stop{{Reason: ReasonBreakpoint, Tid: 1, Addr: 0x1002}}
	if !reflect.DeepEqual(h.stops, want) {
		t.Errorf("stops %+v, want %+v", h.stops, want)
	}
	if got, want := f.logSince(mark), "1:cont w 0x1002=90 1:step w 0x1002=cc 1:cont"; got != want {
		t.Errorf("tracer calls %q, want %q", got, want)
	}
	// Without a goal that breaks, the breakpoint is stepped over unseen.
	f.threads[1].regs.Rip, f.threads[1].inSyscall = 0x1000, false
	h.stops = nil
	h.l.setGoal(goal{toEvent: true, event: 99})
	if st := h.resume(1, detcore.ResumeCont); st.Kind != detcore.StopSeccomp || len(h.stops) != 0 {
		t.Errorf("engine saw %+v, pauses %+v; want the seccomp stop and no pause", st, h.stops)
	}
	if st := h.resume(1, detcore.ResumeCont); st.Kind != detcore.StopExited {
		t.Errorf("engine saw %+v, want the exit", st)
	}
}

// TestBreakpointStepOverStopped: a SIGSTOP that stops the thread before
// its step over a breakpoint (the watchdog's, in a busy replay) leaves
// the step to be made when it next runs: the hit is reported once (it was
// reported twice, and Delve's rev next and rev step went astray).
func TestBreakpointStepOverStopped(t *testing.T) {
	// nop nop [nop: breakpoint] nop syscall(intercepted) exit
	f := newFakeCPU(0x1000, 0x90, 0x90, 0x90, 0x90, 0x0f, 0x05, 0xf4)
	f.setIntercepted(0x1004)
	h := newHarness(t, f)
	if err := h.l.insert(0x1002); err != nil {
		t.Fatal(err)
	}
	h.onPause = func(st Stop) goal {
		f.threads[1].stopNext = true
		return goal{breaks: true}
	}
	h.l.setGoal(goal{breaks: true})
	if st := h.resume(1, detcore.ResumeCont); st.Kind != detcore.StopSignal || st.Sig != abi.SIGSTOP {
		t.Fatalf("engine saw %+v, want the SIGSTOP", st)
	}
	if got := f.regs(t, 1).Rip; got != 0x1002 {
		t.Fatalf("after the SIGSTOP, rip %#x, want 0x1002 (the step not made)", got)
	}
	h.onPause = nil
	if st := h.resume(1, detcore.ResumeCont); st.Kind != detcore.StopSeccomp || f.regs(t, 1).Rip != 0x1006 {
		t.Fatalf("engine saw %+v at %#x, want the seccomp stop at 0x1006", st, f.regs(t, 1).Rip)
	}
	want := []Stop{{Reason: ReasonBreakpoint, Tid: 1, Addr: 0x1002}}
	if !reflect.DeepEqual(h.stops, want) {
		t.Errorf("stops %+v, want the one hit %+v", h.stops, want)
	}
	if f.byteAt(0x1002) != int3 {
		t.Errorf("byte at the breakpoint %#x after the step, want cc", f.byteAt(0x1002))
	}
}

func TestStepCounting(t *testing.T) {
	// 0x1000 nop nop nop / 0x1003 syscall (intercepted) / 0x1005 nop /
	// 0x1006 syscall (native) / 0x1008 nop nop / 0x100a syscall
	// (intercepted) / 0x100c nop exit
	f := newFakeCPU(0x1000, 0x90, 0x90, 0x90, 0x0f, 0x05, 0x90, 0x0f, 0x05, 0x90, 0x90, 0x0f, 0x05, 0x90, 0xf4)
	f.setIntercepted(0x1003, 0x100a)
	cases := []struct {
		n       int
		wantRip uint64
		// seccomp stops the engine sees before the step ends
		wantSeen int
	}{
		{1, 0x1001, 0},
		{3, 0x1003, 0},
		{4, 0x1005, 1}, // the intercepted syscall counts when it completes
		{6, 0x1008, 1}, // the native syscall counts once
		{9, 0x100c, 2},
		{10, 0x100d, 2},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.n), func(t *testing.T) {
			f.threads[1].regs.Rip, f.threads[1].inSyscall = 0x1000, false
			h := newHarness(t, f)
			h.l.setGoal(goal{breaks: true, stepTid: 1, stepN: c.n})
			mark := f.logLen()
			var rip uint64
			var resumes []string
			h.onPause = func(Stop) goal {
				rip, resumes = f.regs(t, 1).Rip, f.resumesSince(mark)
				return goal{breaks: true}
			}
			seen := 0
			// The engine resumes the thread at each stop it sees: the
			// seccomp stops, the last with ResumeSyscall.
			mode := detcore.ResumeCont
			for len(h.stops) == 0 {
				st := h.resume(1, mode)
				if len(h.stops) > 0 {
					break
				}
				switch st.Kind {
				case detcore.StopSeccomp:
					seen++
					mode = detcore.ResumeSyscall
				case detcore.StopSyscallExit:
					mode = detcore.ResumeCont
				default:
					t.Fatalf("engine saw %+v", st)
				}
			}
			want := Stop{Reason: ReasonStep, Tid: 1, Steps: c.n}
			if !reflect.DeepEqual(h.stops[0], want) {
				t.Errorf("pause %+v, want %+v", h.stops[0], want)
			}
			if rip != c.wantRip {
				t.Errorf("rip %#x, want %#x", rip, c.wantRip)
			}
			if seen != c.wantSeen {
				t.Errorf("engine saw %d seccomp stops, want %d", seen, c.wantSeen)
			}
			if slices.Contains(resumes, "1:cont") {
				t.Errorf("a ResumeCont reached the tracer while stepping: %v", resumes)
			}
		})
	}
}

// TestEngineStepsUnderTheSession: the engine single-steps a thread of
// its own accord (a spin examination, which the watchdog starts whenever
// it looks) while the Session breaks and steps. Each instruction the
// engine's step executes is the program's: a breakpoint on the way is
// hit, the Session's step counts it and may end with it, and the engine
// sees one instruction per step. (The Session's step went uncounted
// through the engine's steps, so gdb's step over a breakpoint ended
// loop rounds later than it began, and reverse-stepi landed in another
// round under load.)
func TestEngineStepsUnderTheSession(t *testing.T) {
	// nop [nop: breakpoint] nop nop syscall(intercepted)
	f := newFakeCPU(0x1000, 0x90, 0x90, 0x90, 0x90, 0x0f, 0x05)
	f.setIntercepted(0x1004)
	h := newHarness(t, f)
	if err := h.l.insert(0x1001); err != nil {
		t.Fatal(err)
	}
	var pausedAt []uint64
	h.onPause = func(st Stop) goal {
		pausedAt = append(pausedAt, f.regs(t, 1).Rip)
		if st.Reason == ReasonBreakpoint {
			return goal{breaks: true, stepTid: 1, stepN: 1} // gdb's step over it
		}
		return goal{breaks: true}
	}
	h.l.setGoal(goal{breaks: true})
	engineSaw := func(what string, want uint64) {
		t.Helper()
		st := h.resume(1, detcore.ResumeStep)
		if st.Kind != detcore.StopSignal || st.Sig != abi.SIGTRAP || f.regs(t, 1).Rip != want {
			t.Fatalf("%s: the engine saw %+v at %#x, want its step's trap at %#x", what, st, f.regs(t, 1).Rip, want)
		}
	}
	engineSaw("a step to the breakpoint", 0x1001)
	engineSaw("a step through the breakpoint", 0x1002)
	want := []Stop{{Reason: ReasonBreakpoint, Tid: 1, Addr: 0x1001}, {Reason: ReasonStep, Tid: 1, Steps: 1}}
	if !reflect.DeepEqual(h.stops, want) || !reflect.DeepEqual(pausedAt, []uint64{0x1001, 0x1002}) {
		t.Errorf("pauses %+v at %#x, want %+v at 0x1001 and 0x1002", h.stops, pausedAt, want)
	}
	// A step the Session asks for with no breakpoint on the way ends
	// with the engine's next instruction.
	h.stops, pausedAt = nil, nil
	h.l.setGoal(goal{breaks: true, stepTid: 1, stepN: 1})
	engineSaw("a step under the Session's", 0x1003)
	if want := []Stop{{Reason: ReasonStep, Tid: 1, Steps: 1}}; !reflect.DeepEqual(h.stops, want) || !reflect.DeepEqual(pausedAt, []uint64{0x1003}) {
		t.Errorf("pauses %+v at %#x, want %+v at 0x1003", h.stops, pausedAt, want)
	}
}

func TestStepSyscallResumeNotConverted(t *testing.T) {
	// syscall (intercepted) / nop / exit
	f := newFakeCPU(0x1000, 0x0f, 0x05, 0x90, 0xf4)
	f.setIntercepted(0x1000)
	h := newHarness(t, f)
	if st := h.resume(1, detcore.ResumeCont); st.Kind != detcore.StopSeccomp {
		t.Fatalf("engine saw %+v", st)
	}
	h.l.setGoal(goal{breaks: true, stepTid: 1, stepN: 2})
	mark := f.logLen()
	var rip uint64
	var log string
	h.onPause = func(Stop) goal {
		rip, log = f.regs(t, 1).Rip, f.logSince(mark)
		return goal{breaks: true}
	}
	if st := h.resume(1, detcore.ResumeSyscall); st.Kind != detcore.StopSyscallExit {
		t.Fatalf("engine saw %+v, want the syscall exit", st)
	}
	if st := h.resume(1, detcore.ResumeCont); st.Kind != detcore.StopExited {
		t.Fatalf("engine saw %+v, want the exit", st)
	}
	if want := "1:syscall 1:step"; log != want {
		t.Errorf("resumes %q, want %q", log, want)
	}
	if len(h.stops) != 1 || h.stops[0].Steps != 2 || rip != 0x1003 {
		t.Errorf("pauses %+v at %#x, want one step of 2 at 0x1003", h.stops, rip)
	}
}

func TestStepOntoBreakpointThenContinue(t *testing.T) {
	// nop [nop: breakpoint] nop syscall(intercepted)
	f := newFakeCPU(0x1000, 0x90, 0x90, 0x90, 0x0f, 0x05)
	f.setIntercepted(0x1003)
	h := newHarness(t, f)
	if err := h.l.insert(0x1001); err != nil {
		t.Fatal(err)
	}
	h.l.setGoal(goal{breaks: true, stepTid: 1, stepN: 1})
	h.onPause = func(st Stop) goal { return goal{breaks: true} }
	st := h.resume(1, detcore.ResumeCont)
	// Stepped onto the breakpoint (ReasonStep), then continued: the
	// breakpoint the Session already stands on is stepped over, not hit.
	want := []Stop{{Reason: ReasonStep, Tid: 1, Steps: 1}}
	if !reflect.DeepEqual(h.stops, want) || st.Kind != detcore.StopSeccomp {
		t.Errorf("pauses %+v, engine saw %+v; want %+v and the seccomp stop", h.stops, st, want)
	}
}

func TestWatchpoint(t *testing.T) {
	// nop store(0x2000) nop exit
	f := newFakeCPU(0x1000, 0x90, 0xa2, 0x90, 0xf4)
	f.mem[0x2000] = 7
	f.stores[0x1001] = 0x2000
	h := newHarness(t, f)
	if err := h.l.setWatch(0, watch{on: true, addr: 0x2000, size: 1, kind: WatchWrite}); err != nil {
		t.Fatal(err)
	}
	if got := f.dr(1, 7); got != 0x10001 {
		t.Errorf("DR7 %#x, want 0x10001 (L0, write, 1 byte)", got)
	}
	h.l.setGoal(goal{breaks: true})
	if st := h.resume(1, detcore.ResumeCont); st.Kind != detcore.StopExited {
		t.Fatalf("engine saw %+v, want the exit", st)
	}
	want := []Stop{{Reason: ReasonWatchpoint, Tid: 1, Addr: 0x2000, Watch: 0}}
	if !reflect.DeepEqual(h.stops, want) {
		t.Errorf("pauses %+v, want %+v", h.stops, want)
	}
	if f.mem[0x2000] != 8 {
		t.Errorf("watched byte %d, want 8", f.mem[0x2000])
	}
	if got := f.dr(1, 6); got != 0 {
		t.Errorf("DR6 %#x after the hit, want it cleared", got)
	}
}

func TestWatchpointNewThread(t *testing.T) {
	f := newFakeCPU(0x1000, 0x90, 0xa2, 0xf4)
	f.mem[0x2000] = 0
	f.stores[0x1001] = 0x2000
	h := newHarness(t, f)
	if err := h.l.setWatch(2, watch{on: true, addr: 0x2000, size: 8, kind: WatchReadWrite}); err != nil {
		t.Fatal(err)
	}
	f.addThread(2, 0x1000)
	h.l.setGoal(goal{breaks: true})
	if st := h.resume(2, detcore.ResumeCont); st.Kind != detcore.StopExited {
		t.Fatalf("engine saw %+v", st)
	}
	if len(h.stops) != 1 || h.stops[0].Tid != 2 || h.stops[0].Watch != 2 {
		t.Errorf("pauses %+v, want watchpoint 2 hit by thread 2", h.stops)
	}
	if err := h.l.setWatch(2, watch{}); err != nil {
		t.Fatal(err)
	}
	if got := f.dr(1, 7); got != 0 {
		t.Errorf("DR7 of thread 1 %#x after clearing, want 0", got)
	}
}

func TestForeignTrapPassesThrough(t *testing.T) {
	// nop int3 (the guest's own) exit; a breakpoint elsewhere keeps the
	// layer looking at traps.
	f := newFakeCPU(0x1000, 0x90, 0xcc, 0xf4, 0x90)
	h := newHarness(t, f)
	if err := h.l.insert(0x1003); err != nil {
		t.Fatal(err)
	}
	h.l.setGoal(goal{breaks: true})
	st := h.resume(1, detcore.ResumeCont)
	if st.Kind != detcore.StopSignal || st.Sig != abi.SIGTRAP || len(h.stops) != 0 {
		t.Errorf("engine saw %+v, pauses %+v; want the SIGTRAP and no pause", st, h.stops)
	}
	if got := f.regs(t, 1).Rip; got != 0x1002 {
		t.Errorf("rip %#x, want 0x1002 (untouched)", got)
	}
}

func TestMemoryUnderBreakpoints(t *testing.T) {
	f := newFakeCPU(0x1000, 0x90, 0x91, 0x92, 0x93)
	h := newHarness(t, f)
	if err := h.l.insert(0x1001); err != nil {
		t.Fatal(err)
	}
	if err := h.l.insert(0x5000); err == nil {
		t.Error("inserting a breakpoint in unmapped memory succeeded")
	}
	var b [4]byte
	if err := h.tr.ReadMem(1, 0x1000, b[:]); err != nil || b != [4]byte{0x90, 0x91, 0x92, 0x93} {
		t.Errorf("engine read % x, %v; want the original bytes", b, err)
	}
	// The engine (an emulated read) writes over the breakpoint.
	if err := h.tr.WriteMem(1, 0x1000, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if f.byteAt(0x1001) != int3 || h.l.bps[0x1001] != 2 {
		t.Errorf("after a write: byte %#x, original %#x; want cc and 2", f.byteAt(0x1001), h.l.bps[0x1001])
	}
	h.l.remove(0x1001)
	if f.byteAt(0x1001) != 2 {
		t.Errorf("after removal: byte %#x, want 2", f.byteAt(0x1001))
	}
	// A read running into an unmapped page returns what precedes it.
	for a := uint64(0x1ffc); a < 0x2000; a++ {
		f.mem[a] = 0x90
	}
	buf := make([]byte, 8)
	if n, err := h.l.readMem(1, 0x1ffc, buf); n != 4 || err == nil {
		t.Errorf("readMem = %d, %v; want 4 and an error", n, err)
	}
}

// Tracers with some of the optional interfaces.
type (
	fileCPU     struct{ *fakeCPU }
	procCPU     struct{ *fakeCPU }
	fileProcCPU struct{ *fakeCPU }
)

func (fileCPU) Statx(int, detcore.StatReq) (detcore.StatxBuf, string, error) {
	return detcore.StatxBuf{}, "", nil
}
func (fileCPU) OpenDir(int, int) (detcore.DirHandle, error) { return nil, nil }
func (procCPU) FdPath(int, int) (string, error)             { return "", nil }
func (procCPU) ReadFd(int, int) ([]byte, int64, error)      { return nil, 0, nil }
func (procCPU) SeekFd(int, int, int64) error                { return nil }
func (fileProcCPU) Statx(int, detcore.StatReq) (detcore.StatxBuf, string, error) {
	return detcore.StatxBuf{}, "", nil
}
func (fileProcCPU) OpenDir(int, int) (detcore.DirHandle, error) { return nil, nil }
func (fileProcCPU) FdPath(int, int) (string, error)             { return "", nil }
func (fileProcCPU) ReadFd(int, int) ([]byte, int64, error)      { return nil, 0, nil }
func (fileProcCPU) SeekFd(int, int, int64) error                { return nil }

func TestWrapForwardsOptionalInterfaces(t *testing.T) {
	f := newFakeCPU(0x1000, 0x90)
	cases := []struct {
		name       string
		inner      detcore.Tracer
		file, proc bool
	}{
		{"none", f, false, false},
		{"file", fileCPU{f}, true, false},
		{"proc", procCPU{f}, false, true},
		{"both", fileProcCPU{f}, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var intr atomic.Bool
			l := newLayer(&intr, new(atomic.Bool))
			tr := l.wrap(c.inner)
			_, file := tr.(detcore.FileTracer)
			_, proc := tr.(detcore.ProcTracer)
			if file != c.file || proc != c.proc {
				t.Errorf("FileTracer %v, ProcTracer %v; want %v, %v", file, proc, c.file, c.proc)
			}
			if l.dr == nil {
				t.Error("the layer did not find the debug registers")
			}
		})
	}
}

func TestKilledLayerLetsTheEngineDrain(t *testing.T) {
	f := newFakeCPU(0x1000, 0x90)
	h := newHarness(t, f)
	h.l.kill()
	ready, err := h.tr.Poll([]detcore.FdWait{{Tid: 1, Fd: 0}, {Tid: 1, Fd: 1}}, time.Hour)
	if err != nil || !slices.Equal(ready, []bool{true, true}) {
		t.Errorf("Poll = %v, %v; want all ready", ready, err)
	}
	if own, _, blocked, err := h.tr.Signals(1); err != nil || own != 1<<(abi.SIGKILL-1) || blocked != 0 {
		t.Errorf("Signals = %#x, blocked %#x, %v; want SIGKILL pending", own, blocked, err)
	}
}

func TestPreemptRefusedWhileDebugging(t *testing.T) {
	f := newFakeCPU(0x1000, 0x90)
	h := newHarness(t, f)
	if err := h.tr.Preempt(1); err != nil {
		t.Errorf("Preempt with no debugging: %v", err)
	}
	h.l.setGoal(goal{stepTid: 1, stepN: 1})
	if err := h.tr.Preempt(1); err == nil {
		t.Error("Preempt while stepping succeeded")
	}
	h.l.setGoal(goal{})
	h.l.activity.Add(1)
	if err := h.tr.Preempt(1); err == nil {
		t.Error("Preempt right after a swallowed stop succeeded")
	}
	if err := h.tr.Preempt(1); err != nil {
		t.Errorf("Preempt after a quiet period: %v", err)
	}
}

func TestInterruptAndEvents(t *testing.T) {
	f := newFakeCPU(0x1000, 0x90, 0x0f, 0x05, 0xf4)
	f.setIntercepted(0x1001)
	h := newHarness(t, f)
	h.intr.Store(true)
	if st := h.resume(1, detcore.ResumeCont); st.Kind != detcore.StopSeccomp {
		t.Fatalf("engine saw %+v", st)
	}
	h.l.onEvent(0) // the interrupt was served: no pause
	h.intr.Store(true)
	h.l.onEvent(1)
	h.l.setGoal(goal{toEvent: true, event: 2})
	h.l.onEvent(2)
	want := []Stop{
		{Reason: ReasonInterrupt, Tid: 1},
		{Reason: ReasonInterrupt, Tid: 1, Event: 1},
		{Reason: ReasonEvent, Tid: 1, Event: 2},
	}
	if !reflect.DeepEqual(h.stops, want) {
		t.Errorf("pauses %+v, want %+v", h.stops, want)
	}
	if h.l.event != 3 || h.l.boundary {
		t.Errorf("after event 2: event %d, boundary %v; want 3, false", h.l.event, h.l.boundary)
	}
}

func TestSignalStop(t *testing.T) {
	// nop nop exit
	f := newFakeCPU(0x1000, 0x90, 0x90, 0xf4)
	h := newHarness(t, f)
	// The engine delivers SIGSEGV as the recording did: with a goal that
	// breaks, the debugger sees it first, and the signal still goes in.
	h.signals.Store(true)
	h.l.setGoal(goal{breaks: true})
	mark := f.logLen()
	if err := h.tr.Resume(1, detcore.ResumeCont, abi.SIGSEGV); err != nil {
		t.Fatal(err)
	}
	want := []Stop{{Reason: ReasonSignal, Tid: 1, Sig: abi.SIGSEGV}}
	if !reflect.DeepEqual(h.stops, want) {
		t.Errorf("stops %+v, want %+v", h.stops, want)
	}
	if got := f.logSince(mark); got != "1:cont" {
		t.Errorf("tracer calls %q, want one resume", got)
	}
	// Running to an event, signals go in unseen.
	h.stops = nil
	f.addThread(2, 0x1000)
	h.l.setGoal(goal{toEvent: true, event: 99})
	if err := h.tr.Resume(2, detcore.ResumeCont, abi.SIGSEGV); err != nil || len(h.stops) != 0 {
		t.Errorf("Resume: %v, pauses %+v; want no pause", err, h.stops)
	}
}

func TestWatchDR7(t *testing.T) {
	cases := []struct {
		w    watch
		slot int
		want uint64
	}{
		{watch{on: true, addr: 0x1000, size: 4, kind: WatchWrite}, 0, 1 | 1<<16 | 3<<18},
		{watch{on: true, addr: 0x1000, size: 8, kind: WatchReadWrite}, 1, 1<<2 | 3<<20 | 2<<22},
		// An instruction breakpoint: RW 00 and LEN 00 (Intel SDM 18.2.4).
		{watch{on: true, addr: 0x1001, size: 1, kind: WatchExec}, 3, 1 << 6},
	}
	for _, c := range cases {
		if got := c.w.dr7(c.slot); got != c.want {
			t.Errorf("%+v in slot %d: DR7 bits %#x, want %#x", c.w, c.slot, got, c.want)
		}
	}
	if err := checkWatch(0x1001, 2, WatchExec); err == nil {
		t.Error("an instruction breakpoint of size 2 was accepted")
	}
	if err := checkWatch(0x1001, 1, WatchExec); err != nil {
		t.Errorf("an instruction breakpoint at an odd address: %v", err)
	}
}

// TestKick: an Interrupt that waits for a computing thread sends it a
// SIGSTOP of the layer's own (a kick) only while it runs; the engine
// never sees that stop, nor the signal pending; and one SIGSTOP on its
// way serves both the kick and the engine's watchdog, whose stop the
// engine then gets.
func TestKick(t *testing.T) {
	// syscall (intercepted), exit
	f := newFakeCPU(0x1000, 0x0f, 0x05, 0xf4)
	f.setIntercepted(0x1000)
	h := newHarness(t, f)
	h.l.kick()
	if f.preempts != 0 {
		t.Fatal("kicked with no thread running")
	}
	h.l.running.Store(1)
	h.l.kick()
	if f.preempts != 0 {
		t.Fatal("kicked a thread that sleeps in the kernel (state S)")
	}
	f.state = 'R'
	h.l.kick()
	h.l.kick()
	if f.preempts != 1 || !h.l.k.ours[1] {
		t.Fatalf("two kicks of a running thread sent %d SIGSTOPs (ours %v); want 1", f.preempts, h.l.k.ours)
	}
	f.pending = 1<<(abi.SIGSTOP-1) | 1<<(abi.SIGUSR1-1)
	if own, _, _, _ := h.tr.Signals(1); own != 1<<(abi.SIGUSR1-1) {
		t.Errorf("Signals with a kick on its way: %#x; want SIGUSR1 alone", own)
	}
	f.pending = 0
	// The kick lands as the thread runs: the Interrupt is served there,
	// and the thread goes on to its syscall, which is all the engine sees.
	h.intr.Store(true)
	f.threads[1].stopNext = true
	mark := f.logLen()
	if st := h.resume(1, detcore.ResumeCont); st.Kind != detcore.StopSeccomp {
		t.Fatalf("engine saw %+v, want the syscall", st)
	}
	if want := []Stop{{Reason: ReasonInterrupt, Tid: 1}}; !reflect.DeepEqual(h.stops, want) {
		t.Errorf("pauses %+v, want %+v", h.stops, want)
	}
	if got := f.logSince(mark); got != "1:cont 1:cont" {
		t.Errorf("tracer calls %q, want the engine's resume and the layer's", got)
	}
	// The watchdog asks while a kick is on its way: no second SIGSTOP,
	// and the one stop goes to the engine.
	h.l.running.Store(1)
	h.l.kick()
	h.l.seen.Store(h.l.activity.Load()) // the debugger has been quiet since
	if err := h.tr.Preempt(1); err != nil {
		t.Fatalf("Preempt with a kick on its way: %v", err)
	}
	if f.preempts != 2 {
		t.Errorf("%d SIGSTOPs sent; want 2 (one kick each time, none for the watchdog)", f.preempts)
	}
	f.threads[1].stopNext = true
	if st := h.resume(1, detcore.ResumeSyscall); st.Kind != detcore.StopSignal || st.Sig != abi.SIGSTOP {
		t.Errorf("engine saw %+v, want its SIGSTOP", st)
	}
	if len(h.l.k.ours)+len(h.l.k.engine) != 0 {
		t.Errorf("SIGSTOPs still on their way after the stop: ours %v, engine's %v", h.l.k.ours, h.l.k.engine)
	}
}
