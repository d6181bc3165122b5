package replay

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/trace"
)

// writeTrace writes events to a new trace and opens it for reading.
// Events whose memory write data is "BLOB:..." store the rest as a blob.
func writeTrace(t *testing.T, evs []trace.Event, complete bool) *trace.Reader {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t")
	w, err := trace.Create(dir, trace.Header{Argv: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		for j, m := range evs[i].Mem {
			if rest, ok := strings.CutPrefix(string(m.Data), "BLOB:"); ok {
				id, err := w.PutBlob(strings.NewReader(rest))
				if err != nil {
					t.Fatal(err)
				}
				evs[i].Mem[j] = trace.MemWrite{Addr: m.Addr, Blob: id}
			}
		}
	}
	for i := range evs {
		if err := w.Append(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if complete {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	} else if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func enter(tid, nr int, args [6]uint64) trace.Event {
	return trace.Event{Kind: trace.KindSyscall, Tid: int32(tid), Sysno: int32(nr), Digest: recorder.ArgDigest(nr, args),
		Mem: []trace.MemWrite{{Data: recorder.EncodeArgs(args)}}}
}

func TestPlayerFollowsTheRecording(t *testing.T) {
	read := [6]uint64{0, 0x1000, 64}
	mmap := [6]uint64{0, 0x200000, 1, 2, 3, 0}
	mkdir := [6]uint64{0x2000, 0o755}
	evs := []trace.Event{
		{Kind: trace.KindFile, File: &trace.File{Path: "/x", Mode: trace.ModeDir | 0o755}},
		enter(2, abi.SYS_READ, read),
		{Kind: trace.KindSyscall, External: true, Tid: 2, Sysno: recorder.QueryFdKind * -1, Digest: 0, Result: int64(detcore.FdPollable)},
		{Kind: trace.KindSyscall, External: true, Tid: 2, Sysno: abi.SYS_READ, Result: 3, Mem: []trace.MemWrite{{Addr: 0x1000, Data: []byte("abc")}}},
		enter(2, abi.SYS_MMAP, mmap),
		{Kind: trace.KindSyscall, External: true, Tid: 2, Sysno: abi.SYS_MMAP, Digest: recorder.ResultPlace, Result: 0x7f0000000000},
		enter(2, abi.SYS_MKDIR, mkdir),
		{Kind: trace.KindSyscall, External: true, Tid: 2, Sysno: abi.SYS_MKDIR, Digest: recorder.ResultForce, Result: -17},
		{Kind: trace.KindExit, Tid: 2, Status: 3 << 8, Group: true},
	}
	var events []uint64
	p := newPlayer(writeTrace(t, evs, true), func(n uint64) { events = append(events, n) })
	o := &oracle{p: p}

	if err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_READ, Args: read}); err != nil {
		t.Fatal(err)
	}
	if k := o.FdKind(7, 0); k != detcore.FdPollable {
		t.Errorf("FdKind answers %v", k)
	}
	out := p.Native(&detcore.Call{Tid: 7, Vtid: 2, Nr: abi.SYS_READ, Args: read})
	if !out.Emulate || out.Result != 3 || len(out.Mem) != 1 || string(out.Mem[0].Data) != "abc" {
		t.Errorf("read outcome %+v; want the recorded 3 bytes", out)
	}

	if err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_MMAP, Args: mmap}); err != nil {
		t.Fatal(err)
	}
	out = p.Native(&detcore.Call{Tid: 7, Vtid: 2, Nr: abi.SYS_MMAP, Args: mmap})
	if !out.Exit || out.Args == nil || out.Args[0] != 0x7f0000000000 || out.Args[3]&abi.MAP_FIXED_NOREPLACE == 0 {
		t.Errorf("mmap outcome %+v; want it placed at the recorded address", out)
	}
	if _, _, err := p.Exit(&detcore.Call{Tid: 7, Vtid: 2, Nr: abi.SYS_MMAP, Result: 0x7f0000001000}); err == nil {
		t.Error("an mmap placed elsewhere is not a divergence")
	}
	p.err = nil // carry on past that check

	if err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_MKDIR, Args: mkdir}); err != nil {
		t.Fatal(err)
	}
	if out := p.Native(&detcore.Call{Tid: 7, Vtid: 2, Nr: abi.SYS_MKDIR, Args: mkdir}); !out.Exit || out.Emulate {
		t.Errorf("mkdir outcome %+v; want it run", out)
	}
	if force, res, err := p.Exit(&detcore.Call{Tid: 7, Vtid: 2, Nr: abi.SYS_MKDIR, Result: 0}); !force || res != -17 || err != nil {
		t.Errorf("mkdir exit: force %v result %d err %v; want the recorded -17", force, res, err)
	}
	if err := p.finish(detcore.Result{ExitCode: 3}); err != nil {
		t.Errorf("finish: %v", err)
	}
	if err := p.finish(detcore.Result{ExitCode: 4}); err == nil {
		t.Error("another exit status is not a divergence")
	}
	if len(events) != 3 || events[0] != 1 {
		t.Errorf("event boundaries %v; want 3, the first at event 1 (after the file)", events)
	}
}

