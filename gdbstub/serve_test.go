package gdbstub

import (
	"encoding/hex"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// expedited is the rbp, rsp and rip part of a stop reply for ft's thread.
func expedited(ft *fakeTarget, tid int) string {
	r := ft.regs[tid]
	var b []byte
	for _, n := range []int{regRBP, regRSP, regRIP} {
		b = append(b, hexDigits[n>>4], hexDigits[n&15], ':')
		b = appendRegHex(b, r, n)
		b = append(b, ';')
	}
	return string(b)
}

func hexs(s string) string { return hex.EncodeToString([]byte(s)) }

func TestDelveHandshake(t *testing.T) {
	ft := newFakeTarget()
	c := startServe(t, ft, Options{})
	// Delve starts with a lone '+', then turns acks off.
	c.conn.Write([]byte{'+'})
	c.expect("QStartNoAckMode", "OK")
	c.ack = false
	c.expect("QThreadSuffixSupported", "OK")
	sup := c.ask("qSupported:swbreak+;hwbreak+;no-resumed+;xmlRegisters=i386")
	if !strings.HasPrefix(sup, "PacketSize=20000;") || strings.Contains(sup, "multiprocess") ||
		strings.Contains(sup, "QNonStop") || strings.Contains(sup, "Reverse") {
		t.Errorf("qSupported: got %q", sup)
	}
	c.expect("qRegisterInfo0", "")
	xml := c.ask("qXfer:features:read:target.xml:0,fff")
	if !strings.HasPrefix(xml, "l<?xml") || !strings.Contains(xml, `<xi:include href="64bit-core.xml"/>`) ||
		strings.Contains(xml, "xmlns:xi") {
		t.Errorf("target.xml: got %q", xml)
	}
	for _, annex := range []string{"64bit-core.xml", "64bit-sse.xml", "64bit-linux.xml", "64bit-segments.xml"} {
		if got := c.ask("qXfer:features:read:" + annex + ":0,fff"); got != "l"+featureAnnexes[annex] {
			t.Errorf("%s: got %.60q…", annex, got)
		}
	}
	c.expect("QListThreadsInStopReply", "OK")
	c.expect("x0,0", "OK")
	c.expect("qXfer:exec-file:read::0,fff", "l/usr/bin/prog")
	c.expect("qfThreadInfo", "m1234,1240")
	c.expect("qsThreadInfo", "l")
	stop0 := "T05" + expedited(ft, 0x1234) + "thread:1234;threads:1234,1240;thread-pcs:401000,401010;"
	c.expect("qThreadStopInfo1234", stop0)
	c.expect("qThreadStopInfo1240", "T00"+expedited(ft, 0x1240)+"thread:1240;threads:1234,1240;thread-pcs:401000,401010;")
	if got := c.ask("qProcessInfo"); !strings.HasPrefix(got, "pid:1234;") || !strings.Contains(got, "name:"+hexs("/usr/bin/prog")) {
		t.Errorf("qProcessInfo: got %q", got)
	}
	c.expect("qXfer:auxv:read::0,fff", "l"+string(ft.auxv))
	c.expect("_M100,rwx", "")

	// Registers by thread suffix; x reads raw (escaped) bytes.
	g := c.ask("g;thread:1240;")
	if want := string(appendAllRegsHex(nil, ft.regs[0x1240], numRegs)); g != want {
		t.Errorf("g: got %q, want %q", g, want)
	}
	c.expect("p10;thread:1240;", "1010400000000000")
	c.expect("x401000,8", "\x55\x48\x89\xe5#$}*")
	c.expect("m401000,4", "554889e5")
	c.expect("Z0,401000,1", "OK")

	// Run: continue to a breakpoint on the other thread, step, when.
	ft.stops = []Stop{{Kind: StopBreakpoint, Tid: 0x1240, Addr: 0x401010}}
	c.expect("vCont;c", "T05"+expedited(ft, 0x1240)+"thread:1240;swbreak:;threads:1234,1240;thread-pcs:401000,401010;")
	c.expect("vCont;s:1240", "T05"+expedited(ft, 0x1240)+"thread:1240;threads:1234,1240;thread-pcs:401000,401010;")
	ft.when = 42
	c.expect("qRRCmd:when:-1", hexs("Current event: 42\n"))
	c.expect("qRRCmd:"+hexs("when"), hexs("Current event: 42\n"))
	c.expect("k", "X09")
	if r := c.end(); r.end != EndKilled || r.err != nil {
		t.Errorf("Serve: got %v, %v, want EndKilled", r.end, r.err)
	}
	// The breakpoint the client left is taken out as the session ends.
	want := []string{"set 0 0x401000 1", "continue", "step 0x1240", "clear 0 0x401000 1"}
	if strings.Join(ft.calls, "|") != strings.Join(want, "|") {
		t.Errorf("calls: got %q, want %q", ft.calls, want)
	}
}

func TestLLDBHandshake(t *testing.T) {
	ft := newFakeTarget()
	c := startServe(t, ft, Options{})
	c.expect("QStartNoAckMode", "OK") // before qSupported, still acked
	c.ack = false
	sup := c.ask("qSupported:xmlRegisters=i386,arm,mips,arc;multiprocess+;fork-events+;vfork-events+")
	if !strings.Contains(sup, ";multiprocess+") || strings.Contains(sup, "binary-upload") ||
		!strings.Contains(sup, "qXfer:features:read+") {
		t.Errorf("qSupported: got %q", sup)
	}
	c.expect("QThreadSuffixSupported", "OK")
	c.expect("QListThreadsInStopReply", "OK")
	c.expect("vCont?", "vCont;c;C;s;S")
	c.expect("qVAttachOrWaitSupported", "")
	c.expect("QEnableErrorStrings", "OK")
	c.expect("qHostInfo", "triple:"+hexs("x86_64-pc-linux-gnu")+";ptrsize:8;endian:little;ostype:linux;vendor:pc;")
	if got := c.ask("qProcessInfo"); !strings.HasPrefix(got, "pid:1234;ptrsize:8;endian:little;ostype:linux;triple:"+hexs("x86_64-pc-linux-gnu")+";") {
		t.Errorf("qProcessInfo: got %q", got)
	}
	c.expect("qC", "QCp1234.1234")
	tl := "threads:p1234.1234,p1234.1240;thread-pcs:401000,401010;"
	// Told the host is Linux, lldb reads signals as Linux numbers them;
	// its first stop is lldb-server's SIGSTOP (a SIGTRAP at a static
	// program's entry is taken for lldb's entry breakpoint, and the
	// program runs on).
	// lldb-server names the thread (in hex when the name has a
	// character the packet reserves) and describes a fault.
	c.expect("?", "T13"+expedited(ft, 0x1234)+"thread:p1234.1234;name:main;"+tl)
	c.expect("qThreadStopInfo1234", "T13"+expedited(ft, 0x1234)+"thread:p1234.1234;name:main;"+tl)
	c.expect("qfThreadInfo", "mp1234.1234,p1234.1240")
	c.expect("qsThreadInfo", "l")
	if got := c.ask("qXfer:features:read:target.xml:0,20"); got != "m"+targetXML[:0x20] {
		t.Errorf("target.xml piece: got %q", got)
	}
	c.expect("qSymbol::", "OK")
	c.expect("g;thread:p1234.1234;", string(appendAllRegsHex(nil, ft.regs[0x1234], numRegs)))
	c.expect("p7;thread:p1234.1240;", "0000fe7f00000000")
	c.expect("p99;thread:p1234.1240;", "E01")
	c.expect("qMemoryRegionInfo:401000", "")
	c.expect("jThreadsInfo", "")
	c.expect("x0,0", "OK")
	c.expect("qRegisterInfo0", "")
	ft.stops = []Stop{
		{Kind: StopBreakpoint, Tid: 0x1234, Addr: 0x401000},
		{Kind: StopSignal, Tid: 0x1240, Signal: 10}, // SIGUSR1: gdb's 30, lldb's SIGPWR
		{Kind: StopSignal, Tid: 0x1240, Signal: 11},
	}
	// lldb steps over a call continuing the current thread alone: a
	// replay runs every thread, and lldb gets the stop (an error ended
	// its session).
	c.expect("vCont;c:p1234.1234", "T05"+expedited(ft, 0x1234)+"thread:p1234.1234;name:main;swbreak:;"+tl)
	// A signal a process sent (si_code 0) has no description.
	c.expect("vCont;C13:p1234.1234;c", "T0a"+expedited(ft, 0x1240)+"thread:p1234.1240;name:wor<k>er;"+tl)
	ft.threads[1].Name = "w:1"
	ft.siCode, ft.siAddr = 1, 0x10 // SEGV_MAPERR
	c.expect("c", "T0b"+expedited(ft, 0x1240)+"thread:p1234.1240;hexname:"+hexs("w:1")+";description:"+
		hexs("signal SIGSEGV: address not mapped to object (fault address: 0x10)")+";"+tl)
	c.expect("D", "OK")
	// After D the client may still close its files (gdb does), but the
	// target is no longer its own; it ends the session by hanging up.
	c.expect("c", "E01")
	c.expect("vFile:close:63", "F-1,9")
	c.conn.Close()
	if r := c.end(); r.end != EndDetached || r.err != nil {
		t.Errorf("Serve: got %v, %v, want EndDetached", r.end, r.err)
	}
}

func TestDetachedClientThatStaysConnected(t *testing.T) {
	defer func(d time.Duration) { afterDetach = d }(afterDetach)
	afterDetach = 50 * time.Millisecond
	c := startServe(t, newFakeTarget(), Options{})
	c.expect("D", "OK")
	if r := c.end(); r.end != EndDetached || r.err != nil {
		t.Errorf("Serve: got %v, %v, want EndDetached once the client stays silent", r.end, r.err)
	}
}

func TestGDBHandshake(t *testing.T) {
	ft := newFakeTarget()
	var logged []string
	c := startServe(t, ft, Options{Log: func(l string) { logged = append(logged, l) }})
	sup := c.ask("qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+;fork-events+;vfork-events+;exec-events+;vContSupported+;QThreadEvents+;no-resumed+;memory-tagging+;xmlRegisters=i386")
	for _, f := range []string{"PacketSize=20000", "QStartNoAckMode+", "qXfer:features:read+", "qXfer:auxv:read+",
		"qXfer:exec-file:read+", "qXfer:threads:read+", "qXfer:libraries-svr4:read+", "qXfer:siginfo:read+",
		"swbreak+", "hwbreak+", "vContSupported+", "QPassSignals+", "multiprocess+"} {
		if !strings.Contains(";"+sup+";", ";"+f+";") {
			t.Errorf("qSupported: %q lacks %s", sup, f)
		}
	}
	c.expect("vMustReplyEmpty", "")
	c.expect("QStartNoAckMode", "OK")
	c.ack = false
	c.expect("!", "OK")
	c.expect("QProgramSignals:0;1;3;4;6;7;8;9;a;b;c;d;e;f;10;11;12;13;14;15;16;17;18;19;1a;1b;1c;1d;1e;1f;20;21;22;23;24;25;26;27;28;29;2a;2b;2c;2d;2e;2f;30;31;32;33;34;35;36;37;38;39;3a;3b;3c;3d;3e;3f;40;41;42;43;44;45;46;47;48;49;4a;4b;4c;4d;4e;4f;50;51;52;53;54;55;56;57;58;59;5a;5b;5c;5d;5e;5f;60;61;62;63;64;65;66;67;68;69;6a;6b;6c;6d;6e;6f;70;71;72;73;74;75;76;77;78;79;7a;7b;7c;7d;7e;7f;80;81;82;83;84;85;86;87;88;89;8a;8b;8c;8d;8e;8f;90;91;92;93;94;95;96;97;", "OK")
	c.expect("Hgp0.0", "OK")
	if got := c.ask("qXfer:features:read:target.xml:0,ffb"); got != "l"+targetXML {
		t.Errorf("target.xml: got %q", got)
	}
	c.expect("qXfer:features:read:nosuch.xml:0,ffb", "E00")
	c.expect("qTStatus", "")
	tid := "thread:p1234.1234;"
	c.expect("?", "T05"+expedited(ft, 0x1234)+tid)
	thr := c.ask("qXfer:threads:read::0,ffb")
	if !strings.Contains(thr, `<thread id="p1234.1240" core="0" name="wor&lt;k&gt;er"/>`) || thr[0] != 'l' {
		t.Errorf("qXfer:threads: got %q", thr)
	}
	c.expect("qAttached:1234", "1")
	c.expect("qXfer:exec-file:read:1234:0,ffb", "l/usr/bin/prog")
	c.expect("vFile:setfs:0", "F0")
	c.expect("vFile:open:"+hexs("/usr/bin/prog")+",0,1c0", "F3")
	c.expect("vFile:open:"+hexs("/nosuch")+",0,1c0", "F-1,2")
	c.expect("vFile:open:"+hexs("/usr/bin/prog")+",1,1c0", "F-1,d")
	c.expect("vFile:pread:3,3fff,0", "Fc;\x7fELF#$}*rest")
	c.expect("vFile:pread:3,3fff,4", "F8;#$}*rest")
	c.expect("vFile:pread:3,3fff,100", "F0;")
	c.expect("vFile:pread:7,3fff,0", "F-1,9")
	c.expect("vFile:pwrite:3,0,abc", "F-1,d")
	st := c.ask("vFile:fstat:3")
	if !strings.HasPrefix(st, "F40;") || len(st) != 4+64 {
		t.Errorf("fstat: got %q", st)
	} else if mode, size := st[4+8:4+12], st[4+28:4+36]; mode != "\x00\x00\x81\xed" || size != "\x00\x00\x00\x00\x00\x00\x00\x0c" {
		t.Errorf("fstat: got mode %q size %q", mode, size)
	}
	c.expect("vFile:close:3", "F0")
	c.expect("vFile:close:3", "F-1,9")
	c.expect("vFile:readlink:"+hexs("/proc/1/exe"), "")
	c.expect("Hc-1", "OK")
	c.expect("qOffsets", "")
	c.expect("qXfer:auxv:read::0,ffb", "l"+string(ft.auxv))
	c.expect("qXfer:libraries-svr4:read::0,ffb", `l<library-list-svr4 version="1.0"/>`)
	c.expect("qSymbol::", "OK")
	c.expect("Z0,401000,1", "OK")
	c.expect("Z1,401000,1", "") // ErrUnsupported
	c.expect("Z0,0,1", "E01")
	c.expect("z0,401000,1", "OK")
	c.expect("QPassSignals:e;14;", "OK")
	c.expect("vCont?", "vCont;c;C;s;S")
	ft.stops = []Stop{
		{Kind: StopBreakpoint, Tid: 0x1234, Addr: 0x401000},
		{Kind: StopStep, Tid: 0x1234},
		{Kind: StopSignal, Tid: 0x1240, Signal: 10}, // SIGUSR1 is gdb's 30
		{Kind: StopWatch, Tid: 0x1240, Addr: 0x601000, Watch: WatchAccess},
		{Kind: StopExited, ExitCode: 3},
	}
	// Continuing one thread alone (gdb's scheduler-locking) is refused
	// with a line that says why: a replay runs every thread.
	c.expect("vCont;c:p1234.1240", "O"+hexs("hermit: a replay runs every thread as recorded, so it cannot continue one thread alone; "+
		"set scheduler-locking off (or replay) and continue\n"))
	if got := c.recv(); got != "E01" {
		t.Errorf("vCont;c of one thread: final reply %q, want E01", got)
	}
	// Each thread named, as lldb continues: all of them run.
	c.expect("vCont;c:p1234.1234;c:p1234.1240", "T05"+expedited(ft, 0x1234)+tid+"swbreak:;")
	c.expect("vCont;s:p1234.1234", "T05"+expedited(ft, 0x1234)+tid)
	c.expect("vCont;C0e:p1234.1240;c", "T1e"+expedited(ft, 0x1240)+"thread:p1234.1240;")
	c.expect("qXfer:siginfo:read::0,ff", "l\x0a"+strings.Repeat("\x00", 127))
	c.expect("vCont;c", "T05"+expedited(ft, 0x1240)+"thread:p1234.1240;awatch:601000;")
	c.expect("vCont;c", "W03;process:1234")
	c.expect("?", "W03;process:1234")
	c.expect("vCont;c", "W03;process:1234")
	c.expect("qfThreadInfo", "l")
	c.expect("vRun;", "T05"+expedited(ft, 0x1234)+tid)
	// gdb's "run 42" restarts and replays to event 42; other arguments
	// (Delve's "restart c1") are refused.
	c.expect("vRun;"+hexs("/usr/bin/prog")+";"+hexs("42"), "T05"+expedited(ft, 0x1234)+tid)
	c.expect("qRcmd,"+hexs("when"), "O"+hexs("Current event: 42\n"))
	if got := c.recv(); got != "OK" {
		t.Errorf("when: final reply %q", got)
	}
	c.expect("vRun;;"+hexs("c1"), "E01")
	c.expect("vKill;1234", "OK")
	c.expect("?", "X09;process:1234")
	c.expect("qfThreadInfo", "l")
	c.expect("Hgp1234.1234", "E01")
	c.expect("vCont;c", "X09;process:1234")
	c.conn.Close()
	if r := c.end(); r.end != EndKilled || r.err != nil {
		t.Errorf("Serve: got %v, %v, want EndKilled", r.end, r.err)
	}
	if len(logged) == 0 || logged[0] != "<- qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+;fork-events+;vfork-events+;exec-events+;vContSupported+;QThreadEvents+;no-resumed+;memory-tagging+;xmlRegisters=i386" {
		t.Errorf("log starts %q", logged[:min(len(logged), 1)])
	}
}

// TestReadOnlyAndUnknown: writes are refused unless they change nothing,
// and each refusal of a user's request (a write, a breakpoint the target
// could not set) reaches Options.Refused with why, which a client never
// shows (gdb 13 prints only the code); a client's own guess at address 0
// does not.
func TestReadOnlyAndUnknown(t *testing.T) {
	ft := newFakeTarget()
	var refused []string
	c := startServe(t, ft, Options{Refused: func(err error) { refused = append(refused, err.Error()) }})
	for _, tc := range []struct{ pkt, want string }{
		{"G00", "E01"},
		{"P10=0000000000000000", "E01"},
		{"M401000,1:00", "E01"},
		{"X401000,1:\x00", "E01"},
		{"vAttach;1234", "E01"},
		{"qNoSuchThing", ""},
		{"Qfoo", ""},
		{"bc", ""},
		{"jThreadExtendedInfo:{\"thread\":1}]", ""},
		{"qCRC:0,1", ""},
		{"m0,8", "E01"},
		{"m401008,8", "90c3"},
		{"mzz", "E01"},
		{"Hg999", "E01"},
		{"Hgp1234.1240", "OK"},
		{"g", string(appendAllRegsHex(nil, ft.regs[0x1240], numRegs))},
		// Writes that change nothing are accepted: the value a register
		// has, all of them, and gdb's orig_rax = -1 at a vRun.
		{"P10=" + string(appendRegHex(nil, ft.regs[0x1240], 16)), "OK"},
		{"P10=" + string(appendRegHex(nil, ft.regs[0x1234], 16)), "E01"},
		{"P39=ffffffffffffffff", "OK"},
		{"G" + string(appendAllRegsHex(nil, ft.regs[0x1240], numRegs)), "OK"},
		{"P3c=00", "E01"},
		{"T1240", "OK"},
		{"T999", "E01"},
		{"Hx1", "E01"},
		{"vCont;q", "E01"},
		{"c401000", "E01"},
		{"qRRCmd:frobnicate:-1", "E01"},
		{"qXfer:features:write:target.xml:0:abc", ""},
		{"qXfer:auxv:read::zz", "E01"},
		{"Z0,dead0000,1", "E01"},
		{"z0,dead0000,1", "OK"},
		// lldb 14's guess on a static program: not a user's request.
		{"Z0,0,1", "E01"},
	} {
		c.expect(tc.pkt, tc.want)
	}
	reg, mem := errRegReadOnly.Error(), errMemReadOnly.Error()
	want := []string{reg, reg, mem, mem, reg, "no memory there"}
	if strings.Join(refused, "\n") != strings.Join(want, "\n") {
		t.Errorf("Options.Refused heard:\n%s\nwant:\n%s", strings.Join(refused, "\n"), strings.Join(want, "\n"))
	}
}

// TestAnyThreadAfterGoto: "any thread" (no Hg, or Hg0) is the thread the
// last stop reply named, also after a monitor goto took the replay to
// another thread's event: the client keeps that one selected, and files
// what g answers under it (it showed another thread's registers).
func TestAnyThreadAfterGoto(t *testing.T) {
	ft := newFakeTarget()
	c := startServe(t, ft, Options{})
	ft.stops = []Stop{{Kind: StopSignal, Tid: 0x1240, Signal: 10}}
	c.expect("c", "T1e"+expedited(ft, 0x1240)+"thread:1240;")
	worker := string(appendAllRegsHex(nil, ft.regs[0x1240], numRegs))
	c.expect("qRcmd,"+hexs("goto 9"), "O"+hexs("At event 9, thread 4660, pc 0x401000.\n"))
	if got := c.recv(); got != "OK" {
		t.Fatalf("goto: final reply %q", got)
	}
	c.expect("g", worker)
	c.expect("Hg0", "OK")
	c.expect("g", worker)
	c.expect("Hg1234", "OK")
	c.expect("g", string(appendAllRegsHex(nil, ft.regs[0x1234], numRegs)))
}

func TestMonitor(t *testing.T) {
	ft := newFakeTarget()
	c := startServe(t, ft, Options{})
	ft.when = 7
	c.expect("qRcmd,"+hexs("when"), "O"+hexs("Current event: 7\n"))
	if got := c.recv(); got != "OK" {
		t.Errorf("when: final reply %q", got)
	}
	c.expect("qRcmd,"+hexs("goto 99"), "O"+hexs("At event 99, thread 4660, pc 0x401000.\n"))
	if got := c.recv(); got != "OK" {
		t.Errorf("goto: final reply %q", got)
	}
	if ft.when != 99 {
		t.Errorf("goto: when is %d", ft.when)
	}
	// An event the replay passes (a host's answer): the next one, said so.
	ft.passed = map[uint64]bool{50: true}
	c.expect("qRcmd,"+hexs("goto 50"), "O"+hexs("At event 51, thread 4660, pc 0x401000 (event 50 is not one a replay stops at: this is the next that is).\n"))
	if got := c.recv(); got != "OK" {
		t.Errorf("goto: final reply %q", got)
	}
	help := c.ask("qRcmd," + hexs("help"))
	if b, _ := hex.DecodeString(help[1:]); !strings.Contains(string(b), "goto N") {
		t.Errorf("help: got %q", b)
	}
	c.recv()
	c.expect("qRcmd,"+hexs("bogus 1"), "O"+hexs("unknown monitor command \"bogus\"; \"monitor help\" lists them\n"))
	if got := c.recv(); got != "E01" {
		t.Errorf("bogus: final reply %q", got)
	}
}

func TestFramingOverTheWire(t *testing.T) {
	ft := newFakeTarget()
	c := startServe(t, ft, Options{})
	c.conn.SetDeadline(time.Now().Add(5 * time.Second))
	// Garbage, then a packet with a bad checksum: '-' and no reply.
	c.conn.Write([]byte("garbage\x00\xff$qC#00"))
	if b, _ := c.r.ReadByte(); b != '-' {
		t.Fatalf("bad checksum: got %q, want '-'", b)
	}
	// A run-length encoded packet: "0* " is four '0's (' ' is 32: 32-29
	// more), so this is "m401000,00004".
	c.conn.Write(appendFrame(nil, []byte("m401000,0* 4")))
	if b, _ := c.r.ReadByte(); b != '+' {
		t.Fatalf("rle: got %q, want '+'", b)
	}
	if got := c.recv(); got != "554889e5" {
		t.Errorf("rle: got %q", got)
	}
	// A '-' makes the stub send its last reply again.
	c.conn.Write([]byte("-"))
	if got := c.recv(); got != "554889e5" {
		t.Errorf("resend: got %q", got)
	}
	// An oversize packet is refused and dropped.
	big := append([]byte("$m"), make([]byte, packetSize+10)...)
	for i := range big[2:] {
		big[2+i] = '0'
	}
	big = append(big, "#00"...)
	go c.conn.Write(big)
	if b, _ := c.r.ReadByte(); b != '-' {
		t.Fatalf("oversize: got %q, want '-'", b)
	}
	c.expect("qC", "QC1234")
}

func TestInterrupt(t *testing.T) {
	ft := newFakeTarget()
	ft.block = true
	c := startServe(t, ft, Options{})
	c.expect("QStartNoAckMode", "OK")
	c.ack = false
	c.send("vCont;c")
	select {
	case <-ft.started:
	case <-time.After(5 * time.Second):
		t.Fatal("Continue was not called")
	}
	c.conn.Write([]byte{0x03})
	if got, want := c.recv(), "T02"+expedited(ft, 0x1234)+"thread:1234;"; got != want {
		t.Errorf("^C: got %q, want %q", got, want)
	}
	// A ^C that comes right after a resume packet, before it runs, still
	// stops it.
	ft.block = false
	c.conn.Write(append(appendFrame(nil, []byte("c")), 0x03))
	if got := c.recv(); !strings.HasPrefix(got, "T") {
		t.Errorf("c then ^C: got %q", got)
	}
}

// waitGoroutines waits for the goroutine count to drop to n.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, want %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDisconnectMidPacket(t *testing.T) {
	before := runtime.NumGoroutine()
	ft := newFakeTarget()
	c := startServe(t, ft, Options{})
	c.conn.Write([]byte("$qSupp"))
	c.conn.Close()
	if r := c.end(); r.end != EndDisconnected || r.err != nil {
		t.Errorf("Serve: got %v, %v, want EndDisconnected", r.end, r.err)
	}
	waitGoroutines(t, before)
}

