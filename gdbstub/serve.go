package gdbstub

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures Serve.
type Options struct {
	// Log, when set, receives one line per packet received ("<- ...") and sent ("-> ...").
	Log func(line string)
	// Refused, when set, receives why the stub refused a request a user
	// made (a write to memory or a register, a breakpoint it could not
	// set): a client shows only the error code (gdb 13 prints no
	// message the stub sends), so the caller tells the user.
	Refused func(why error)
}

// End says how a connection ended.
type End int

const (
	EndDisconnected End = iota // the client went away (EOF or reset) without killing
	EndDetached                // D
	EndKilled                  // k, or vKill and then the client went away
)

// String names e.
func (e End) String() string {
	switch e {
	case EndDisconnected:
		return "disconnected"
	case EndDetached:
		return "detached"
	case EndKilled:
		return "killed"
	}
	return fmt.Sprintf("End(%d)", int(e))
}

// recoverPanics makes a panic while handling a packet an error reply
// instead of a crash. Tests turn it off so that the fuzzers see bugs.
var recoverPanics = true

// session is one connection's state. The serving goroutine owns all of it
// but the fields under mu, which the reader goroutine shares, and noAck.
type session struct {
	conn io.ReadWriteCloser
	t    Target
	opts Options

	wmu sync.Mutex // serializes writes to conn

	noAck atomic.Bool // QStartNoAckMode was accepted

	mu          sync.Mutex
	queue       []event // protected by mu
	seq         uint64  // packets queued so far; protected by mu
	running     bool    // a Continue or Step runs; protected by mu
	intrPending bool    // a ^C came while nothing ran; protected by mu
	intrSeq     uint64  // seq when it came; protected by mu
	eof         bool    // the reader saw the end of the stream; protected by mu

	wake       chan struct{} // a new event was queued
	readerDone chan struct{}

	last []byte // the last frame sent, for a '-'

	// Negotiated.
	multiprocess bool // qSupported offered multiprocess+
	binaryUpload bool // qSupported offered binary-upload+
	gdb          bool // the client is gdb (qSupported offered qRelocInsn+)
	threadSuffix bool // QThreadSuffixSupported
	listThreads  bool // QListThreadsInStopReply
	native       bool // signals in Linux's numbering: lldb's (signals.go)
	avx          bool // target.xml described the ymm halves (regCount)

	gThread, cThread int // Hg and Hc choices; 0 is any
	// shown is the thread of the last stop reply: the one the client
	// thinks current, which "any" (Hg0) stands for, as in gdbserver,
	// even after a monitor command moved the replay to another
	// thread's event.
	shown int

	tls *tlsLayout // the C library's TLS layout, once found (qGetTLSAddr)

	// dead is the exit or kill stop once the process has ended, until vRun.
	dead   *Stop
	killed bool // vKill was asked

	files  map[int]fs.File // vFile descriptors
	nextFD int

	// holdStart: the next continue reports the start without running
	// (after Delve's vRun; see vRun).
	holdStart bool
	// detached: the client sent D. It may still close the files it has
	// open (gdb does) before it hangs up; run control is refused.
	detached bool
	// Set by a handler to end the session after its reply.
	done bool
	end  End
	// Set by a handler to send no reply.
	noReply bool

	// inserted are the breakpoints and watchpoints the client set and
	// has not cleared; catching, whether it catches syscalls. Serve
	// takes them out of the target as the session ends (clearClient).
	inserted map[breakpoint]bool
	catching bool
	// conds are the conditions gdb gave the breakpoints at an address
	// (agentexpr.go); none for one that always stops.
	conds map[condKey][]condition
	// allocating: lldb asked to allocate memory (_M) since the process
	// last ran; its register writes are its own (allocate).
	allocating bool
}

// afterDetach bounds how long a client that detached may keep the
// connection (closing its files) before the session ends anyway.
var afterDetach = 5 * time.Second

