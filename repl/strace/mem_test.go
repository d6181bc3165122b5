package strace

import (
	"encoding/binary"
	"errors"
)

// image is a fake tracee memory: one mapped region from base, all else
// unmapped.
type image struct {
	base uint64
	data []byte
}

const imageBase = 0x10000

func newImage() *image { return &image{base: imageBase} }

var errFault = errors.New("fault")

// mem implements Mem.
func (m *image) mem(addr uint64, b []byte) (int, error) {
	if addr < m.base || addr-m.base >= uint64(len(m.data)) {
		return 0, errFault
	}
	n := copy(b, m.data[addr-m.base:])
	if n < len(b) {
		return n, errFault
	}
	return n, nil
}

// put appends b, 16-byte aligned, and returns its address.
func (m *image) put(b []byte) uint64 {
	for len(m.data)%16 != 0 {
		m.data = append(m.data, 0xee)
	}
	a := m.base + uint64(len(m.data))
	m.data = append(m.data, b...)
	return a
}

// str appends a NUL-terminated string.
func (m *image) str(s string) uint64 { return m.put(append([]byte(s), 0)) }

// u64s appends 64-bit words.
func (m *image) u64s(v ...uint64) uint64 {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return m.put(b)
}

// u32s appends 32-bit words.
func (m *image) u32s(v ...uint32) uint64 {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return m.put(b)
}

// end is the first unmapped address.
func (m *image) end() uint64 { return m.base + uint64(len(m.data)) }