func TestDisconnectWhileRunning(t *testing.T) {
	before := runtime.NumGoroutine()
	ft := newFakeTarget()
	ft.block = true
	c := startServe(t, ft, Options{})
	c.send("vCont;c")
	<-ft.started
	c.conn.Close()
	if r := c.end(); r.end != EndDisconnected || r.err != nil {
		t.Errorf("Serve: got %v, %v, want EndDisconnected", r.end, r.err)
	}
	waitGoroutines(t, before)
}

func TestBinaryReadStartingWithE(t *testing.T) {
	ft := newFakeTarget()
	ft.mem = append(ft.mem, region{0x500000, []byte("E01x")})
	c := startServe(t, ft, Options{})
	// Decoded it is the memory; on the wire it does not start with 'E'.
	c.send("x500000,4")
	c.conn.SetDeadline(time.Now().Add(5 * time.Second))
	raw := make([]byte, 6)
	if _, err := io.ReadFull(c.r, raw); err != nil || string(raw) != "$}e01x" {
		t.Errorf("x: got %q, %v", raw, err)
	}
	c.r.Discard(3)
	c.conn.Write([]byte{'+'})
	c.expect("qSupported:binary-upload+", c.ask("qSupported:binary-upload+"))
	c.expect("x500000,4", "bE01x")
	c.expect("x500000,0", "b")
}

