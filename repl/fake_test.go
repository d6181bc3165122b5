package repl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// fakeSession is a recording in memory: events (every syscall event is a
// boundary), two threads, a little memory, and code stops that happen when
// a breakpoint is set at their address. Going back replays, as the real
// one does: every run makes the same stops.
type fakeSession struct {
	events []Event
	// hits are the code stops of a run, in order: a breakpoint hit
	// happens only if a breakpoint is set at its address.
	hits []Stop
	bps  map[uint64]bool
	wps  map[int]uint64
	// at is the current stop; hit the number of hits consumed this run.
	at  Stop
	hit int
	mem map[uint64]byte
	// calls logs the Session calls that move the replay.
	calls []string
	// results are the calls' results the replay learns.
	results map[uint64]int64
}

func newFakeSession() *fakeSession {
	f := &fakeSession{bps: map[uint64]bool{}, wps: map[int]uint64{}, mem: map[uint64]byte{}}
	nrs := []int{0, 1, 1, 257, 0, 1, 231} // read write write openat read write exit_group
	tids := []int{2, 2, 3, 3, 2, 3, 2}
	for i, nr := range nrs {
		f.events = append(f.events, Event{N: uint64(i), Kind: EventSyscall, Tid: tids[i], Pid: 2, Boundary: true, Nr: nr})
		if i == 2 {
			f.events = append(f.events, Event{N: uint64(len(f.events)), Kind: EventHost, Tid: 3, Pid: 2, Text: "a host answer"})
		}
	}
	for i := range f.events {
		f.events[i].N = uint64(i)
	}
	// Code stops: 0x401000 hit between events 1 and 2 and twice between
	// 4 and 5; 0x402000 between 5 and 6.
	f.hits = []Stop{
		{Kind: StopBreakpoint, Event: 2, Tid: 2, Addr: 0x401000},
		{Kind: StopBreakpoint, Event: 5, Tid: 3, Addr: 0x401000},
		{Kind: StopBreakpoint, Event: 5, Tid: 3, Addr: 0x401000},
		{Kind: StopBreakpoint, Event: 6, Tid: 2, Addr: 0x402000},
	}
	for i, b := range []byte("hello\x00") {
		f.mem[0x600000+uint64(i)] = b
	}
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], 0x1122334455667788)
	for i, b := range w {
		f.mem[0x600010+uint64(i)] = b
	}
	f.at = Stop{Kind: StopStart, Tid: 2}
	return f
}

func (f *fakeSession) Len() uint64 { return uint64(len(f.events)) }
func (f *fakeSession) Event(n uint64) (Event, error) {
	if n >= f.Len() {
		return Event{}, errors.New("no such event")
	}
	return f.events[n], nil
}
func (f *fakeSession) Where() Stop { return f.at }
func (f *fakeSession) Restart() (Stop, error) {
	f.calls = append(f.calls, "restart")
	f.at, f.hit = Stop{Kind: StopStart, Tid: 2}, 0
	return f.at, nil
}

// boundary returns the stop at boundary n, or the end.
func (f *fakeSession) boundary(n uint64) Stop {
	if n >= f.Len() {
		return Stop{Kind: StopExited, Event: f.Len(), ExitCode: 3}
	}
	return Stop{Kind: StopEvent, Event: n, Tid: f.events[n].Tid}
}

func (f *fakeSession) Goto(n uint64) (Stop, error) {
	f.calls = append(f.calls, fmt.Sprintf("goto %d", n))
	if n < f.at.Event {
		f.Restart()
	}
	for f.hit < len(f.hits) && f.hits[f.hit].Event <= n {
		f.hit++
	}
	f.at = f.boundary(n)
	return f.at, nil
}

func (f *fakeSession) Continue(until uint64) (Stop, error) {
	f.calls = append(f.calls, fmt.Sprintf("continue %d", until))
	for f.hit < len(f.hits) {
		h := f.hits[f.hit]
		if until < f.Len() && h.Event > until {
			break
		}
		f.hit++
		if f.bps[h.Addr] {
			f.at = h
			return h, nil
		}
	}
	f.at = f.boundary(until)
	return f.at, nil
}

func (f *fakeSession) Stepi(tid, n int) (Stop, error) {
	f.calls = append(f.calls, fmt.Sprintf("stepi %d %d", tid, n))
	f.at = Stop{Kind: StopStep, Event: f.at.Event, Tid: tid}
	if f.at.Kind == StopEvent {
		f.at.Event++
	}
	return f.at, nil
}
func (f *fakeSession) Interrupt()       {}
func (f *fakeSession) Progress() uint64 { return f.at.Event }
func (f *fakeSession) Result(n uint64) (int64, bool) {
	v, ok := f.results[n]
	return v, ok
}
func (f *fakeSession) Threads() []Thread {
	if f.at.Kind == StopExited {
		return nil
	}
	return []Thread{{Tid: 2, Pid: 2, Name: "main", State: "ready"}, {Tid: 3, Pid: 2, Name: "worker", State: "blocked in futex"}}
}
func (f *fakeSession) Regs(tid int) (Regs, error) {
	if tid != 2 && tid != 3 {
		return Regs{}, fmt.Errorf("no thread %d", tid)
	}
	return Regs{Rip: 0x401000 + uint64(tid), Rsp: 0x7ffe0000, Rdi: 1, Rsi: 0x600000, Rdx: 5, OrigRax: 1}, nil
}
func (f *fakeSession) ReadMem(tid int, addr uint64, b []byte) (int, error) {
	for i := range b {
		v, ok := f.mem[addr+uint64(i)]
		if !ok {
			return i, fmt.Errorf("unmapped at %#x", addr+uint64(i))
		}
		b[i] = v
	}
	return len(b), nil
}
func (f *fakeSession) Maps(pid int) (string, error) {
	return "00400000-00401000 r-xp 00000000 00:00 0 \n", nil
}
func (f *fakeSession) Fds(pid int) ([]Fd, error) {
	return []Fd{{0, "/dev/null"}, {1, "pipe:[42]"}}, nil
}
func (f *fakeSession) Open(path string) (io.ReaderAt, int64, error) {
	return nil, 0, errors.New("no such file in the fake")
}
func (f *fakeSession) SetBreakpoint(addr uint64) error {
	if addr == 0 {
		return errors.New("no process maps 0x0")
	}
	f.bps[addr] = true
	return nil
}
func (f *fakeSession) ClearBreakpoint(addr uint64) error { delete(f.bps, addr); return nil }
func (f *fakeSession) SetWatchpoint(addr uint64, size int) (int, error) {
	if len(f.wps) == 4 {
		return 0, ErrNoSlot
	}
	id := len(f.wps)
	f.wps[id] = addr
	return id, nil
}
func (f *fakeSession) ClearWatchpoint(id int) error { delete(f.wps, id); return nil }

var _ Session = (*fakeSession)(nil)

// run runs script over a fresh fake and returns the transcript.
func run(t *testing.T, f *fakeSession, script string) string {
	t.Helper()
	var out bytes.Buffer
	r := New(f, &out)
	if err := r.Run(strings.NewReader(script), true); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
