package gdbstub

import (
	"errors"
	"fmt"
)

// Framing of the GDB Remote Serial Protocol: a packet travels as
// "$payload#cs", cs being the two-hex-digit sum of the payload's bytes
// modulo 256. Inside a payload '}' escapes the next byte (xor 0x20) and
// "x*n" repeats x n-29 more times. The receiver acknowledges each packet
// with '+' or '-' until no-ack mode is on; a lone 0x03 interrupts the
// running target.

const (
	// packetSize is the largest payload we accept, and advertise in
	// qSupported. Replies are kept below it too.
	packetSize = 0x20000
	// maxReply is how much data a reply may carry before framing:
	// binary escaping can double it.
	maxReply = packetSize/2 - 16

	escapeChar    = '}'
	interruptChar = 0x03
)

var (
	errNotFramed   = errors.New("packet not framed as $...#cs")
	errBadChecksum = errors.New("packet checksum mismatch")
	errBadRepeat   = errors.New("packet has a bad run-length repeat")
	errBadEscape   = errors.New("packet ends in an escape character")
)

// checksum is the RSP checksum of b.
func checksum(b []byte) byte {
	var s byte
	for _, c := range b {
		s += c
	}
	return s
}

// appendFrame appends payload framed as "$payload#cs" to dst. The payload
// goes as it is: escaping it is up to the caller (escapeBinary).
func appendFrame(dst, payload []byte) []byte {
	dst = append(dst, '$')
	dst = append(dst, payload...)
	cs := checksum(payload)
	return append(dst, '#', hexDigits[cs>>4], hexDigits[cs&15])
}

// needsEscape tells whether c must be escaped in a binary payload.
func needsEscape(c byte) bool {
	return c == '#' || c == '$' || c == '}' || c == '*'
}

// escapeBinary appends data to dst escaping '#', '$', '}' and '*' as
// '}' followed by the byte xor 0x20.
func escapeBinary(dst, data []byte) []byte {
	for _, c := range data {
		if needsEscape(c) {
			dst = append(dst, escapeChar, c^0x20)
		} else {
			dst = append(dst, c)
		}
	}
	return dst
}

// escapedLen is the length data has once escaped.
func escapedLen(data []byte) int {
	n := len(data)
	for _, c := range data {
		if needsEscape(c) {
			n++
		}
	}
	return n
}

// decodeFrame checks a whole "$payload#cs" frame and returns its payload
// decoded (escapes and run-length repeats undone).
func decodeFrame(frame []byte) ([]byte, error) {
	if len(frame) < 4 || frame[0] != '$' || frame[len(frame)-3] != '#' {
		return nil, errNotFramed
	}
	raw := frame[1 : len(frame)-3]
	hi, ok1 := unhex(frame[len(frame)-2])
	lo, ok2 := unhex(frame[len(frame)-1])
	if !ok1 || !ok2 {
		return nil, errBadChecksum
	}
	if want := hi<<4 | lo; checksum(raw) != want {
		return nil, errBadChecksum
	}
	return decodePayload(raw)
}

// decodePayload undoes escapes and run-length repeats in a raw payload
// (the bytes between '$' and '#'). "}x" gives x^0x20; "c*n" repeats the
// last decoded byte n-29 more times.
func decodePayload(raw []byte) ([]byte, error) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case escapeChar:
			i++
			if i == len(raw) {
				return nil, errBadEscape
			}
			out = append(out, raw[i]^0x20)
		case '*':
			i++
			if i == len(raw) || len(out) == 0 {
				return nil, errBadRepeat
			}
			n := int(raw[i]) - 29
			if n < 3 || n > 97 {
				return nil, errBadRepeat
			}
			last := out[len(out)-1]
			for range n {
				out = append(out, last)
			}
		default:
			out = append(out, c)
		}
	}
	return out, nil
}

// eventKind is what the scanner found in the byte stream.
type eventKind int

const (
	evNone      eventKind = iota
	evPacket              // a packet with a good checksum; payload decoded
	evBad                 // a packet with a bad checksum or encoding, dropped
	evOversize            // a packet longer than packetSize, dropped
	evAck                 // '+'
	evNack                // '-'
	evInterrupt           // 0x03 between packets
)

// scanState is where the scanner is in a frame.
type scanState int

const (
	scanIdle scanState = iota
	scanPayload
	scanSum1
	scanSum2
)

// scanner splits a client's byte stream into events. Bytes between packets
// other than '+', '-', 0x03 and '$' are skipped; a '$' inside a payload
// starts a new packet (the old one was garbage). A payload longer than max
// is not buffered: the packet is consumed and reported as evOversize.
type scanner struct {
	max      int
	state    scanState
	raw      []byte
	oversize bool
	sum      byte // the checksum's high digit, in scanSum2
	sumOK    bool
}

// newScanner returns a scanner accepting payloads of up to max bytes.
func newScanner(max int) *scanner { return &scanner{max: max} }

// feed consumes one byte. When it completes an event it returns it; the
// payload of an evPacket is valid until the next call.
func (s *scanner) feed(c byte) (eventKind, []byte) {
	switch s.state {
	case scanIdle:
		switch c {
		case '$':
			s.begin()
		case '+':
			return evAck, nil
		case '-':
			return evNack, nil
		case interruptChar:
			return evInterrupt, nil
		}
	case scanPayload:
		switch c {
		case '$':
			s.begin()
		case '#':
			s.state = scanSum1
		default:
			if len(s.raw) >= s.max {
				s.oversize = true
				s.raw = s.raw[:0]
			}
			if !s.oversize {
				s.raw = append(s.raw, c)
			}
		}
	case scanSum1:
		v, ok := unhex(c)
		s.sum, s.sumOK = v<<4, ok
		s.state = scanSum2
	case scanSum2:
		s.state = scanIdle
		v, ok := unhex(c)
		if s.oversize {
			return evOversize, nil
		}
		if !ok || !s.sumOK || s.sum|v != checksum(s.raw) {
			return evBad, nil
		}
		p, err := decodePayload(s.raw)
		if err != nil {
			return evBad, nil
		}
		return evPacket, p
	}
	return evNone, nil
}

func (s *scanner) begin() {
	s.state = scanPayload
	s.raw = s.raw[:0]
	s.oversize = false
}

const hexDigits = "0123456789abcdef"

// unhex is the value of hex digit c.
func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// appendHex appends b as lower-case hex.
func appendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// decodeHex decodes an even-length hex string.
func decodeHex(s string) ([]byte, error) {
	if len(s)%2 != 0 {
		return nil, fmt.Errorf("odd-length hex %q", s)
	}
	out := make([]byte, len(s)/2)
	for i := range out {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("bad hex %q", s)
		}
		out[i] = hi<<4 | lo
	}
	return out, nil
}