// TestStopSelectsThread: after a stop reply, registers are the stopped
// thread's, whatever Hg chose before (gdb asks with a bare g).
func TestStopSelectsThread(t *testing.T) {
	ft := newFakeTarget()
	c := startServe(t, ft, Options{})
	c.expect("Hg1234", "OK")
	ft.stops = []Stop{{Kind: StopBreakpoint, Tid: 0x1240, Addr: 0x401010}}
	c.expect("vCont;c", "T05"+expedited(ft, 0x1240)+"thread:1240;swbreak:;")
	c.expect("g", string(appendAllRegsHex(nil, ft.regs[0x1240], numRegs)))
}

// TestDelveRestart: Delve's restart is "vRun;" and one vCont;c, after
// which it wants the program at its start; gdb's continue after its vRun
// runs, whether it names the program or not.
func TestDelveRestart(t *testing.T) {
	ft := newFakeTarget()
	c := startServe(t, ft, Options{})
	start := "T05" + expedited(ft, 0x1234) + "thread:1234;"
	c.expect("vRun;", start)
	c.expect("vCont;c", start)
	ft.stops = []Stop{{Kind: StopBreakpoint, Tid: 0x1240, Addr: 0x401010}}
	c.expect("vCont;c", "T05"+expedited(ft, 0x1240)+"thread:1240;swbreak:;")
	if n := strings.Count(strings.Join(ft.calls, " "), "continue"); n != 1 {
		t.Errorf("the target continued %d times, want once (calls %q)", n, ft.calls)
	}
	c.expect("vRun;"+hexs("/usr/bin/prog")+";", start)
	ft.stops = []Stop{{Kind: StopBreakpoint, Tid: 0x1240, Addr: 0x401010}}
	c.expect("vCont;c", "T05"+expedited(ft, 0x1240)+"thread:1240;swbreak:;")

	// gdb without a remote exec-file names no program either; its
	// continue after run or start runs.
	g := startServe(t, ft, Options{})
	g.ask("qSupported:swbreak+;hwbreak+;qRelocInsn+;vContSupported+")
	g.expect("vRun;", start)
	ft.stops = []Stop{{Kind: StopBreakpoint, Tid: 0x1240, Addr: 0x401010}}
	g.expect("vCont;c", "T05"+expedited(ft, 0x1240)+"thread:1240;swbreak:;")
}

