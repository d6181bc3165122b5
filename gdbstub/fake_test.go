package gdbstub

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"
)

func init() { recoverPanics = false }

// fakeTarget is a scripted Target: Continue and Step return the next of
// stops (or block until Interrupt when block is set).
type fakeTarget struct {
	mu      sync.Mutex
	pid     int
	threads []Thread
	regs    map[int]*Registers
	mem     []region
	auxv    []byte
	exe     string
	files   fstest.MapFS
	last    Stop
	stops   []Stop // what Continue and Step return next
	// siCode and siAddr are the si_code and si_addr of a StopSignal's
	// siginfo.
	siCode int32
	siAddr uint64
	when   uint64
	// passed are events a replay does not stop at: Goto goes on to the
	// next.
	passed map[uint64]bool
	bps    map[string]bool
	calls  []string

	block   bool          // Continue blocks until Interrupt
	started chan struct{} // Continue began (when block)
	intr    chan struct{}
}

type region struct {
	addr uint64
	data []byte
}

func newFakeTarget() *fakeTarget {
	ft := &fakeTarget{
		pid:     0x1234,
		threads: []Thread{{ID: 0x1234, Name: "main"}, {ID: 0x1240, Name: "wor<k>er"}},
		regs:    map[int]*Registers{},
		exe:     "/usr/bin/prog",
		files: fstest.MapFS{
			"usr/bin/prog": &fstest.MapFile{Data: []byte("\x7fELF#$}*rest"), Mode: 0o755},
		},
		last:    Stop{Kind: StopStart, Tid: 0x1234},
		bps:     map[string]bool{},
		started: make(chan struct{}, 1),
		intr:    make(chan struct{}, 1),
	}
	for i, th := range ft.threads {
		ft.regs[th.ID] = &Registers{
			Rax: uint64(i), Rbp: 0x7ffe0010, Rsp: 0x7ffe0000, Rip: 0x401000 + uint64(i)*0x10,
			Eflags: 0x246, Cs: 0x33, Ss: 0x2b, FsBase: 0x7f0000001000,
			OrigRax: ^uint64(0),
		}
	}
	ft.mem = []region{{0x401000, []byte{0x55, 0x48, 0x89, 0xe5, '#', '$', '}', '*', 0x90, 0xc3}}}
	var auxv []byte
	for _, kv := range [][2]uint64{{6, 4096}, {atNull, 0}} {
		auxv = binary.LittleEndian.AppendUint64(auxv, kv[0])
		auxv = binary.LittleEndian.AppendUint64(auxv, kv[1])
	}
	ft.auxv = auxv
	return ft
}

