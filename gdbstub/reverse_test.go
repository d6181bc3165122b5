package gdbstub

import (
	"fmt"
	"strings"
	"testing"
)

// reverseTarget is a fakeTarget that runs backwards: ReverseContinue and
// ReverseStep return the next of back (or, when it is empty, the start of
// the recording), and it keeps checkpoints as the event they were made at.
type reverseTarget struct {
	*fakeTarget
	back   []Stop
	ckpts  map[int]uint64
	nextID int
}

func newReverseTarget() *reverseTarget {
	return &reverseTarget{fakeTarget: newFakeTarget(), ckpts: map[int]uint64{}, nextID: 1}
}

func (r *reverseTarget) backStop() (Stop, error) {
	if len(r.back) == 0 {
		r.last = Stop{Kind: StopStart, Tid: 0x1234, Begin: true}
		r.when = 0
		return r.last, ErrNoHistory
	}
	st := r.back[0]
	r.back = r.back[1:]
	r.last = st
	r.when--
	return st, nil
}

func (r *reverseTarget) ReverseContinue() (Stop, error) {
	r.call("reverse-continue")
	return r.backStop()
}

func (r *reverseTarget) ReverseStep(tid int) (Stop, error) {
	r.call("reverse-step %#x", tid)
	return r.backStop()
}

func (r *reverseTarget) Checkpoint(where string) (int, error) {
	id := r.nextID
	r.nextID++
	r.ckpts[id] = r.when
	return id, nil
}

func (r *reverseTarget) RestartCheckpoint(id int) (Stop, error) {
	ev, ok := r.ckpts[id]
	if !ok {
		return r.last, fmt.Errorf("no checkpoint %d", id)
	}
	r.when = ev
	r.last = Stop{Kind: StopStart, Tid: 0x1240}
	return r.last, nil
}

func (r *reverseTarget) DeleteCheckpoint(id int) error {
	if _, ok := r.ckpts[id]; !ok {
		return fmt.Errorf("no checkpoint %d", id)
	}
	delete(r.ckpts, id)
	return nil
}

func (r *reverseTarget) Checkpoints() []Checkpoint {
	var out []Checkpoint
	for id := 1; id < r.nextID; id++ {
		if ev, ok := r.ckpts[id]; ok {
			out = append(out, Checkpoint{ID: id, When: ev, Where: "here"})
		}
	}
	return out
}

// notAdvertised checks that a target without an optional interface does
// not advertise feature in qSupported, and answers each of pkts with the
// empty reply (unsupported).
func notAdvertised(t *testing.T, feature string, pkts ...string) {
	t.Helper()
	plain := startServe(t, newFakeTarget(), Options{})
	if got := plain.ask("qSupported:swbreak+"); strings.Contains(got, feature) {
		t.Errorf("a target without the interface advertises %q", got)
	}
	for _, p := range pkts {
		plain.expect(p, "")
	}
}

// TestReverseFeatures: the reverse packets are advertised only by a
// target that can run backwards; another answers bc and bs with the empty
// reply (unsupported), as gdb expects.
func TestReverseFeatures(t *testing.T) {
	notAdvertised(t, "Reverse", "bc", "bs")

	rt := newReverseTarget()
	c := startServeTarget(t, rt, Options{})
	if got := c.ask("qSupported:swbreak+"); !strings.Contains(got, ";ReverseContinue+;ReverseStep+") {
		t.Errorf("qSupported: got %q, want ReverseContinue+;ReverseStep+", got)
	}
}

