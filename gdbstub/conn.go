package gdbstub

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"
)

// The connection: a reader goroutine owns the read side for the whole
// session. It acknowledges packets (until no-ack mode), queues them for
// the serving goroutine, and turns a 0x03 into Target.Interrupt while a
// Continue or Step runs. The serving goroutine owns everything else.

// maxQueued bounds the packets queued while the serving goroutine is
// busy; beyond it packets are refused ('-') and dropped.
const maxQueued = 256

// event is what the reader hands over.
type event struct {
	kind    eventKind // evPacket, evNack or evEOF
	payload []byte
	seq     uint64 // evPacket: its number in the stream, from 1
	err     error  // evEOF: the read error
}

const evEOF eventKind = -1

// readLoop runs on its own goroutine until the connection's Read fails.
func (s *session) readLoop() {
	defer close(s.readerDone)
	sc := newScanner(packetSize)
	buf := make([]byte, 16<<10)
	for first := true; ; first = false {
		n, err := s.conn.Read(buf)
		if first && n > 0 && buf[0] == '{' {
			// JSON: dlv connect, which waits for an answer in its own
			// protocol for ever.
			s.push(event{kind: evEOF, err: ErrJSONClient})
			return
		}
		for _, c := range buf[:n] {
			kind, payload := sc.feed(c)
			switch kind {
			case evPacket:
				if !s.push(event{kind: evPacket, payload: append([]byte(nil), payload...)}) {
					s.ack('-')
					s.logf("<- (dropped: too many packets queued)")
				}
			case evBad:
				s.ack('-')
				s.logf("<- (dropped: bad checksum or encoding)")
			case evOversize:
				s.ack('-')
				s.logf("<- (dropped: longer than %#x bytes)", packetSize)
			case evNack:
				s.push(event{kind: evNack})
			case evInterrupt:
				s.logf("<- ^C")
				s.interrupt()
			}
		}
		if err != nil {
			s.mu.Lock()
			s.eof = true
			if s.running {
				s.t.Interrupt()
			}
			s.mu.Unlock()
			s.push(event{kind: evEOF, err: err})
			return
		}
	}
}

// ErrJSONClient ends a session whose client's first bytes are JSON.
var ErrJSONClient = errors.New("the debugger sent JSON, not the GDB remote protocol: `dlv connect` speaks Delve's own; Delve replays a hermit trace as `dlv replay TRACE` through `hermit rr-shim` (see the README)")

// ack sends '+' or '-' unless no-ack mode is on.
func (s *session) ack(c byte) {
	if c == '+' && s.noAck.Load() || c == '-' && s.noAck.Load() {
		return
	}
	s.wmu.Lock()
	s.conn.Write([]byte{c}) // a failed write shows as a failed read soon
	s.wmu.Unlock()
}

// push queues ev for the serving goroutine, acknowledging packets. It
// reports false when the queue is full (the packet was not taken).
func (s *session) push(ev event) bool {
	s.mu.Lock()
	if ev.kind == evPacket {
		if len(s.queue) >= maxQueued {
			s.mu.Unlock()
			return false
		}
		s.seq++
		ev.seq = s.seq
		// Acknowledge under mu, so the ack leaves before any reply.
		s.ack('+')
	}
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

// next waits for the next event.
func (s *session) next() event {
	ev, _ := s.nextWithin(nil)
	return ev
}

// nextWithin is next, giving up (false) when timeout fires first (nil:
// never).
func (s *session) nextWithin(timeout <-chan time.Time) (event, bool) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue[0] = event{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return ev, true
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-timeout:
			return event{}, false
		}
	}
}

// interrupt handles a 0x03: it interrupts a running Continue or Step, or
// else remembers it for a resume packet that came before it.
func (s *session) interrupt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		s.t.Interrupt()
		return
	}
	s.intrPending = true
	s.intrSeq = s.seq
}

// run calls resume (Continue or Step) for the packet numbered seq with the
// reader ready to interrupt it. A ^C that arrived after that packet but
// before run began makes it return StopInterrupt without resuming.
func (s *session) run(seq uint64, resume func() (Stop, error)) (Stop, error) {
	s.mu.Lock()
	if s.intrPending && s.intrSeq >= seq || s.eof {
		s.intrPending = false
		s.mu.Unlock()
		return Stop{Kind: StopInterrupt, Tid: s.t.LastStop().Tid}, nil
	}
	s.intrPending = false
	s.running = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	return resume()
}

// send sends a reply packet, remembering it for a '-'.
func (s *session) send(payload []byte) error {
	s.logPacket("-> ", payload)
	s.last = appendFrame(s.last[:0], payload)
	return s.write(s.last)
}

// write writes raw bytes to the connection.
func (s *session) write(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.conn.Write(b)
	return err
}

// logf logs a line if logging is on.
func (s *session) logf(format string, args ...any) {
	if s.opts.Log != nil {
		s.opts.Log(fmt.Sprintf(format, args...))
	}
}

// refused tells Options.Refused why the stub refused a request, and
// returns the error reply.
func (s *session) refused(why error) []byte {
	if s.opts.Refused != nil {
		s.opts.Refused(why)
	}
	return errReply
}

// maxLogged is how much of a packet a log line shows.
const maxLogged = 512

// logPacket logs a packet, quoted when it is not printable text and cut
// when long.
func (s *session) logPacket(dir string, p []byte) {
	if s.opts.Log == nil {
		return
	}
	shown, more := p, ""
	if len(shown) > maxLogged {
		shown, more = shown[:maxLogged], "…("+strconv.Itoa(len(p))+" bytes)"
	}
	text := string(shown)
	if !printable(shown) {
		text = strconv.Quote(text)
	}
	s.opts.Log(dir + text + more)
}

// printable tells whether b is printable ASCII.
func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return utf8.Valid(b)
}

// quietError tells whether a connection error just means the client went
// away.
func quietError(err error) bool {
	return err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}
