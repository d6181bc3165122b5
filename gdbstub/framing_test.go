package gdbstub

import (
	"bytes"
	"strings"
	"testing"
)

func TestChecksumAndFrame(t *testing.T) {
	for _, tc := range []struct{ payload, want string }{
		{"", "$#00"},
		{"OK", "$OK#9a"},
		{"qSupported", "$qSupported#37"},
		{"QStartNoAckMode", "$QStartNoAckMode#b0"},
		{"vMustReplyEmpty", "$vMustReplyEmpty#3a"},
	} {
		if got := string(appendFrame(nil, []byte(tc.payload))); got != tc.want {
			t.Errorf("frame %q: got %q, want %q", tc.payload, got, tc.want)
		}
	}
}

func TestEscapeBinary(t *testing.T) {
	in := []byte("a#b$c}d*e\x03")
	want := "a}\x03b}\x04c}]d}\x0ae\x03"
	if got := string(escapeBinary(nil, in)); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if n := escapedLen(in); n != len(want) {
		t.Errorf("escapedLen: got %d, want %d", n, len(want))
	}
	back, err := decodePayload([]byte(want))
	if err != nil || !bytes.Equal(back, in) {
		t.Errorf("decode: got %q, %v, want %q", back, err, in)
	}
}

func TestDecodeFrame(t *testing.T) {
	frame := func(raw string) string { return string(appendFrame(nil, []byte(raw))) }
	for _, tc := range []struct {
		name, frame, want string
		err               error
	}{
		{"plain", "$OK#9a", "OK", nil},
		{"upper-case checksum", "$qSupported#37", "qSupported", nil},
		{"bad checksum", "$OK#9b", "", errBadChecksum},
		{"non-hex checksum", "$OK#zz", "", errBadChecksum},
		{"no dollar", "OK#9a", "", errNotFramed},
		{"short", "$#0", "", errNotFramed},
		{"escape", frame("X0,1:}]"), "X0,1:}", nil},
		{"trailing escape", frame("ab}"), "", errBadEscape},
		{"run length", frame("0* "), "0000", nil},
		{"run length longest", frame("a*~"), "a" + strings.Repeat("a", 97), nil},
		{"run length too short", frame("a*\x1f"), "", errBadRepeat},
		{"run length first", frame("*  "), "", errBadRepeat},
		{"run length at end", frame("a*"), "", errBadRepeat},
		{"run length of escaped", frame("}]*!"), "}}}}}", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeFrame([]byte(tc.frame))
			if err != tc.err || err == nil && string(got) != tc.want {
				t.Errorf("got %q, %v, want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// scan feeds a whole stream to a scanner and lists the events.
func scan(max int, stream string) []string {
	sc := newScanner(max)
	var out []string
	for i := 0; i < len(stream); i++ {
		kind, p := sc.feed(stream[i])
		switch kind {
		case evPacket:
			out = append(out, "packet "+string(p))
		case evBad:
			out = append(out, "bad")
		case evOversize:
			out = append(out, "oversize")
		case evAck:
			out = append(out, "+")
		case evNack:
			out = append(out, "-")
		case evInterrupt:
			out = append(out, "^C")
		}
	}
	return out
}

func TestScanner(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		max          int
		want         []string
	}{
		{"acks and packet", "+$OK#9a-", 100, []string{"+", "packet OK", "-"}},
		{"garbage skipped", "junk\n\xff$OK#9a", 100, []string{"packet OK"}},
		{"bad checksum", "$OK#00$OK#9a", 100, []string{"bad", "packet OK"}},
		{"interrupt between", "\x03$OK#9a\x03", 100, []string{"^C", "packet OK", "^C"}},
		{"0x03 inside a packet is data", "$X0,1:\x03#" + csHex("X0,1:\x03"), 100, []string{"packet X0,1:\x03"}},
		{"dollar restarts", "$qSu$OK#9a", 100, []string{"packet OK"}},
		{"oversize dropped", "$" + strings.Repeat("a", 20) + "#00$OK#9a", 10, []string{"oversize", "packet OK"}},
		{"exactly max", "$aaaa#84", 4, []string{"packet aaaa"}},
		{"bad escape", "$a}#da", 100, []string{"bad"}},
		{"cut off", "$qSupported#3", 100, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scan(tc.max, tc.stream)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func csHex(payload string) string {
	cs := checksum([]byte(payload))
	return string([]byte{hexDigits[cs>>4], hexDigits[cs&15]})
}

func TestXferChunk(t *testing.T) {
	data := []byte("0123456789#")
	for _, tc := range []struct {
		off, n uint64
		want   string
	}{
		{0, 4, "m0123"},
		{8, 4, "l89}\x03"},
		{0, 100, "l0123456789}\x03"},
		{11, 4, "l"},
		{100, 4, "l"},
		{4, 0, "m"},
	} {
		if got := string(xferChunk(data, tc.off, tc.n)); got != tc.want {
			t.Errorf("%d,%d: got %q, want %q", tc.off, tc.n, got, tc.want)
		}
	}
}
