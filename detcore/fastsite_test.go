package detcore

import (
	"bytes"
	"testing"
)

// codeMem is a tracer of one address space's code: its ReadMem and
// WriteMem count what the engine reads and writes (the other methods are
// not called).
type codeMem struct {
	Tracer
	code          []byte // from address 0
	reads, writes int
}

func (m *codeMem) ReadMem(_ int, addr uint64, b []byte) error {
	m.reads++
	copy(b, m.code[addr:])
	return nil
}

func (m *codeMem) WriteMem(_ int, addr uint64, b []byte) error {
	m.writes++
	copy(m.code[addr:], b)
	return nil
}

// TestPatchSiteOnce: a trapped call's site is read and patched once; the
// calls that still trap there (through the patch, or at code that is not
// the pattern) read no code again; the futex and the write kind of one
// site are decided apart.
func TestPatchSiteOnce(t *testing.T) {
	pattern := []byte{0xb8, 0xca, 0, 0, 0, 0x0f, 0x05}
	mem := &codeMem{code: make([]byte, 0x100)}
	copy(mem.code[0x40-len(pattern):], pattern) // a site whose syscall ends at 0x40
	copy(mem.code[0x80-2:], []byte{0x0f, 0x05}) // one that is not the pattern
	site := func(pc uint64, code []byte) (uint64, []byte, bool) {
		if !bytes.HasSuffix(code, pattern) {
			return 0, nil, false
		}
		return pc - 7, []byte{0xe9, 1, 2, 3, 4}, true
	}
	e := &Engine{t: mem}
	c := NewClockPage(make([]byte, ClockPageSize), nil)
	call := func(pc uint64, futex bool) {
		th := &thread{}
		th.regs.Rip = pc
		e.patchSite(th, c, siteKey{pc: pc, futex: futex}, site)
	}
	for i := 0; i < 3; i++ {
		call(0x40, true)
		call(0x80, true)
	}
	// 0x40: read and patched, read once more (the call through the
	// patch); 0x80: read once.
	if mem.reads != 3 || mem.writes != 1 || e.result.Stats.FastSites != 1 {
		t.Errorf("3 calls at each of two sites: %d code reads, %d patches (%d counted), want 3 reads, 1 patch", mem.reads, mem.writes, e.result.Stats.FastSites)
	}
	call(0x80, false)
	call(0x80, false)
	if mem.reads != 4 {
		t.Errorf("a write at a site already decided for futex calls: %d code reads in all, want 4 (read once for its kind)", mem.reads)
	}
}
