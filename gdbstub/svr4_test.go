package gdbstub

import (
	"encoding/binary"
	"encoding/xml"
	"testing"
)

// memImage is a sparse fake address space.
type memImage map[uint64][]byte

func (m memImage) put(addr uint64, b []byte) { m[addr] = b }

func (m memImage) u64s(addr uint64, vs ...uint64) {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	m.put(addr, b)
}

func (m memImage) read(addr uint64, b []byte) (int, error) {
	for base, data := range m {
		if addr >= base && addr < base+uint64(len(data)) {
			n := copy(b, data[addr-base:])
			if n < len(b) {
				return n, errShort
			}
			return n, nil
		}
	}
	return 0, errShort
}

var errShort = errNotFramed // any error will do

func phdr(typ uint32, vaddr, memsz uint64) []byte {
	b := make([]byte, phdrSize)
	binary.LittleEndian.PutUint32(b[0:], typ)
	binary.LittleEndian.PutUint64(b[16:], vaddr)
	binary.LittleEndian.PutUint64(b[40:], memsz)
	return b
}

func auxvOf(kv ...uint64) []byte {
	var b []byte
	for _, v := range kv {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(b, 0), 0)
}

// pieImage is a PIE loaded at 0x555555554000 whose dynamic section's
// DT_DEBUG is debug and whose r_debug.r_map is rmap.
func pieImage(debug, rmap uint64) (memImage, []byte) {
	const bias = 0x555555554000
	m := memImage{}
	ph := append(phdr(ptPHDR, 0x40, 2*phdrSize), phdr(ptDynamic, 0x2000, 5*16)...)
	m.put(bias+0x40, ph)
	m.u64s(bias+0x2000, 1, 0x10, 0x6ffffef5, 0x300, dtDebug, debug, dtNull, 0)
	if debug != 0 {
		m.u64s(debug, 1, rmap, 0x7ffff7fd0100, 0, 0x7ffff7ffd000)
	}
	return m, auxvOf(atPHDR, bias+0x40, atPHENT, phdrSize, atPHNUM, 2)
}

func TestSvr4Libraries(t *testing.T) {
	m, auxv := pieImage(0x7ffff7ffe118, 0x7ffff7ffe2e0)
	// main (empty name) → libc → a library with a name to escape → ld.so.
	m.u64s(0x7ffff7ffe2e0, 0, 0x7ffff7fc0000, 0x555555556000, 0x7ffff7fb0000, 0)
	m.u64s(0x7ffff7fb0000, 0x7ffff7d80000, 0x7ffff7fa0000, 0x7ffff7f9bbc0, 0x7ffff7fb0100, 0x7ffff7ffe2e0)
	m.u64s(0x7ffff7fb0100, 0x7ffff7c00000, 0x7ffff7fa0100, 0x7ffff7c10000, 0x7ffff7ffd000, 0x7ffff7fb0000)
	m.u64s(0x7ffff7ffd000, 0x7ffff7fc3000, 0x7ffff7fa0200, 0x7ffff7ffce80, 0, 0x7ffff7fb0100)
	m.put(0x7ffff7fc0000, []byte{0})
	m.put(0x7ffff7fa0000, []byte("/lib/x86_64-linux-gnu/libc.so.6\x00"))
	m.put(0x7ffff7fa0100, []byte("/tmp/a&b<\"c\">.so\x00"))
	m.put(0x7ffff7fa0200, []byte("/lib64/ld-linux-x86-64.so.2\x00junk"))

	mainLM, libs, err := svr4Libraries(auxv, m.read)
	if err != nil {
		t.Fatal(err)
	}
	got := svr4XML(mainLM, libs)
	want := `<library-list-svr4 version="1.0" main-lm="0x7ffff7ffe2e0">` +
		`<library name="/lib/x86_64-linux-gnu/libc.so.6" lm="0x7ffff7fb0000" l_addr="0x7ffff7d80000" l_ld="0x7ffff7f9bbc0" lmid="0x0"/>` +
		`<library name="/tmp/a&amp;b&lt;&quot;c&quot;&gt;.so" lm="0x7ffff7fb0100" l_addr="0x7ffff7c00000" l_ld="0x7ffff7c10000" lmid="0x0"/>` +
		`<library name="/lib64/ld-linux-x86-64.so.2" lm="0x7ffff7ffd000" l_addr="0x7ffff7fc3000" l_ld="0x7ffff7ffce80" lmid="0x0"/>` +
		`</library-list-svr4>`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var doc struct {
		Libs []struct {
			Name string `xml:"name,attr"`
		} `xml:"library"`
	}
	if err := xml.Unmarshal([]byte(got), &doc); err != nil || len(doc.Libs) != 3 || doc.Libs[1].Name != `/tmp/a&b<"c">.so` {
		t.Errorf("parse: %+v, %v", doc, err)
	}
}