func (f *fakeTarget) call(format string, args ...any) {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

func (f *fakeTarget) Pid() int { return f.pid }
func (f *fakeTarget) Threads() ([]Thread, error) {
	if f.last.Kind == StopExited || f.last.Kind == StopKilled {
		return nil, nil
	}
	return f.threads, nil
}
func (f *fakeTarget) Registers(tid int) (*Registers, error) {
	r, ok := f.regs[tid]
	if !ok {
		return nil, fmt.Errorf("no thread %d", tid)
	}
	return r, nil
}
func (f *fakeTarget) ReadMemory(addr uint64, b []byte) (int, error) {
	for _, r := range f.mem {
		if addr >= r.addr && addr < r.addr+uint64(len(r.data)) {
			n := copy(b, r.data[addr-r.addr:])
			if n < len(b) {
				return n, fmt.Errorf("unmapped at %#x", r.addr+uint64(len(r.data)))
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("unmapped at %#x", addr)
}
func (f *fakeTarget) SetBreakpoint(kind BreakKind, addr uint64, size int) error {
	f.call("set %d %#x %d", kind, addr, size)
	if kind == BreakHardware {
		return ErrUnsupported
	}
	if addr == 0 || addr == 0xdead0000 {
		return fmt.Errorf("no memory there")
	}
	f.bps[fmt.Sprint(kind, addr, size)] = true
	return nil
}
func (f *fakeTarget) ClearBreakpoint(kind BreakKind, addr uint64, size int) error {
	f.call("clear %d %#x %d", kind, addr, size)
	delete(f.bps, fmt.Sprint(kind, addr, size))
	return nil
}
func (f *fakeTarget) nextStop() Stop {
	st := Stop{Kind: StopStep, Tid: f.last.Tid}
	if len(f.stops) > 0 {
		st, f.stops = f.stops[0], f.stops[1:]
	}
	f.last = st
	f.when++
	return st
}
func (f *fakeTarget) Continue() (Stop, error) {
	f.call("continue")
	if f.block {
		f.started <- struct{}{}
		<-f.intr
		f.last = Stop{Kind: StopInterrupt, Tid: f.last.Tid}
		return f.last, nil
	}
	st := f.nextStop()
	return st, nil
}
func (f *fakeTarget) Step(tid int) (Stop, error) {
	f.call("step %#x", tid)
	st := f.nextStop()
	if st.Kind == StopStep {
		st.Tid = tid
		f.last = st
	}
	return st, nil
}
func (f *fakeTarget) Interrupt() {
	select {
	case f.intr <- struct{}{}:
	default:
	}
}
func (f *fakeTarget) LastStop() Stop { return f.last }
func (f *fakeTarget) Restart() (Stop, error) {
	f.call("restart")
	f.last, f.when = Stop{Kind: StopStart, Tid: 0x1234}, 0
	return f.last, nil
}
func (f *fakeTarget) When() uint64 { return f.when }
func (f *fakeTarget) Goto(n uint64) (Stop, error) {
	f.call("goto %d", n)
	for f.when = n; f.passed[f.when]; f.when++ {
	}
	f.last = Stop{Kind: StopStart, Tid: 0x1234}
	return f.last, nil
}
func (f *fakeTarget) Auxv() ([]byte, error)     { return f.auxv, nil }
func (f *fakeTarget) ExecFile() (string, error) { return f.exe, nil }
func (f *fakeTarget) Open(p string) (fs.File, error) {
	return f.files.Open(strings.TrimPrefix(p, "/"))
}
func (f *fakeTarget) Siginfo(tid int) ([]byte, error) {
	if f.last.Kind != StopSignal {
		return nil, ErrUnsupported
	}
	b := make([]byte, 128)
	b[0] = byte(f.last.Signal)
	binary.LittleEndian.PutUint32(b[8:], uint32(f.siCode))
	binary.LittleEndian.PutUint64(b[16:], f.siAddr)
	return b, nil
}

// client is a scripted RSP client on the far end of a net.Pipe.
type client struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
	ack  bool
	done chan serveResult
}

type serveResult struct {
	end End
	err error
}

// startServe runs Serve for ft and returns a client in ack mode. The
// session is shut down and checked to end at the end of the test.
func startServe(t *testing.T, ft *fakeTarget, opts Options) *client {
	t.Helper()
	return startServeTarget(t, ft, opts)
}

// startServeTarget is startServe for any Target.
func startServeTarget(t *testing.T, ft Target, opts Options) *client {
	t.Helper()
	cc, sc := net.Pipe()
	c := &client{t: t, conn: cc, r: bufio.NewReader(cc), ack: true, done: make(chan serveResult, 1)}
	go func() {
		end, err := Serve(sc, ft, opts)
		c.done <- serveResult{end, err}
	}()
	t.Cleanup(func() {
		cc.Close()
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after the client closed")
		}
	})
	return c
}

// send sends a packet and, in ack mode, reads its '+'.
func (c *client) send(payload string) {
	c.t.Helper()
	c.conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.conn.Write(appendFrame(nil, []byte(payload))); err != nil {
		c.t.Fatalf("send %q: %v", payload, err)
	}
	if c.ack {
		b, err := c.r.ReadByte()
		if err != nil || b != '+' {
			c.t.Fatalf("send %q: got ack %q, %v, want '+'", payload, b, err)
		}
	}
}

// recv reads a reply packet and returns its payload decoded.
func (c *client) recv() string {
	c.t.Helper()
	c.conn.SetDeadline(time.Now().Add(5 * time.Second))
	var frame []byte
	for {
		b, err := c.r.ReadByte()
		if err != nil {
			c.t.Fatalf("recv: %v", err)
		}
		if len(frame) == 0 && b != '$' {
			c.t.Fatalf("recv: got %q between packets", b)
		}
		frame = append(frame, b)
		if len(frame) >= 4 && frame[len(frame)-3] == '#' {
			break
		}
	}
	p, err := decodeFrame(frame)
	if err != nil {
		c.t.Fatalf("recv %q: %v", frame, err)
	}
	if c.ack {
		c.conn.Write([]byte{'+'})
	}
	return string(p)
}

// ask sends a packet and returns the reply.
func (c *client) ask(payload string) string {
	c.t.Helper()
	c.send(payload)
	return c.recv()
}

// expect asks and checks the reply.
func (c *client) expect(payload, want string) {
	c.t.Helper()
	if got := c.ask(payload); got != want {
		c.t.Errorf("%s: got %q, want %q", payload, got, want)
	}
}

// end waits for Serve to return.
func (c *client) end() serveResult {
	c.t.Helper()
	select {
	case r := <-c.done:
		c.done <- r
		return r
	case <-time.After(5 * time.Second):
		c.t.Fatal("Serve did not return")
	}
	return serveResult{}
}
