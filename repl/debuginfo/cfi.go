package debuginfo

import (
	"debug/elf"
	"errors"
	"fmt"
	"sort"
)

// This file parses DWARF call frame information (.eh_frame and
// .debug_frame) into FDEs and interprets their instructions into the
// unwind rules at a PC.

// Caps on CFI work.
const (
	maxFDEs       = 1 << 21
	maxCFIOps     = 1 << 16
	maxStateStack = 64
	numRegs       = 17 // DWARF x86-64 registers 0..15 (rax…r15) and 16 (return address)
	regRSP        = 7
	regRBP        = 6
	regRA         = 16
)

var errCFI = errors.New("malformed CFI")

// cie is a common information entry.
type cie struct {
	codeAlign uint64
	dataAlign int64
	raReg     uint64
	fdeEnc    byte // pointer encoding of FDE addresses
	addrSize  int
	signal    bool // 'S': FDEs describe signal frames
	hasZ      bool // 'z': FDEs carry augmentation data
	initial   []byte
}

// fde is a frame description entry at link-time addresses.
type fde struct {
	begin, end uint64
	cie        *cie
	insns      []byte
	insnsAddr  uint64 // link-time address of insns[0], for pcrel DW_CFA_set_loc
}

// cfiTable holds a module's FDEs, each list sorted by begin.
type cfiTable struct {
	eh, debug []fde
}

// cfiFor returns the module's CFI, parsing it on first use.
func (m *module) cfiFor() *cfiTable {
	m.cfiOnce.Do(func() {
		t := &cfiTable{}
		_ = guard(func() {
			if s := m.f.Section(".eh_frame"); s != nil && s.Type != elf.SHT_NOBITS && s.Size < maxSection {
				if b, err := s.Data(); err == nil {
					t.eh, _ = parseCFI(b, s.Addr, true)
				}
			}
			if s := m.f.Section(".debug_frame"); s != nil && s.Type != elf.SHT_NOBITS && s.Size < maxSection {
				if b, err := s.Data(); err == nil {
					t.debug, _ = parseCFI(b, s.Addr, false)
				}
			}
		})
		m.cfi = t
	})
	return m.cfi
}

// find returns the FDE covering the link-time address pc.
func (t *cfiTable) find(pc uint64) (*fde, bool) {
	for _, list := range [][]fde{t.eh, t.debug} {
		i := sort.Search(len(list), func(i int) bool { return list[i].begin > pc })
		if i > 0 && pc < list[i-1].end {
			return &list[i-1], true
		}
	}
	return nil, false
}

// cursor reads little-endian DWARF encodings; any overrun sets bad.
type cursor struct {
	b   []byte
	off int
	bad bool
}

func (c *cursor) need(n int) bool {
	if n < 0 || c.off+n > len(c.b) || c.off+n < c.off {
		c.bad = true
		c.off = len(c.b)
		return false
	}
	return true
}

func (c *cursor) u8() byte {
	if !c.need(1) {
		return 0
	}
	c.off++
	return c.b[c.off-1]
}

func (c *cursor) u16() uint64 {
	if !c.need(2) {
		return 0
	}
	c.off += 2
	return uint64(le.Uint16(c.b[c.off-2:]))
}

func (c *cursor) u32() uint64 {
	if !c.need(4) {
		return 0
	}
	c.off += 4
	return uint64(le.Uint32(c.b[c.off-4:]))
}

func (c *cursor) u64() uint64 {
	if !c.need(8) {
		return 0
	}
	c.off += 8
	return le.Uint64(c.b[c.off-8:])
}

func (c *cursor) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := c.u8()
		if c.bad {
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		if b&0x80 == 0 {
			return v
		}
	}
}

