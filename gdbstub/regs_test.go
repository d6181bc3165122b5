package gdbstub

import (
	"encoding/binary"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
)

func TestGDBSignal(t *testing.T) {
	for _, tc := range []struct {
		name       string
		linux, gdb int
	}{
		{"none", 0, 0},
		{"SIGHUP", 1, 1},
		{"SIGINT", 2, 2},
		{"SIGTRAP", 5, 5},
		{"SIGABRT", 6, 6},
		{"SIGBUS", 7, 10},
		{"SIGKILL", 9, 9},
		{"SIGUSR1", 10, 30},
		{"SIGSEGV", 11, 11},
		{"SIGUSR2", 12, 31},
		{"SIGPIPE", 13, 13},
		{"SIGSTKFLT", 16, 143},
		{"SIGCHLD", 17, 20},
		{"SIGCONT", 18, 19},
		{"SIGSTOP", 19, 17},
		{"SIGTSTP", 20, 18},
		{"SIGURG", 23, 16},
		{"SIGIO", 29, 23},
		{"SIGPWR", 30, 32},
		{"SIGSYS", 31, 12},
		{"SIGRTMIN", 32, 77},
		{"SIGRTMIN+1", 33, 45},
		{"SIGRTMIN+2", 34, 46},
		{"SIGRTMAX-1", 63, 75},
		{"SIGRTMAX", 64, 78},
		{"out of range", 65, 143},
		{"negative", -1, 143},
	} {
		if got := gdbSignal(tc.linux); got != tc.gdb {
			t.Errorf("%s (%d): got %d, want %d", tc.name, tc.linux, got, tc.gdb)
		}
	}
}

// testRegisters is a register file with distinct values everywhere.
func testRegisters() *Registers {
	r := &Registers{
		Rax: 0x1122334455667788, Rbx: 1, Rcx: 2, Rdx: 3, Rsi: 4, Rdi: 5, Rbp: 6, Rsp: 7,
		R8: 8, R9: 9, R10: 10, R11: 11, R12: 12, R13: 13, R14: 14, R15: 0xffffffffffffffff,
		Rip: 0x401000, Eflags: 0x246, Cs: 0x33, Ss: 0x2b, Ds: 0, Es: 0, Fs: 0, Gs: 0,
		FsBase: 0x7f0011223344, GsBase: 0, OrigRax: 0xffffffffffffffff, HaveFP: true,
	}
	fx := r.FXSave[:]
	le := binary.LittleEndian
	le.PutUint16(fx[fxFCW:], 0x037f)
	le.PutUint16(fx[fxFSW:], 0x3800) // TOP = 7
	fx[fxFTW] = 0x80                 // physical register 7 in use: ST(0)
	le.PutUint16(fx[fxFOP:], 0xf8dd) // fop keeps 11 bits: 0x0dd
	le.PutUint64(fx[fxFIP:], 0x0000001100401234)
	le.PutUint64(fx[fxFDP:], 0x0000002200601000)
	le.PutUint32(fx[fxMXCSR:], 0x1f80)
	// ST(0) = 1.0: exponent 0x3fff, integer bit set.
	le.PutUint64(fx[fxST0:], 0x8000000000000000)
	le.PutUint16(fx[fxST0+8:], 0x3fff)
	for i := range 16 {
		fx[fxXMM0+16*i] = byte(i + 1)
	}
	return r
}

