package gdbstub

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// catchTarget is a fake target that can catch syscalls.
type catchTarget struct {
	*fakeTarget
	got []string // the CatchSyscalls calls
}

func (c *catchTarget) CatchSyscalls(on bool, nrs []int) error {
	if len(nrs) > 0 && nrs[0] == 999 {
		return errors.New("no syscall 999")
	}
	c.got = append(c.got, fmt.Sprint(on, nrs))
	return nil
}

// TestCatchSyscalls: QCatchSyscalls+ is advertised by a target that can
// catch syscalls only; its packet sets none, all or some (hex numbers),
// a malformed one is an error, and a syscall stop tells gdb the entry or
// the return and the call's number.
func TestCatchSyscalls(t *testing.T) {
	notAdvertised(t, "QCatchSyscalls", "QCatchSyscalls:1")

	ct := &catchTarget{fakeTarget: newFakeTarget()}
	var refused []string
	c := startServeTarget(t, ct, Options{Refused: func(err error) { refused = append(refused, err.Error()) }})
	if got := c.ask("qSupported:swbreak+"); !strings.Contains(got, ";QCatchSyscalls+") {
		t.Errorf("qSupported: got %q, want QCatchSyscalls+", got)
	}
	for _, pw := range [][2]string{
		{"1", "OK"}, {"1;1;e7", "OK"}, {"0", "OK"},
		{"1;zz", "E01"}, {"2", "E01"}, {"0;1", "E01"}, {"1;3e7", "E01"},
	} {
		c.expect("QCatchSyscalls:"+pw[0], pw[1])
	}
	if got, want := strings.Join(ct.got, " "), "true [] true [1 231] false []"; got != want {
		t.Errorf("CatchSyscalls calls: %s, want %s", got, want)
	}
	if len(refused) != 1 || refused[0] != "no syscall 999" {
		t.Errorf("Options.Refused heard %q, want the target's error", refused)
	}
	c.expect("QCatchSyscalls:1", "OK")
	ct.stops = []Stop{
		{Kind: StopSyscallEntry, Tid: 0x1240, Syscall: 1},
		{Kind: StopSyscallReturn, Tid: 0x1240, Syscall: 0xe7},
	}
	c.expect("Hc-1", "OK")
	if got := c.ask("c"); !strings.HasPrefix(got, "T05") || !strings.Contains(got, "thread:1240;syscall_entry:1;") {
		t.Errorf("c at a syscall's entry: %q, want T05 with thread:1240;syscall_entry:1;", got)
	}
	if got := c.ask("c"); !strings.Contains(got, "syscall_return:e7;") {
		t.Errorf("c at a syscall's return: %q, want syscall_return:e7;", got)
	}
}

// TestClientGoneClears: a client that goes away without detaching (lldb
// or gdb killed) leaves no breakpoint, watchpoint or syscall catching in
// the target, where the next client (--keep-listening) would stop without
// having asked; one it cleared itself is not cleared twice.
func TestClientGoneClears(t *testing.T) {
	ct := &catchTarget{fakeTarget: newFakeTarget()}
	c := startServeTarget(t, ct, Options{})
	c.expect("Z0,401000,1", "OK")
	c.expect("Z0,401010,1", "OK")
	c.expect("z0,401010,1", "OK")
	c.expect("QCatchSyscalls:1", "OK")
	c.conn.Close()
	if r := c.end(); r.end != EndDisconnected {
		t.Errorf("Serve: got %v, want EndDisconnected", r.end)
	}
	want := "set 0 0x401000 1|set 0 0x401010 1|clear 0 0x401010 1|clear 0 0x401000 1"
	if got := strings.Join(ct.calls, "|"); got != want {
		t.Errorf("target calls: %s, want %s", got, want)
	}
	if got, want := strings.Join(ct.got, " "), "true [] false []"; got != want {
		t.Errorf("CatchSyscalls calls: %s, want %s", got, want)
	}
}

// TestMemoryRegionInfo: lldb's qMemoryRegionInfo is answered from the
// process's /proc/PID/maps: a mapping's range, permissions and name (in
// hex), the gap before one, the rest of the address space after the
// last; the empty reply for a target without the file.
func TestMemoryRegionInfo(t *testing.T) {
	ft := newFakeTarget()
	ft.files[fmt.Sprintf("proc/%d/maps", ft.pid)] = &fstest.MapFile{Data: []byte(
		"555555554000-555555555000 r--p 00000000 fd:01 1234  /usr/bin/prog\n" +
			"555555555000-555555556000 r-xp 00001000 fd:01 1234  /usr/bin/prog\n" +
			"7ffff7fc8000-7ffff7fca000 r-xp 00000000 00:00 0  [vdso]\n" +
			"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0  [stack]\n")}
	c := startServe(t, ft, Options{})
	for _, pw := range [][2]string{
		{"555555555010", "start:555555555000;size:1000;permissions:rx;name:" + hexs("/usr/bin/prog") + ";"},
		{"7ffff7fc8000", "start:7ffff7fc8000;size:2000;permissions:rx;name:" + hexs("[vdso]") + ";"},
		{"1000", "start:0;size:555555554000;"},
		{"600000000000", "start:555555556000;size:2aaaa2a72000;"},
		{"7ffffffff000", "start:7ffffffff000;size:ffff800000000fff;"},
		{"zz", "E01"},
	} {
		c.expect("qMemoryRegionInfo:"+pw[0], pw[1])
	}
}
