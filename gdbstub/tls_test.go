package gdbstub

import (
	"strings"
	"testing"
)

// TestGetTLSAddrRefusals: a qGetTLSAddr the stub cannot answer gets E01,
// and Options.Refused hears why; the session goes on.
func TestGetTLSAddrRefusals(t *testing.T) {
	ft := newFakeTarget()
	ft.regs[0x1234].FsBase = 0
	var refused []string
	c := startServe(t, ft, Options{Refused: func(err error) { refused = append(refused, err.Error()) }})
	for _, pkt := range []string{
		"qGetTLSAddr:zz,0,1000",
		"qGetTLSAddr:1240,0",
		"qGetTLSAddr:1240,xx,1000",
		"qGetTLSAddr:999,0,1000",
		"qGetTLSAddr:1234,0,1000",
		"qGetTLSAddr:1240,10,1000",
		"qGetTLSAddr:p1234.1240,10,0",
	} {
		c.expect(pkt, "E01")
	}
	c.expect("m401008,2", "90c3")
	want := []string{
		`bad thread id "zz"`,
		`want THREAD,OFFSET,LM, got "1240,0"`,
		`bad offset or link map in "1240,xx,1000"`,
		"no thread 2457",
		"thread 4660 has no thread pointer yet",
		"no _thread_db_* symbols",
		"/usr/bin/prog",
	}
	if len(refused) != len(want) {
		t.Fatalf("Options.Refused heard %d reasons, want %d:\n%s", len(refused), len(want), strings.Join(refused, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(refused[i], "qGetTLSAddr: ") || !strings.Contains(refused[i], w) {
			t.Errorf("reason %d: got %q, want qGetTLSAddr: ...%s...", i, refused[i], w)
		}
	}
}
