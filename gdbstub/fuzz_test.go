package gdbstub

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"$OK#9a", "$qSupported:multiprocess+#00", "$m4010* ,4#00", "}", "$a}#da"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeFrame(data)
		scan(64, string(data))

		// Whatever the payload, escaping and framing it round-trips, through
		// decodeFrame and through the scanner.
		frame := appendFrame(nil, escapeBinary(nil, data))
		got, err := decodeFrame(frame)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round trip of %q: got %q, %v", data, got, err)
		}
		sc := newScanner(packetSize)
		var events []eventKind
		for _, c := range frame {
			if kind, p := sc.feed(c); kind != evNone {
				events = append(events, kind)
				if kind == evPacket && !bytes.Equal(p, data) {
					t.Fatalf("scanner: got %q, want %q", p, data)
				}
			}
		}
		if len(events) != 1 || events[0] != evPacket {
			t.Fatalf("scanner: got events %v for %q", events, frame)
		}
	})
}

// FuzzServe feeds arbitrary bytes to Serve as a client's stream: it must
// neither panic nor hang.
func FuzzServe(f *testing.F) {
	f.Add([]byte("+$QStartNoAckMode#b0$qSupported:multiprocess+#00$?#3f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ft := newFakeTarget()
		ft.stops = []Stop{
			{Kind: StopBreakpoint, Tid: 0x1240, Addr: 0x401010},
			{Kind: StopSignal, Tid: 0x1234, Signal: 11},
			{Kind: StopExited, ExitCode: 1},
		}
		cc, sc := net.Pipe()
		done := make(chan struct{})
		go func() {
			Serve(sc, ft, Options{Log: func(string) {}})
			close(done)
		}()
		drained := make(chan struct{})
		go func() {
			io.Copy(io.Discard, cc)
			close(drained)
		}()
		cc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		cc.Write(data)
		cc.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Serve hangs on %q", data)
		}
		<-drained
	})
}