// TestLLDBAllocationIsNoWrite: lldb's expressions ask to allocate memory
// (_M: unsupported), then try a call of mmap in the process, whose first
// register write is refused without a word to the user (who asked for an
// expression, not a write); a register write after that is the user's,
// and is said.
func TestLLDBAllocationIsNoWrite(t *testing.T) {
	ft := newFakeTarget()
	var refused []string
	c := startServe(t, ft, Options{Refused: func(err error) { refused = append(refused, err.Error()) }})
	c.expect("QThreadSuffixSupported", "OK")
	c.expect("_M1000,rwx", "")
	c.expect("P5=efbeadde00000000;thread:1240;", "E01")
	if len(refused) != 0 {
		t.Errorf("lldb's own register write was said to the user: %q", refused)
	}
	c.expect("P0=efbeadde00000000;thread:1240;", "E01")
	if len(refused) != 1 || !strings.Contains(refused[0], "change a register") {
		t.Errorf("the user's register write: Options.Refused heard %q, want one line about a register", refused)
	}
}

// TestJSONClient: a client whose first bytes are JSON (dlv connect,
// Delve's own protocol, which waits for an answer for ever) ends the
// session at once with an error that says what to use.
func TestJSONClient(t *testing.T) {
	c := startServe(t, newFakeTarget(), Options{})
	c.conn.Write([]byte(`{"method":"RPCServer.SetApiVersion","params":[{"APIVersion":2}],"id":0}`))
	r := c.end()
	if r.end != EndDisconnected || !errors.Is(r.err, ErrJSONClient) {
		t.Errorf("Serve: %v, %v; want EndDisconnected, ErrJSONClient", r.end, r.err)
	}
}

// TestRefuse: a client turned away gets an error reply to its first
// packet that says why, which gdb shows ("Remote failure reply").
func TestRefuse(t *testing.T) {
	server, client := net.Pipe()
	done := make(chan struct{})
	go func() {
		Refuse(server, "busy: one #1 at a time", 5*time.Second)
		server.Close()
		close(done)
	}()
	if _, err := client.Write(appendFrame([]byte{'+'}, []byte("qSupported:multiprocess+"))); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(client)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	want := string(appendFrame([]byte{'+'}, []byte("E.busy: one }\x031 at a time")))
	if string(got) != want {
		t.Errorf("reply %q, want %q", got, want)
	}
}