func TestPlayerDivergence(t *testing.T) {
	args := [6]uint64{1, 0x1000, 5}
	p := newPlayer(writeTrace(t, []trace.Event{enter(2, abi.SYS_WRITE, args)}, true), nil)
	err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_OPENAT, Args: [6]uint64{0xffffff9c, 0x2000}})
	var de *DivergenceError
	if !errors.As(err, &de) || de.Event != 0 || de.Tid != 2 {
		t.Fatalf("Enter of another syscall: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"event 0", "thread 2", "expected write(0x1, 0x1000, 0x5)", "got openat(-100, 0x2000"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_WRITE, Args: args}); err == nil {
		t.Error("the run goes on after a divergence")
	}

	// Same syscall, other arguments.
	p = newPlayer(writeTrace(t, []trace.Event{enter(2, abi.SYS_WRITE, args)}, true), nil)
	other := args
	other[2] = 6
	if err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_WRITE, Args: other}); err == nil ||
		!strings.Contains(err.Error(), "expected write(0x1, 0x1000, 0x5) got write(0x1, 0x1000, 0x6)") {
		t.Errorf("other arguments: %v", err)
	}

	// The same question of the host's about another descriptor: said so,
	// with both (it said "expected the host's answer to a fd-kind
	// question got the host's answer to a fd-kind question").
	p = newPlayer(writeTrace(t, []trace.Event{{Kind: trace.KindSyscall, External: true, Sysno: -recorder.QueryFdKind, Digest: 4}}, true), nil)
	if _, ok := p.answer(recorder.QueryFdKind, 5); ok || p.err == nil ||
		!strings.Contains(p.err.Error(), "a fd-kind question about descriptor 5, where the recording asked about descriptor 4") {
		t.Errorf("another descriptor's question: %v", p.err)
	}
}

func TestPlayerTruncated(t *testing.T) {
	args := [6]uint64{1, 0x1000, 5}
	p := newPlayer(writeTrace(t, []trace.Event{enter(2, abi.SYS_WRITE, args)}, false), nil)
	if err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_WRITE, Args: args}); err != nil {
		t.Fatal(err)
	}
	err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_WRITE, Args: args})
	var te *TruncatedError
	if !errors.As(err, &te) || te.Event != 1 {
		t.Errorf("reading past a trace without an index: %v; want a TruncatedError at event 1", err)
	}
}

// TestPlayerBlobOutput: a large recorded output stored as a blob is fed
// back like a small one.
func TestPlayerBlobOutput(t *testing.T) {
	read := [6]uint64{4, 0x1000, 1 << 20}
	big := strings.Repeat("x", 300<<10)
	evs := []trace.Event{
		enter(2, abi.SYS_READ, read),
		{Kind: trace.KindSyscall, External: true, Tid: 2, Sysno: abi.SYS_READ, Result: int64(len(big)), Mem: []trace.MemWrite{{Addr: 0x1000, Data: []byte("BLOB:" + big)}}},
	}
	p := newPlayer(writeTrace(t, evs, true), nil)
	if err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_READ, Args: read}); err != nil {
		t.Fatal(err)
	}
	out := p.Native(&detcore.Call{Tid: 7, Vtid: 2, Nr: abi.SYS_READ, Args: read})
	if !out.Emulate || len(out.Mem) != 1 || string(out.Mem[0].Data) != big || out.Mem[0].Addr != 0x1000 {
		t.Errorf("read outcome: emulate %v, result %d, %d writes; want the blob's %d bytes at 0x1000", out.Emulate, out.Result, len(out.Mem), len(big))
	}
}

// TestPlayerKilledFromOutside: past the end of a recording whose guest
// was killed by SIGKILL, the run stops with ErrKilled, not a divergence.
func TestPlayerKilledFromOutside(t *testing.T) {
	args := [6]uint64{1, 0x1000, 5}
	evs := []trace.Event{enter(2, abi.SYS_WRITE, args), {Kind: trace.KindExit, Tid: 2, Status: 9, Group: true}}
	p := newPlayer(writeTrace(t, evs, true), nil)
	if err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_WRITE, Args: args}); err != nil {
		t.Fatal(err)
	}
	if out := p.Native(&detcore.Call{Vtid: 2, Nr: abi.SYS_WRITE, Args: args}); !out.Emulate {
		t.Errorf("a call the recording never finished runs: %+v", out)
	}
	if err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_READ}); !errors.Is(err, ErrKilled) {
		t.Errorf("past the end: %v, want ErrKilled", err)
	}

	// Ending normally, the same run past the end diverges.
	evs[1].Status = 0
	p = newPlayer(writeTrace(t, evs, true), nil)
	p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_WRITE, Args: args})
	var de *DivergenceError
	if err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_READ}); !errors.As(err, &de) {
		t.Errorf("past the end of a normal recording: %v, want a divergence", err)
	}
}