// Serve serves the GDB Remote Serial Protocol for t on conn until the client
// detaches, kills or disconnects; it closes conn. It never panics on client input.
//
// Closing conn must make a blocked Read return, as it does for a net.Conn
// or a pipe: Serve waits for its reader goroutine before it returns. The
// error is nil when the client just went away.
func Serve(conn io.ReadWriteCloser, t Target, opts Options) (End, error) {
	s := &session{
		conn:       conn,
		t:          t,
		opts:       opts,
		wake:       make(chan struct{}, 1),
		readerDone: make(chan struct{}),
		files:      map[int]fs.File{},
		nextFD:     3,
		inserted:   map[breakpoint]bool{},
		conds:      map[condKey][]condition{},
	}
	go s.readLoop()
	end, err := s.loop()
	conn.Close()
	<-s.readerDone
	s.clearClient()
	for _, f := range s.files {
		f.Close()
	}
	return end, err
}

// loop serves packets until the session ends.
func (s *session) loop() (End, error) {
	for {
		var timeout <-chan time.Time
		if s.detached {
			timeout = time.After(afterDetach)
		}
		ev, ok := s.nextWithin(timeout)
		if !ok {
			return EndDetached, nil // it detached and said nothing more
		}
		switch ev.kind {
		case evEOF:
			end := EndDisconnected
			switch {
			case s.detached:
				end = EndDetached
			case s.killed:
				end = EndKilled
			}
			switch {
			case quietError(ev.err):
				return end, nil
			case errors.Is(ev.err, ErrJSONClient):
				return end, ev.err
			}
			return end, fmt.Errorf("gdbstub: read: %w", ev.err)
		case evNack:
			if len(s.last) > 0 {
				s.logf("-> (again)")
				if err := s.write(s.last); err != nil {
					return s.writeFailed(err)
				}
			}
		case evPacket:
			s.logPacket("<- ", ev.payload)
			reply := s.handle(ev.payload, ev.seq)
			if !s.noReply {
				if err := s.send(reply); err != nil {
					return s.writeFailed(err)
				}
			}
			s.noReply = false
			if s.done {
				return s.end, nil
			}
		}
	}
}

// writeFailed ends the session after a failed write.
func (s *session) writeFailed(err error) (End, error) {
	end := EndDisconnected
	if s.killed {
		end = EndKilled
	}
	if quietError(err) {
		return end, nil
	}
	return end, fmt.Errorf("gdbstub: write: %w", err)
}

// handle answers one packet.
func (s *session) handle(pkt []byte, seq uint64) (reply []byte) {
	if recoverPanics {
		defer func() {
			if r := recover(); r != nil {
				s.logf("gdbstub: panic handling %.40q: %v", pkt, r)
				reply, s.noReply = []byte("E01"), false
			}
		}()
	}
	h := lookup(pkt)
	switch {
	case h == nil:
		return nil // unknown: the empty reply
	case s.detached && !bytes.HasPrefix(pkt, []byte("vFile:")) && !bytes.HasPrefix(pkt, []byte("q")):
		return errReply // the target is no longer this client's
	}
	return h(s, &request{pkt: string(pkt), seq: seq})
}

// Refuse turns a client away: it answers the client's first packet
// (gdb's qSupported, lldb's QStartNoAckMode) with an error that carries
// msg, which gdb shows ("Remote failure reply: E.msg"), waiting at most
// wait for it, and returns; the caller closes conn.
func Refuse(conn net.Conn, msg string, wait time.Duration) {
	_ = conn.SetDeadline(time.Now().Add(wait))
	sc := newScanner(packetSize)
	buf := make([]byte, 512)
	for {
		n, err := conn.Read(buf)
		for _, c := range buf[:n] {
			if kind, _ := sc.feed(c); kind == evPacket || kind == evBad || kind == evOversize {
				_, _ = conn.Write(appendFrame([]byte{'+'}, escapeBinary([]byte("E."), []byte(msg))))
				return
			}
		}
		if err != nil {
			return
		}
	}
}
