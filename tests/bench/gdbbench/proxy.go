package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// window counts the traffic between two of bench.py's marks.
type window struct {
	packets int // sent by gdb
	steps   int // resumes that step (s, S, vCont with s, S or r)
	conts   int // resumes that only continue
	stops   int // stop replies (T, S) from the stub
	other   []string
}

// event is one packet or out-of-band byte seen by the proxy.
type event struct {
	t       int64 // Unix nanoseconds, comparable with python's time.time_ns()
	fromGDB bool
	kind    byte // '$' or '%' for a packet, 3 for an interrupt, '-' for a nack
	resume  byte // for gdb's packets: see resume
	stop    bool // for the stub's: a stop reply
}

// counts is what the proxy saw in the two timed commands of one session.
type counts struct {
	stepping, roundTrips window
}

// proxy forwards one gdb connection to a stub, counting packets and stops,
// and optionally writes a transcript.
type proxy struct {
	ln       net.Listener
	upstream string
	start    time.Time
	mu       sync.Mutex
	events   []event
	closed   string // how the connection ended (in the transcript)
	log      *bufio.Writer
	logFile  *os.File
	done     chan struct{}
}

func newProxy(upstream, logPath string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, upstream: upstream, start: time.Now(), done: make(chan struct{})}
	if logPath != "" {
		if p.logFile, err = os.Create(logPath); err != nil {
			ln.Close()
			return nil, err
		}
		p.log = bufio.NewWriter(p.logFile)
	}
	go p.serve()
	return p, nil
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	defer close(p.done)
	down, err := p.ln.Accept()
	p.ln.Close()
	if err != nil {
		p.note("accept: %v", err)
		return
	}
	defer down.Close()
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		p.note("dial %s: %v", p.upstream, err)
		return
	}
	defer up.Close()
	p.start = time.Now()
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src net.Conn, fromGDB bool) {
		defer wg.Done()
		err := p.copy(dst, src, fromGDB)
		p.note("%s closed the connection (%v)", map[bool]string{true: "gdb", false: "stub"}[fromGDB], err)
		// Either side closing ends the session for both.
		dst.Close()
		src.Close()
	}
	go pipe(up, down, true)
	go pipe(down, up, false)
	wg.Wait()
}

// copy parses each chunk before forwarding it, so that a stop reply is
// always seen after the resume that caused it.
func (p *proxy) copy(dst io.Writer, src io.Reader, fromGDB bool) error {
	var r rspReader
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.feed(buf[:n], func(kind byte, payload []byte) { p.packet(fromGDB, kind, payload) })
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err != nil {
			return err
		}
	}
}

var stopReply = regexp.MustCompile(`^[TS][0-9a-fA-F]{2}`)

// packet records one packet (kind '$' or '%') or out-of-band byte.
func (p *proxy) packet(fromGDB bool, kind byte, payload []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := string(payload)
	e := event{t: time.Now().UnixNano(), fromGDB: fromGDB, kind: kind}
	if fromGDB && kind == '$' {
		e.resume = resume(s)
	} else if kind == '$' {
		e.stop = stopReply.MatchString(s)
	}
	p.events = append(p.events, e)
	if p.log != nil {
		dir := "gdb> "
		if !fromGDB {
			dir = "stub<"
		}
		if len(s) > 300 {
			s = s[:300] + "..."
		}
		fmt.Fprintf(p.log, "%10.3fms %s %c%q\n", float64(time.Since(p.start).Microseconds())/1000, dir, kind, s)
	}
}

// count sums up the events between the marks from and to.
func (p *proxy) count(from, to int64) window {
	p.mu.Lock()
	defer p.mu.Unlock()
	var w window
	for _, e := range p.events {
		switch {
		case e.t < from || e.t > to:
		case e.kind != '$':
			w.other = append(w.other, fmt.Sprintf("%s sent %q", map[bool]string{true: "gdb", false: "the stub"}[e.fromGDB], e.kind))
		case e.fromGDB:
			w.packets++
			switch e.resume {
			case 's':
				w.steps++
			case 'c':
				w.conts++
			}
		case e.stop:
			w.stops++
		}
	}
	return w
}

// resume says what a packet from gdb does: 's' steps, 'c' only continues,
// 'k' ends the session (kill or detach), 0 anything else.
func resume(s string) byte {
	switch {
	case s == "k" || strings.HasPrefix(s, "vKill") || s == "D" || strings.HasPrefix(s, "D;"):
		return 'k'
	case strings.HasPrefix(s, "vCont;"):
		kind := byte(0)
		for _, a := range strings.Split(s[len("vCont;"):], ";") {
			switch {
			case a == "":
			case a[0] == 's' || a[0] == 'S' || a[0] == 'r':
				return 's'
			case a[0] == 'c' || a[0] == 'C':
				kind = 'c'
			}
		}
		return kind
	case s == "" || strings.HasPrefix(s, "vCont"):
		return 0
	case s[0] == 's' || s[0] == 'S':
		return 's'
	case s[0] == 'c' || s[0] == 'C':
		return 'c'
	}
	return 0
}

func (p *proxy) note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if p.closed == "" {
		p.closed = msg
	}
	if p.log != nil {
		fmt.Fprintf(p.log, "%10.3fms %s\n", float64(time.Since(p.start).Microseconds())/1000, msg)
	}
}

// wait returns the counts of the timed commands, whose marks bench.py
// printed, once the connection has ended.
func (p *proxy) wait(marks map[string]int64) *counts {
	select {
	case <-p.done:
	case <-time.After(exitWait):
		p.note("connection still open %v after gdb exited", exitWait)
	}
	return &counts{
		stepping:   p.count(marks["stepi-start"], marks["stepi-end"]),
		roundTrips: p.count(marks["hits-start"], marks["hits-end"]),
	}
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.log != nil {
		p.log.Flush()
		p.logFile.Close()
		p.log = nil
	}
}

// rspReader splits a byte stream into RSP packets.
type rspReader struct {
	in      bool   // inside a packet
	kind    byte   // '$' or '%'
	sum     int    // checksum characters still to skip
	payload []byte // of the packet being read
}

func (r *rspReader) feed(b []byte, emit func(kind byte, payload []byte)) {
	for _, ch := range b {
		switch {
		case r.sum > 0:
			if r.sum--; r.sum == 0 {
				emit(r.kind, r.payload)
				r.payload = r.payload[:0]
			}
		case r.in && ch == '#':
			r.in, r.sum = false, 2
		case r.in:
			r.payload = append(r.payload, ch)
		case ch == '$' || ch == '%':
			r.in, r.kind = true, ch
		case ch == 3 || ch == '-':
			emit(ch, nil)
		}
	}
}