func TestSvr4Empty(t *testing.T) {
	const empty = `<library-list-svr4 version="1.0"/>`
	noDebug, auxv1 := pieImage(0, 0)
	noMap, auxv2 := pieImage(0x7ffff7ffe118, 0)
	static := memImage{}
	static.put(0x400040, phdr(ptPHDR, 0x400040, phdrSize))
	cycle, auxv4 := pieImage(0x7ffff7ffe118, 0x7ffff7ffe2e0)
	cycle.u64s(0x7ffff7ffe2e0, 0, 0, 0, 0x7ffff7fb0000, 0)
	cycle.u64s(0x7ffff7fb0000, 0, 0, 0, 0x7ffff7ffe2e0, 0)
	for _, tc := range []struct {
		name    string
		m       memImage
		auxv    []byte
		want    string
		wantErr bool
	}{
		{"DT_DEBUG not set yet", noDebug, auxv1, empty, false},
		{"r_map zero", noMap, auxv2, empty, false},
		{"static", static, auxvOf(atPHDR, 0x400040, atPHNUM, 1), empty, false},
		{"cycle", cycle, auxv4, `<library-list-svr4 version="1.0" main-lm="0x7ffff7ffe2e0"><library name="" lm="0x7ffff7fb0000" l_addr="0x0" l_ld="0x0" lmid="0x0"/></library-list-svr4>`, false},
		{"no auxv", memImage{}, nil, empty, true},
		{"unreadable headers", memImage{}, auxvOf(atPHDR, 0x400040, atPHNUM, 1), empty, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mainLM, libs, err := svr4Libraries(tc.auxv, tc.m.read)
			if (err != nil) != tc.wantErr {
				t.Errorf("err %v, want error %v", err, tc.wantErr)
			}
			if got := svr4XML(mainLM, libs); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestDTDebugSlot: lldb's qShlibInfoAddr wants where DT_DEBUG's value
// lies (the third entry of pieImage's dynamic section), not r_debug.
func TestDTDebugSlot(t *testing.T) {
	m, auxv := pieImage(0x7ffff7ffe118, 0x7ffff7ffe2e0)
	slot, err := dtDebugSlot(auxv, m.read)
	if want := uint64(0x555555554000 + 0x2000 + 2*16 + 8); slot != want || err != nil {
		t.Fatalf("dtDebugSlot = %#x, %v; want %#x", slot, err, want)
	}
	if r, err := rDebugAddr(auxv, m.read); r != 0x7ffff7ffe118 || err != nil {
		t.Errorf("rDebugAddr = %#x, %v; want 0x7ffff7ffe118", r, err)
	}
	ft := newFakeTarget()
	ft.auxv = auxv
	for base, data := range m {
		ft.mem = append(ft.mem, region{base, data})
	}
	c := startServe(t, ft, Options{})
	c.expect("qShlibInfoAddr", "555555556028")
	ft.auxv = auxvOf(atPHDR, 0x400040, atPHNUM, 0) // static: no dynamic section
	c.expect("qShlibInfoAddr", "E01")
}