// TestPlayerPreemptedAndTerminal: a kept write that the watchdog's stop
// interrupted is replaced by a call that does nothing, with the stop on
// its way and the restart code forced (replay waited for ever for a
// signal); the write made again sends the signals its ^C sent through
// the terminal, and writes no memory at address 0.
func TestPlayerPreemptedAndTerminal(t *testing.T) {
	args := [6]uint64{3, 0x1000, 1}
	evs := []trace.Event{
		enter(2, abi.SYS_WRITE, args),
		{Kind: trace.KindSyscall, External: true, Tid: 2, Sysno: abi.SYS_WRITE, Digest: recorder.ResultPreempted, Result: -abi.ERESTARTSYS,
			Mem: []trace.MemWrite{{Data: []byte{1}}}},
		enter(2, abi.SYS_WRITE, args),
		{Kind: trace.KindSyscall, External: true, Tid: 2, Sysno: abi.SYS_WRITE, Result: 1,
			Mem: []trace.MemWrite{recorder.EncodeTermSignals(43, []int{abi.SIGINT, abi.SIGQUIT})}},
	}
	p := newPlayer(writeTrace(t, evs, true), nil)
	call := &detcore.Call{Tid: 7, Vtid: 2, Nr: abi.SYS_WRITE, Args: args}
	if err := p.Enter(call); err != nil {
		t.Fatal(err)
	}
	out := p.Native(call)
	if !out.Exit || out.Nr != abi.SYS_GETPID || out.Args == nil || !out.Preempt || !out.PreemptSpin {
		t.Errorf("preempted write: outcome %+v; want a getpid in its place, with the watchdog's stop for a spin examination", out)
	}
	if force, res, err := p.Exit(&detcore.Call{Tid: 7, Vtid: 2, Nr: abi.SYS_WRITE, Result: 2}); !force || res != -abi.ERESTARTSYS || err != nil {
		t.Errorf("preempted write's exit: force %v result %d err %v; want ERESTARTSYS", force, res, err)
	}
	if err := p.Enter(call); err != nil {
		t.Fatal(err)
	}
	out = p.Native(call)
	want := []detcore.GroupSignal{{Group: 43, Sig: abi.SIGINT}, {Group: 43, Sig: abi.SIGQUIT}}
	if !out.Emulate || out.Result != 1 || len(out.Mem) != 0 || !reflect.DeepEqual(out.GroupSignals, want) {
		t.Errorf("write of ^C and ^\\ to a pty master: outcome %+v; want 1, no memory, and signals %v", out, want)
	}
}

// TestPlayerWatchdogPreemption: a recorded preemption is due for its own
// thread only, after a share of its CPU time, and is taken when the
// replay's watchdog makes it; a preemption the recording did not make, or
// a call where the recording preempted, diverges, naming both.
func TestPlayerWatchdogPreemption(t *testing.T) {
	args := [6]uint64{1, 0x1000, 5}
	evs := []trace.Event{{Kind: trace.KindPreempt, Tid: 3, Ran: int64(2 * time.Second)}, enter(2, abi.SYS_WRITE, args)}
	p := newPlayer(writeTrace(t, evs, true), nil)
	if _, due := p.PreemptDue(2); due {
		t.Error("thread 2's preemption is due: the recording preempted thread 3")
	}
	if d, due := p.PreemptDue(3); !due || d <= 0 || d > 2*time.Second {
		t.Errorf("thread 3's preemption due after %v, %v; want at most the recording's 2s", d, due)
	}
	if ran, err := p.Preempted(3, time.Second); err != nil || ran != 2*time.Second {
		t.Fatalf("the recorded preemption: ran %v, %v; want the recording's 2s", ran, err)
	}
	if _, due := p.PreemptDue(3); due {
		t.Error("the preemption is due again once taken")
	}
	_, err := p.Preempted(2, time.Second)
	if err == nil || !strings.Contains(err.Error(), "thread 2: the watchdog preempted it where the recording has write(") {
		t.Errorf("a preemption the recording did not make: %v", err)
	}

	p = newPlayer(writeTrace(t, evs, true), nil)
	err = p.Enter(&detcore.Call{Vtid: 3, Nr: abi.SYS_WRITE, Args: args})
	if err == nil || !strings.Contains(err.Error(), "expected the watchdog's preemption of thread 3 got write(") {
		t.Errorf("a call where the recording preempted: %v", err)
	}
}

// TestPlayerBytesWritten: a write whose arguments are the recording's but
// whose bytes are not diverges, naming the call (every replayable trace
// keeps the digest of the bytes each write writes).
func TestPlayerBytesWritten(t *testing.T) {
	args := [6]uint64{1, 0x1000, 5}
	rec := enter(2, abi.SYS_WRITE, args)
	rec.Result = 0x1234
	for _, c := range []struct {
		bytes uint32
		want  string
	}{
		{0x1234, ""},
		{0x4321, "thread 2: write(0x1, 0x1000, 0x5) writes other bytes than the recording's"},
	} {
		p := newPlayer(writeTrace(t, []trace.Event{rec}, true), nil)
		err := p.Enter(&detcore.Call{Vtid: 2, Nr: abi.SYS_WRITE, Args: args, Written: c.bytes, HasWritten: true})
		if got := fmt.Sprint(err); c.want == "" && err != nil || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("bytes %#x: %v, want %q", c.bytes, err, c.want)
		}
	}
}