func (c *cursor) sleb() int64 {
	var v int64
	shift := uint(0)
	for {
		b := c.u8()
		if c.bad {
			return 0
		}
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

func (c *cursor) bytes(n uint64) []byte {
	if n > uint64(len(c.b)) || !c.need(int(n)) {
		c.bad = true
		return nil
	}
	c.off += int(n)
	return c.b[c.off-int(n) : c.off]
}

func (c *cursor) cstr() string {
	for i := c.off; i < len(c.b); i++ {
		if c.b[i] == 0 {
			s := string(c.b[c.off:i])
			c.off = i + 1
			return s
		}
	}
	c.bad = true
	c.off = len(c.b)
	return ""
}

// Pointer encodings (DW_EH_PE_*), from the LSB/gcc unwind-pe.h definitions.
const (
	pePtr     = 0x00
	peULEB    = 0x01
	peU2      = 0x02
	peU4      = 0x03
	peU8      = 0x04
	peSLEB    = 0x09
	peS2      = 0x0a
	peS4      = 0x0b
	peS8      = 0x0c
	pePCRel   = 0x10
	peOmit    = 0xff
	peAppMask = 0x70
)

// pointer reads an encoded pointer. fieldAddr is the link-time address of
// the field, for pcrel. Encodings relative to text, data or function are
// refused, as x86-64 toolchains do not emit them in CFI.
func (c *cursor) pointer(enc byte, fieldAddr uint64, rangeOnly bool) (uint64, error) {
	if enc == peOmit {
		return 0, nil
	}
	var v uint64
	switch enc & 0x0f {
	case pePtr, peU8, peS8:
		v = c.u64()
	case peULEB:
		v = c.uleb()
	case peSLEB:
		v = uint64(c.sleb())
	case peU2:
		v = c.u16()
	case peS2:
		v = uint64(int64(int16(c.u16())))
	case peU4:
		v = c.u32()
	case peS4:
		v = uint64(int64(int32(c.u32())))
	default:
		return 0, fmt.Errorf("%w: pointer encoding %#x", errCFI, enc)
	}
	if c.bad {
		return 0, errCFI
	}
	if rangeOnly {
		return v, nil
	}
	switch enc & peAppMask {
	case 0:
	case pePCRel:
		v += fieldAddr
	default:
		return 0, fmt.Errorf("%w: pointer application %#x", errCFI, enc)
	}
	return v, nil
}

// parseCFI parses a .eh_frame (isEH) or .debug_frame section loaded at
// link-time address secAddr. Entries it cannot parse are skipped; it
// returns the FDEs sorted by begin.
func parseCFI(data []byte, secAddr uint64, isEH bool) ([]fde, error) {
	cies := map[uint64]*cie{}
	var fdes []fde
	var firstErr error
	off := uint64(0)
	for off+4 <= uint64(len(data)) && len(fdes) < maxFDEs {
		c := &cursor{b: data, off: int(off)}
		length := c.u32()
		if length == 0 {
			if isEH {
				break // terminator
			}
			off += 4
			continue
		}
		is64 := length == 0xffffffff
		if is64 {
			length = c.u64()
		}
		bodyStart := uint64(c.off)
		end := bodyStart + length
		if length > uint64(len(data)) || end > uint64(len(data)) {
			if firstErr == nil {
				firstErr = fmt.Errorf("%w: entry at %#x overruns the section", errCFI, off)
			}
			break
		}
		entry := off
		off = end
		body := &cursor{b: data[:end], off: int(bodyStart)}
		idPos := uint64(body.off)
		var id uint64
		if is64 {
			id = body.u64()
		} else {
			id = body.u32()
		}
		isCIE := (isEH && id == 0) || (!isEH && (id == 0xffffffff || id == 0xffffffffffffffff))
		if isCIE {
			ci, err := parseCIE(body, isEH)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			cies[entry] = ci
			continue
		}
		cieOff := id
		if isEH {
			cieOff = idPos - id
		}
		ci, ok := cies[cieOff]
		if !ok {
			// CIEs usually precede their FDEs; parse a later one on demand.
			ci = cieAt(data, cieOff, isEH)
			if ci == nil {
				continue
			}
			cies[cieOff] = ci
		}
		f, err := parseFDE(body, ci, secAddr)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if f.begin != 0 && f.end > f.begin {
			fdes = append(fdes, f)
		}
	}
	sort.SliceStable(fdes, func(i, j int) bool { return fdes[i].begin < fdes[j].begin })
	return fdes, firstErr
}

// cieAt parses the CIE at a section offset, or returns nil.
func cieAt(data []byte, off uint64, isEH bool) *cie {
	if off+4 > uint64(len(data)) {
		return nil
	}
	c := &cursor{b: data, off: int(off)}
	length := c.u32()
	if length == 0xffffffff || length == 0 {
		return nil // 64-bit DWARF CIEs referenced forward: not worth it
	}
	end := uint64(c.off) + length
	if end > uint64(len(data)) {
		return nil
	}
	body := &cursor{b: data[:end], off: c.off}
	id := body.u32()
	if (isEH && id != 0) || (!isEH && id != 0xffffffff) {
		return nil
	}
	ci, err := parseCIE(body, isEH)
	if err != nil {
		return nil
	}
	return ci
}

// parseCIE parses a CIE body after its id field.
func parseCIE(c *cursor, isEH bool) (*cie, error) {
	ci := &cie{addrSize: 8}
	if !isEH {
		ci.fdeEnc = pePtr
	}
	version := c.u8()
	if version != 1 && version != 3 && version != 4 {
		return nil, fmt.Errorf("%w: CIE version %d", errCFI, version)
	}
	aug := c.cstr()
	if version >= 4 {
		ci.addrSize = int(c.u8())
		c.u8() // segment selector size
		if ci.addrSize != 8 {
			return nil, fmt.Errorf("%w: address size %d", errCFI, ci.addrSize)
		}
	}
	ci.codeAlign = c.uleb()
	ci.dataAlign = c.sleb()
	if version == 1 {
		ci.raReg = uint64(c.u8())
	} else {
		ci.raReg = c.uleb()
	}
	if len(aug) > 0 {
		if aug[0] != 'z' {
			return nil, fmt.Errorf("%w: augmentation %q", errCFI, aug)
		}
		ci.hasZ = true
		n := c.uleb()
		augData := &cursor{b: c.bytes(n)}
		for _, ch := range aug[1:] {
			switch ch {
			case 'R':
				ci.fdeEnc = augData.u8()
			case 'L':
				augData.u8()
			case 'P':
				enc := augData.u8()
				if _, err := augData.pointer(enc&^0x80, 0, true); err != nil {
					return nil, err
				}
			case 'S':
				ci.signal = true
			case 'B', 'G':
			default:
				// Unknown letters: the 'z' length lets us skip the data.
			}
		}
	}
	if c.bad {
		return nil, fmt.Errorf("%w: truncated CIE", errCFI)
	}
	ci.initial = c.b[c.off:]
	return ci, nil
}

// parseFDE parses an FDE body after its CIE pointer.
func parseFDE(c *cursor, ci *cie, secAddr uint64) (fde, error) {
	begin, err := c.pointer(ci.fdeEnc, secAddr+uint64(c.off), false)
	if err != nil {
		return fde{}, err
	}
	size, err := c.pointer(ci.fdeEnc&0x0f, 0, true)
	if err != nil {
		return fde{}, err
	}
	f := fde{begin: begin, end: begin + size, cie: ci}
	if ci.hasZ {
		n := c.uleb()
		c.bytes(n)
	}
	if c.bad {
		return fde{}, fmt.Errorf("%w: truncated FDE", errCFI)
	}
	f.insns = c.b[c.off:]
	f.insnsAddr = secAddr + uint64(c.off)
	return f, nil
}