func TestRegisterEncoding(t *testing.T) {
	r := testRegisters()
	want := strings.Join([]string{
		"8877665544332211", "0100000000000000", "0200000000000000", "0300000000000000",
		"0400000000000000", "0500000000000000", "0600000000000000", "0700000000000000",
		"0800000000000000", "0900000000000000", "0a00000000000000", "0b00000000000000",
		"0c00000000000000", "0d00000000000000", "0e00000000000000", "ffffffffffffffff",
		"0010400000000000", // rip
		"46020000",         // eflags
		"33000000", "2b000000", "00000000", "00000000", "00000000", "00000000",
		"0000000000000080ff3f", // st0 = 1.0
		strings.Repeat("00", 10*7),
		"7f030000", // fctrl
		"00380000", // fstat
		"ff3f0000", // ftag: physical 7 valid (00), the others empty (11)
		"11000000", // fiseg: the FCS slot, the 64-bit FIP's high word here
		"34124000", // fioff
		"22000000", // foseg: likewise FDP's
		"00106000", // fooff
		"dd000000", // fop
		"01" + strings.Repeat("00", 15), "02" + strings.Repeat("00", 15),
		"03" + strings.Repeat("00", 15), "04" + strings.Repeat("00", 15),
		"05" + strings.Repeat("00", 15), "06" + strings.Repeat("00", 15),
		"07" + strings.Repeat("00", 15), "08" + strings.Repeat("00", 15),
		"09" + strings.Repeat("00", 15), "0a" + strings.Repeat("00", 15),
		"0b" + strings.Repeat("00", 15), "0c" + strings.Repeat("00", 15),
		"0d" + strings.Repeat("00", 15), "0e" + strings.Repeat("00", 15),
		"0f" + strings.Repeat("00", 15), "10" + strings.Repeat("00", 15),
		"801f0000",         // mxcsr
		"ffffffffffffffff", // orig_rax
		"44332211007f0000", // fs_base
		"0000000000000000", // gs_base
	}, "")
	if got := string(appendAllRegsHex(nil, r, numRegs)); got != want {
		t.Errorf("g:\n got %s\nwant %s", got, want)
	}
	total := 0
	for _, ri := range amd64Regs[:numRegs] {
		total += ri.size
	}
	if len(want) != 2*total || total != 560 {
		t.Errorf("g is %d bytes, registers %d, want 560", len(want)/2, total)
	}

	// With AVX, the ymm halves follow, "xx"s when they were not read.
	r.YMMHigh[0][0], r.YMMHigh[15][15] = 0xa1, 0xf9
	g := string(appendAllRegsHex(nil, r, numAVXRegs))
	if g[:len(want)] != want || g[len(want):] != strings.Repeat("x", 2*16*16) {
		t.Errorf("g, AVX not read: got %s", g[len(want):])
	}
	r.HaveAVX = true
	wantAVX := "a1" + strings.Repeat("00", 16*16-2) + "f9"
	if g := string(appendAllRegsHex(nil, r, numAVXRegs)); g != want+wantAVX {
		t.Errorf("g with AVX: got %s", g[len(want):])
	}
	if got := string(appendRegHex(nil, r, regYMM0H+15)); got != strings.Repeat("00", 15)+"f9" {
		t.Errorf("p4b (ymm15h): got %s", got)
	}

	// Without FP state the x87 and SSE registers are unavailable.
	r.HaveFP = false
	g = string(appendAllRegsHex(nil, r, numRegs))
	fpStart, fpEnd := 2*(17*8+7*4), 2*(17*8+7*4+8*10+8*4+16*16+4)
	if g[:fpStart] != want[:fpStart] || g[fpEnd:] != want[fpEnd:] ||
		g[fpStart:fpEnd] != strings.Repeat("x", fpEnd-fpStart) {
		t.Errorf("g without FP:\n got %s", g)
	}
	if got := string(appendRegHex(nil, r, regRIP)); got != "0010400000000000" {
		t.Errorf("p10: got %s", got)
	}
	if got := string(appendRegHex(nil, r, regMXCSR)); got != "xxxxxxxx" {
		t.Errorf("p38 without FP: got %s", got)
	}
}

func TestTagWord(t *testing.T) {
	ext := func(mant uint64, exp uint16) []byte {
		b := binary.LittleEndian.AppendUint64(nil, mant)
		return binary.LittleEndian.AppendUint16(b, exp)
	}
	for _, tc := range []struct {
		name string
		raw  []byte
		want uint32
	}{
		{"one", ext(1<<63, 0x3fff), 0},
		{"minus two", ext(1<<63, 0xc000), 0},
		{"zero", ext(0, 0), 1},
		{"minus zero", ext(0, 0x8000), 1},
		{"denormal", ext(1, 0), 2},
		{"infinity", ext(1<<63, 0x7fff), 2},
		{"nan", ext(3<<62, 0x7fff), 2},
		{"unnormal", ext(1, 0x3fff), 2},
	} {
		if got := x87Tag(tc.raw); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}

	// TOP = 6: physical 6 is ST(0) (valid), physical 7 is ST(1) (zero);
	// the rest are empty.
	var fx [512]byte
	binary.LittleEndian.PutUint16(fx[fxFSW:], 6<<11)
	fx[fxFTW] = 0xc0
	copy(fx[fxST0:], ext(1<<63, 0x3fff))
	copy(fx[fxST0+16:], ext(0, 0))
	if got, want := fullTagWord(fx), uint32(0x4fff); got != want {
		t.Errorf("tag word: got %#x, want %#x", got, want)
	}
	if got := fullTagWord([512]byte{}); got != 0xffff {
		t.Errorf("empty tag word: got %#x, want 0xffff", got)
	}
}