// TestReverseStops: bc and bs report the stops going backwards as
// forwards (a watchpoint with its address, a step of the Hc thread), and
// the start of the recording as rr does, T00 with replaylog:begin, so that
// gdb says "No more reverse-execution history.".
func TestReverseStops(t *testing.T) {
	rt := newReverseTarget()
	rt.when = 10
	rt.back = []Stop{
		{Kind: StopWatch, Tid: 0x1240, Addr: 0x404028, Watch: WatchWrite},
		{Kind: StopStep, Tid: 0x1240},
	}
	c := startServeTarget(t, rt, Options{})
	c.expect("bc", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:1010400000000000;thread:1240;watch:404028;")
	c.expect("Hc1240", "OK")
	c.expect("bs", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:1010400000000000;thread:1240;")
	c.expect("bs", "T0006:1000fe7f00000000;07:0000fe7f00000000;10:0010400000000000;thread:1234;replaylog:begin;")
	// At the start, again: still the beginning, never an error.
	c.expect("bc", "T0006:1000fe7f00000000;07:0000fe7f00000000;10:0010400000000000;thread:1234;replaylog:begin;")
	rt.mu.Lock()
	defer rt.mu.Unlock()
	want := []string{"reverse-continue", "reverse-step 0x1240", "reverse-step 0x1240", "reverse-continue"}
	if strings.Join(rt.calls, ",") != strings.Join(want, ",") {
		t.Errorf("calls %q, want %q", rt.calls, want)
	}
}

// TestReverseAfterExit: once the process has exited, going back brings it
// back (gdb's reverse-continue from the end of a recording).
func TestReverseAfterExit(t *testing.T) {
	rt := newReverseTarget()
	rt.stops = []Stop{{Kind: StopExited, ExitCode: 3}}
	rt.back = []Stop{{Kind: StopBreakpoint, Tid: 0x1234, Addr: 0x401000}}
	c := startServeTarget(t, rt, Options{})
	c.expect("c", "W03")
	c.expect("bc", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:0010400000000000;thread:1234;swbreak:;")
	c.expect("?", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:0010400000000000;thread:1234;swbreak:;")
}

// TestCheckpointMonitor: monitor checkpoint, info checkpoints, restart N
// (also Delve's "c1") and delete checkpoint N, with usage errors.
func TestCheckpointMonitor(t *testing.T) {
	rt := newReverseTarget()
	rt.when = 5
	c := startServeTarget(t, rt, Options{})
	mon := func(cmd, wantOut, wantFinal string) {
		t.Helper()
		c.expect("qRcmd,"+hexs(cmd), "O"+hexs(wantOut))
		if got := c.recv(); got != wantFinal {
			t.Errorf("monitor %s: final reply %q, want %q", cmd, got, wantFinal)
		}
	}
	mon("checkpoint", "Checkpoint 1 at event 5.\n", "OK")
	rt.when = 9
	mon("info checkpoints", "ID\tWhen\tWhere\n1\t5\there\n", "OK")
	mon("restart c1", "At checkpoint 1, event 5.\n", "OK")
	mon("restart 7", "restart 7: no checkpoint 7\n", "E01")
	mon("restart x", "\"x\" is not a checkpoint number\n", "E01")
	mon("delete checkpoint 1", "Deleted checkpoint 1.\n", "OK")
	mon("info checkpoints", "No checkpoints.\n", "OK")
	mon("delete 1", "usage: delete checkpoint N\n", "E01")

	plain := startServe(t, newFakeTarget(), Options{})
	plain.expect("qRcmd,"+hexs("checkpoint"), "O"+hexs("this target has no checkpoints\n"))
	if got := plain.recv(); got != "E01" {
		t.Errorf("checkpoint on a forward-only target: final reply %q", got)
	}
}

// TestDelveCheckpoints: Delve's rr dialect (Delve v1.27, gdbserial):
// checkpoint, checkpoints and clear-checkpoint as qRRCmd in plain words
// with the thread -1 and hex arguments, answered in rr's words (the id
// after "Checkpoint ", a tab-separated table under a header); "restart
// c1" as vRun;;HEX("c1"), after which Delve resumes once, backwards when
// it last went backwards: that resume only reports where the restart
// went.
func TestDelveCheckpoints(t *testing.T) {
	rt := newReverseTarget()
	rt.when = 5
	c := startServeTarget(t, rt, Options{})
	c.expect("qRRCmd:checkpoint:-1:"+hexs("main.main() main.go:7"), hexs("Checkpoint 1 at event 5.\n"))
	rt.when = 9
	c.expect("qRRCmd:info checkpoints:-1", hexs("ID\tWhen\tWhere\n1\t5\there\n"))
	c.expect("vRun;;"+hexs("c1"), "T0506:1000fe7f00000000;07:0000fe7f00000000;10:1010400000000000;thread:1240;")
	if rt.when != 5 {
		t.Errorf("restart c1: at event %d, want 5", rt.when)
	}
	c.expect("Hcp-1.-1", "OK")
	c.expect("bc", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:1010400000000000;thread:1240;")
	c.expect("vRun;;"+hexs("c7"), "E01")
	c.expect("qRRCmd:delete checkpoint:-1:"+hexs("1"), hexs("Deleted checkpoint 1.\n"))
	c.expect("qRRCmd:info checkpoints:-1", hexs("No checkpoints.\n"))
	// The old form, every field in hex.
	c.expect("qRRCmd:"+hexs("checkpoint")+":"+hexs("there"), hexs("Checkpoint 2 at event 5.\n"))
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, call := range rt.calls {
		if strings.HasPrefix(call, "reverse") || call == "continue" {
			t.Errorf("the resume after vRun ran the target (%s)", call)
		}
	}
}

// endTarget is a reverseTarget that stops at the end when asked to: its
// first forward command after StopAtEnd(true) stops there (End), the next
// one ends the process.
type endTarget struct {
	*reverseTarget
	asked []bool
	atEnd bool
}

func (e *endTarget) StopAtEnd(on bool) { e.asked = append(e.asked, on) }

func (e *endTarget) Continue() (Stop, error) {
	if len(e.asked) > 0 && e.asked[len(e.asked)-1] && !e.atEnd {
		e.atEnd = true
		e.last = Stop{Kind: StopStart, Tid: 0x1234, End: true}
		return e.last, nil
	}
	return e.reverseTarget.Continue()
}

// TestStopAtEnd: gdb (whose qSupported offers qRelocInsn+) has the target
// stop at the end before the exit, replaylog:end, so that it can go back;
// lldb's and Delve's handshakes turn that off.
func TestStopAtEnd(t *testing.T) {
	for _, tc := range []struct {
		client, features string
		want             bool
	}{
		{"gdb 13", "multiprocess+;swbreak+;hwbreak+;qRelocInsn+;fork-events+;vfork-events+;exec-events+;vContSupported+;QThreadEvents+;no-resumed+;memory-tagging+;xmlRegisters=i386", true},
		{"lldb", "xmlRegisters=i386,arm,mips,arc;multiprocess+;fork-events+;vfork-events+", false},
		{"Delve", "swbreak+;hwbreak+;no-resumed+;xmlRegisters=i386", false},
	} {
		t.Run(tc.client, func(t *testing.T) {
			et := &endTarget{reverseTarget: newReverseTarget()}
			et.stops = []Stop{{Kind: StopExited, ExitCode: 3}}
			et.back = []Stop{{Kind: StopBreakpoint, Tid: 0x1234, Addr: 0x401000}}
			c := startServeTarget(t, et, Options{})
			c.ask("qSupported:" + tc.features)
			if len(et.asked) != 1 || et.asked[0] != tc.want {
				t.Fatalf("StopAtEnd calls %v, want [%v]", et.asked, tc.want)
			}
			thread, exit := "1234", "W03"
			if strings.Contains(tc.features, "multiprocess+") {
				thread, exit = "p1234.1234", "W03;process:1234"
			}
			if !tc.want {
				c.expect("c", exit)
				return
			}
			end := "T0006:1000fe7f00000000;07:0000fe7f00000000;10:0010400000000000;thread:" + thread + ";replaylog:end;"
			c.expect("c", end)
			c.expect("?", end)
			c.expect("bc", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:0010400000000000;thread:"+thread+";swbreak:;")
			c.expect("c", exit)
		})
	}
}
