package detcore

import (
	"encoding/binary"
	"testing"
)

// fakeELF lays out, at hdr in a fake memory, an ELF64 image whose first
// loaded segment is at vaddr: its header, two PT_LOADs spanning 0x5000
// bytes and a PT_NOTE with a property note and then the build id.
func fakeELF(hdr, vaddr uint64, id []byte) map[uint64]byte {
	le := binary.LittleEndian
	img := make([]byte, 0x1000)
	copy(img, "\x7fELF\x02\x01\x01")
	le.PutUint64(img[0x20:], 64) // e_phoff
	le.PutUint16(img[0x36:], 56) // e_phentsize
	le.PutUint16(img[0x38:], 3)  // e_phnum
	ph := func(i int, typ uint32, off, va, filesz, memsz uint64) {
		p := img[64+56*i:]
		le.PutUint32(p, typ)
		le.PutUint64(p[8:], off)
		le.PutUint64(p[16:], va)
		le.PutUint64(p[32:], filesz)
		le.PutUint64(p[40:], memsz)
	}
	var notes []byte
	note := func(name string, typ uint32, desc []byte) {
		notes = le.AppendUint32(notes, uint32(len(name)+1))
		notes = le.AppendUint32(notes, uint32(len(desc)))
		notes = le.AppendUint32(notes, typ)
		n := append([]byte(name), 0)
		for len(n)%4 != 0 {
			n = append(n, 0)
		}
		notes = append(append(notes, n...), desc...)
		for len(notes)%4 != 0 {
			notes = append(notes, 0)
		}
	}
	note("GNU", 5, make([]byte, 16))
	if id != nil {
		note("GNU", 3, id)
	}
	copy(img[0x200:], notes)
	ph(0, 1, 0, vaddr, 0x1000, 0x1000)
	ph(1, 1, 0x1000, vaddr+0x1000, 0x3000, 0x4000)
	ph(2, 4, 0x200, vaddr+0x200, uint64(len(notes)), uint64(len(notes)))
	mem := map[uint64]byte{}
	for i, b := range img {
		mem[hdr+uint64(i)] = b
	}
	return mem
}

// cut drops mem's bytes from end on.
func cut(mem map[uint64]byte, end uint64) map[uint64]byte {
	for a := range mem {
		if a >= end {
			delete(mem, a)
		}
	}
	return mem
}

func TestELFImage(t *testing.T) {
	id := []byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4}
	cases := []struct {
		name       string
		mem        map[uint64]byte
		hdr        uint64
		key        string
		start, end uint64
	}{
		{"shared object", fakeELF(0x7ffff7fc0000, 0, id), 0x7ffff7fc0000, "build-id deadbeef01020304", 0x7ffff7fc0000, 0x7ffff7fc5000},
		{"executable at its own address", fakeELF(0x400000, 0x400000, id), 0x400000, "build-id deadbeef01020304", 0x400000, 0x405000},
		{"no build id", fakeELF(0x400000, 0x400000, nil), 0x400000, "", 0, 0},
		{"the header's page not all there", cut(fakeELF(0x400000, 0x400000, id), 0x400400), 0x400000, "build-id deadbeef01020304", 0x400000, 0x405000},
		{"nothing there", fakeELF(0x400000, 0x400000, id), 0x500000, "", 0, 0},
		{"not the header", fakeELF(0x400000, 0x400000, id), 0x400040, "", 0, 0},
	}
	for _, c := range cases {
		read := func(addr uint64, n int) []byte {
			b := make([]byte, n)
			for i := range b {
				v, ok := c.mem[addr+uint64(i)]
				if !ok {
					return nil // unmapped
				}
				b[i] = v
			}
			return b
		}
		key, start, end := elfImage(read, c.hdr)
		if key != c.key || start != c.start || end != c.end {
			t.Errorf("%s: %q [%#x, %#x), want %q [%#x, %#x)", c.name, key, start, end, c.key, c.start, c.end)
		}
	}
}

func TestBuildIDNotes(t *testing.T) {
	le := binary.LittleEndian
	huge := le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 4), 1<<31), 3)
	for _, c := range []struct {
		name  string
		notes []byte
	}{
		{"empty", nil},
		{"short", []byte{4, 0, 0}},
		{"a huge descriptor", append(huge, "GNU\x00"...)},
		{"cut short", le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 4), 20), 3)},
	} {
		if id := buildID(c.notes); id != "" {
			t.Errorf("%s: build id %q, want none", c.name, id)
		}
	}
}

// TestPatchAll: the sites learned in an image are patched in another
// program's copy where its code is what it was where they were learned,
// and not within a patch made before; all in one write.
func TestPatchAll(t *testing.T) {
	const start = 0 // codeMem's code is from address 0
	code := make([]byte, 0xa00)
	for i := range code {
		code[i] = 0x90
	}
	put := func(off int, b ...byte) { copy(code[off:], b) }
	put(0x500, 0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20) // learned, the same here
	put(0x504, 0x0f, 0x31)                         // learned elsewhere, within the first's patch here
	put(0x600, 0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20) // learned with other code after it
	put(0x700, 0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20) // learned, the same here
	learned := func(off int, b []byte) learnedSite {
		s := learnedSite{off: uint64(off)}
		copy(s.code[:], b)
		return s
	}
	orig := append([]byte(nil), code...)
	other := append([]byte(nil), orig[0x600:0x600+tscSiteBytes]...)
	other[3] = 0xc9
	sites := []learnedSite{
		learned(0x700, orig[0x700:]),
		learned(0x504, orig[0x504:]),
		learned(0x500, orig[0x500:]),
		learned(0x600, other),
	}
	m := &codeMem{code: code}
	var patched []uint64
	site := func(pc uint64, c []byte) (uint64, []byte, bool) {
		patched = append(patched, pc)
		return pc, []byte{0xe9, 1, 2, 3, 4, 0x90}, true
	}
	var jmps [][2]uint64
	write := func(tid int, at uint64, b []byte, j [][2]uint64) error {
		jmps = j
		return m.WriteMem(tid, at, b)
	}
	if n := patchAll(m, write, 1, start, sites, site); n != 2 || m.writes != 1 || len(jmps) != 2 || jmps[0] != [2]uint64{start + 0x500, 6} {
		t.Errorf("patchAll: %d patched in %d writes, want 2 in 1", n, m.writes)
	}
	if want := []uint64{start + 0x500, start + 0x700}; len(patched) != 2 || patched[0] != want[0] || patched[1] != want[1] {
		t.Errorf("sites patched: %#x, want %#x", patched, want)
	}
	if code[0x500] != 0xe9 || code[0x700] != 0xe9 || code[0x600] != 0x0f {
		t.Errorf("memory after: % x / % x / % x", code[0x500:0x506], code[0x600:0x606], code[0x700:0x706])
	}
}