// xmlReg is a <reg> of an annex.
type xmlReg struct {
	Name    string `xml:"name,attr"`
	Bitsize int    `xml:"bitsize,attr"`
	Regnum  string `xml:"regnum,attr"`
}

func TestTargetXML(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		regs      int
	}{
		{"without AVX", targetXML, numRegs},
		{"with AVX", targetAVXXML, numAVXRegs},
	} {
		t.Run(tc.name, func(t *testing.T) { checkTargetXML(t, tc.doc, tc.regs) })
	}
}

// checkTargetXML checks that target.xml doc and its annexes describe the
// first count registers of a 'g' reply, in order.
func checkTargetXML(t *testing.T, doc string, count int) {
	var target struct {
		XMLName      xml.Name
		Architecture string `xml:"architecture"`
		OSABI        string `xml:"osabi"`
		Includes     []struct {
			Href string `xml:"href,attr"`
		} `xml:"xi include"`
	}
	if err := xml.Unmarshal([]byte(doc), &target); err != nil {
		t.Fatalf("target.xml: %v", err)
	}
	if target.XMLName.Local != "target" || target.Architecture != "i386:x86-64" || target.OSABI != "GNU/Linux" {
		t.Errorf("target.xml: got %+v", target)
	}
	if strings.Contains(doc, "xmlns") {
		t.Error("target.xml declares a namespace: Delve would ignore its includes")
	}
	var regs []xmlReg
	features := map[string]string{}
	for _, inc := range target.Includes {
		doc, ok := featureAnnexes[inc.Href]
		if !ok {
			t.Fatalf("target.xml includes %q, which is not served", inc.Href)
		}
		var f struct {
			XMLName xml.Name
			Name    string   `xml:"name,attr"`
			Regs    []xmlReg `xml:"reg"`
		}
		if err := xml.Unmarshal([]byte(doc), &f); err != nil {
			t.Fatalf("%s: %v", inc.Href, err)
		}
		if f.XMLName.Local != "feature" {
			t.Errorf("%s: root is %q", inc.Href, f.XMLName.Local)
		}
		features[f.Name] = inc.Href
		regs = append(regs, f.Regs...)
	}
	for _, name := range []string{"org.gnu.gdb.i386.core", "org.gnu.gdb.i386.sse", "org.gnu.gdb.i386.linux", "org.gnu.gdb.i386.segments"} {
		if features[name] == "" {
			t.Errorf("no feature %s", name)
		}
	}
	if len(regs) != count {
		t.Fatalf("target.xml describes %d registers, g has %d", len(regs), count)
	}
	// lldb 19 shows a code_ptr register's symbol twice (its format, and
	// register read's own lookup of the pc) unless the format is given.
	if !strings.Contains(featureAnnexes[features["org.gnu.gdb.i386.core"]], `name="rip" bitsize="64" type="code_ptr" format="hex"`) {
		t.Error(`rip is a code_ptr without format="hex": lldb 19's register read shows its symbol twice`)
	}
	for i, reg := range regs {
		if reg.Name != amd64Regs[i].name || reg.Bitsize != 8*amd64Regs[i].size || reg.Regnum != strconv.Itoa(i) {
			t.Errorf("register %d: xml %+v, g has %+v", i, reg, amd64Regs[i])
		}
	}
}

// TestAVXDescription: target.xml has the ymm halves when the CPU has them
// (the threads' registers say), and then 'g' carries them and 'p' reads
// them; without, 'g' is as long as the description without them.
func TestAVXDescription(t *testing.T) {
	for _, avx := range []bool{false, true} {
		ft := newFakeTarget()
		for _, r := range ft.regs {
			r.HaveFP, r.HaveAVX = true, avx
			r.YMMHigh[3][0] = 0x33
		}
		c := startServe(t, ft, Options{})
		c.expect("QStartNoAckMode", "OK")
		c.ack = false
		doc := c.ask("qXfer:features:read:target.xml:0,fff")
		if got := strings.Contains(doc, `href="64bit-avx.xml"`); got != avx {
			t.Errorf("AVX %v: target.xml includes 64bit-avx.xml: %v", avx, got)
		}
		want := string(appendAllRegsHex(nil, ft.regs[0x1234], numRegs))
		p := "E01"
		if avx {
			want = string(appendAllRegsHex(nil, ft.regs[0x1234], numAVXRegs))
			p = "33" + strings.Repeat("00", 15)
		}
		c.expect("g", want)
		c.expect("p3f", p) // ymm3h
	}
}
