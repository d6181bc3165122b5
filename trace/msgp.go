package trace

import (
	"encoding/binary"
	"errors"
	"math"
)

// This file holds the hand-written msgpack fast path used for events. It
// writes the smallest standard encoding of each value, so every block is a
// valid msgpack stream that any msgpack tool can read, and it reads any
// standard encoding of the types it expects. The header and the index, which
// are small and read once, go through github.com/vmihailenco/msgpack/v5
// instead.

// msgpack format bytes (https://github.com/msgpack/msgpack/blob/master/spec.md).
const (
	mpNil     = 0xc0
	mpFalse   = 0xc2
	mpTrue    = 0xc3
	mpBin8    = 0xc4
	mpBin16   = 0xc5
	mpBin32   = 0xc6
	mpExt8    = 0xc7
	mpExt16   = 0xc8
	mpExt32   = 0xc9
	mpFloat32 = 0xca
	mpFloat64 = 0xcb
	mpUint8   = 0xcc
	mpUint16  = 0xcd
	mpUint32  = 0xce
	mpUint64  = 0xcf
	mpInt8    = 0xd0
	mpInt16   = 0xd1
	mpInt32   = 0xd2
	mpInt64   = 0xd3
	mpFixExt1 = 0xd4
	mpStr8    = 0xd9
	mpStr16   = 0xda
	mpStr32   = 0xdb
	mpArray16 = 0xdc
	mpArray32 = 0xdd
	mpMap16   = 0xde
	mpMap32   = 0xdf
)

// extBlob is the msgpack extension type of a 32-byte BlobID.
const extBlob = 1

// maxNesting bounds the depth of msgpack containers the decoders accept, so
// hostile input cannot exhaust the stack.
const maxNesting = 32

var (
	errShort    = errors.New("unexpected end of data")
	errType     = errors.New("unexpected msgpack type")
	errRange    = errors.New("value out of range")
	errTooDeep  = errors.New("msgpack nested too deeply")
	errTooLarge = errors.New("length exceeds data")
)

func appendUint(b []byte, v uint64) []byte {
	switch {
	case v < 128:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, mpUint8, byte(v))
	case v <= math.MaxUint16:
		return append(b, mpUint16, byte(v>>8), byte(v))
	case v <= math.MaxUint32:
		return append(b, mpUint32, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	b = append(b, mpUint64)
	return binary.BigEndian.AppendUint64(b, v)
}

func appendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendUint(b, uint64(v))
	case v >= -32:
		return append(b, byte(v))
	case v >= math.MinInt8:
		return append(b, mpInt8, byte(v))
	case v >= math.MinInt16:
		return append(b, mpInt16, byte(v>>8), byte(v))
	case v >= math.MinInt32:
		return append(b, mpInt32, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	b = append(b, mpInt64)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, mpTrue)
	}
	return append(b, mpFalse)
}

func appendArrayHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, mpArray16, byte(n>>8), byte(n))
	}
	return append(b, mpArray32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendBin(b []byte, v []byte) []byte {
	n := len(v)
	switch {
	case n <= math.MaxUint8:
		b = append(b, mpBin8, byte(n))
	case n <= math.MaxUint16:
		b = append(b, mpBin16, byte(n>>8), byte(n))
	default:
		b = append(b, mpBin32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, v...)
}

func appendStr(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, mpStr8, byte(n))
	case n <= math.MaxUint16:
		b = append(b, mpStr16, byte(n>>8), byte(n))
	default:
		b = append(b, mpStr32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, s...)
}

// appendBlobID appends id as an ext8 value of type extBlob, or nil for the
// zero id.
func appendBlobID(b []byte, id BlobID) []byte {
	if id.IsZero() {
		return append(b, mpNil)
	}
	b = append(b, mpExt8, byte(len(id)), extBlob)
	return append(b, id[:]...)
}

// mpReader reads msgpack values from b. Its methods return one of the
// package's plain decoding errors, which callers wrap with a position.
type mpReader struct {
	b   []byte
	off int
}

func (r *mpReader) left() int { return len(r.b) - r.off }

// peek returns the next format byte without consuming it.
func (r *mpReader) peek() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errShort
	}
	return r.b[r.off], nil
}

// take consumes n bytes.
func (r *mpReader) take(n int) ([]byte, error) {
	if n < 0 || n > r.left() {
		return nil, errShort
	}
	p := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p, nil
}

// rawUint reads an n-byte big-endian unsigned integer, n in {1,2,4,8}.
func (r *mpReader) rawUint(n int) (uint64, error) {
	p, err := r.take(n)
	if err != nil {
		return 0, err
	}
	switch n {
	case 1:
		return uint64(p[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(p)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(p)), nil
	}
	return binary.BigEndian.Uint64(p), nil
}

// int reads any msgpack integer that fits in an int64.
func (r *mpReader) int() (int64, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if c < 0x80 || c >= 0xe0 {
		r.off++
		return int64(int8(c)), nil
	}
	r.off++
	switch c {
	case mpUint8, mpUint16, mpUint32, mpUint64:
		v, err := r.rawUint(1 << (c - mpUint8))
		if err != nil {
			return 0, err
		}
		if v > math.MaxInt64 {
			return 0, errRange
		}
		return int64(v), nil
	case mpInt8:
		v, err := r.rawUint(1)
		return int64(int8(v)), err
	case mpInt16:
		v, err := r.rawUint(2)
		return int64(int16(v)), err
	case mpInt32:
		v, err := r.rawUint(4)
		return int64(int32(v)), err
	case mpInt64:
		v, err := r.rawUint(8)
		return int64(v), err
	}
	r.off--
	return 0, errType
}

// uint reads any msgpack integer that is not negative.
func (r *mpReader) uint() (uint64, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	if c < 0x80 {
		r.off++
		return uint64(c), nil
	}
	if c >= mpUint8 && c <= mpUint64 {
		r.off++
		return r.rawUint(1 << (c - mpUint8))
	}
	v, err := r.int()
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, errRange
	}
	return uint64(v), nil
}

// int32 reads an integer that fits in an int32.
func (r *mpReader) int32() (int32, error) {
	v, err := r.int()
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, errRange
	}
	return int32(v), nil
}

func (r *mpReader) bool() (bool, error) {
	c, err := r.peek()
	if err != nil {
		return false, err
	}
	switch c {
	case mpTrue:
		r.off++
		return true, nil
	case mpFalse:
		r.off++
		return false, nil
	}
	return false, errType
}

// arrayLen reads an array header. Every element takes at least one byte, so
// a length larger than the bytes left is rejected before anyone allocates.
func (r *mpReader) arrayLen() (int, error) {
	c, err := r.peek()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c&0xf0 == 0x90:
		r.off++
		n = uint64(c & 0x0f)
	case c == mpArray16:
		r.off++
		n, err = r.rawUint(2)
	case c == mpArray32:
		r.off++
		n, err = r.rawUint(4)
	default:
		return 0, errType
	}
	if err != nil {
		return 0, err
	}
	if n > uint64(r.left()) {
		return 0, errTooLarge
	}
	return int(n), nil
}

// bytes reads a bin or str value, or nil as an empty slice. The result
// aliases the reader's buffer.
func (r *mpReader) bytes() ([]byte, error) {
	c, err := r.peek()
	if err != nil {
		return nil, err
	}
	r.off++
	var n uint64
	switch {
	case c == mpNil:
		return nil, nil
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case c == mpBin8 || c == mpStr8:
		n, err = r.rawUint(1)
	case c == mpBin16 || c == mpStr16:
		n, err = r.rawUint(2)
	case c == mpBin32 || c == mpStr32:
		n, err = r.rawUint(4)
	default:
		r.off--
		return nil, errType
	}
	if err != nil {
		return nil, err
	}
	if n > uint64(r.left()) {
		return nil, errShort
	}
	return r.take(int(n))
}

func (r *mpReader) str() (string, error) {
	b, err := r.bytes()
	return string(b), err
}

// blobID reads a value written by appendBlobID.
func (r *mpReader) blobID() (BlobID, error) {
	var id BlobID
	c, err := r.peek()
	if err != nil {
		return id, err
	}
	if c == mpNil {
		r.off++
		return id, nil
	}
	if c != mpExt8 {
		return id, errType
	}
	p, err := r.take(3 + len(id))
	if err != nil {
		return id, err
	}
	if p[1] != byte(len(id)) || p[2] != extBlob {
		return id, errType
	}
	copy(id[:], p[3:])
	return id, nil
}

// skip consumes one value of any type, at most depth containers deep.
func (r *mpReader) skip(depth int) error {
	if depth <= 0 {
		return errTooDeep
	}
	c, err := r.peek()
	if err != nil {
		return err
	}
	r.off++
	var n uint64 // bytes to skip, or elements for containers
	switch {
	case c < 0x80 || c >= 0xe0 || c == mpNil || c == mpFalse || c == mpTrue:
		return nil
	case c&0xf0 == 0x80: // fixmap
		return r.skipN(2*uint64(c&0x0f), depth)
	case c&0xf0 == 0x90: // fixarray
		return r.skipN(uint64(c&0x0f), depth)
	case c&0xe0 == 0xa0: // fixstr
		n = uint64(c & 0x1f)
	case c == mpBin8 || c == mpStr8:
		n, err = r.rawUint(1)
	case c == mpBin16 || c == mpStr16:
		n, err = r.rawUint(2)
	case c == mpBin32 || c == mpStr32:
		n, err = r.rawUint(4)
	case c == mpExt8:
		n, err = r.rawUint(1)
		n++ // the type byte
	case c == mpExt16:
		n, err = r.rawUint(2)
		n++
	case c == mpExt32:
		n, err = r.rawUint(4)
		n++
	case c == mpFloat32:
		n = 4
	case c == mpFloat64:
		n = 8
	case c >= mpUint8 && c <= mpUint64:
		n = 1 << (c - mpUint8)
	case c >= mpInt8 && c <= mpInt64:
		n = 1 << (c - mpInt8)
	case c >= mpFixExt1 && c <= mpFixExt1+4:
		n = 1 + 1<<(c-mpFixExt1)
	case c == mpArray16 || c == mpArray32:
		n, err = r.rawUint(2 << (c - mpArray16))
		if err != nil {
			return err
		}
		return r.skipN(n, depth)
	case c == mpMap16 || c == mpMap32:
		n, err = r.rawUint(2 << (c - mpMap16))
		if err != nil {
			return err
		}
		return r.skipN(2*n, depth)
	default: // 0xc1 is never used
		return errType
	}
	if err != nil {
		return err
	}
	if n > uint64(r.left()) {
		return errShort
	}
	r.off += int(n)
	return nil
}

// skipN skips n elements of a container.
func (r *mpReader) skipN(n uint64, depth int) error {
	if n > uint64(r.left()) {
		return errTooLarge
	}
	for ; n > 0; n-- {
		if err := r.skip(depth - 1); err != nil {
			return err
		}
	}
	return nil
}

// validMsgpack reports whether b holds exactly one msgpack value whose
// containers are no deeper than maxNesting and whose declared lengths fit in
// b. The reflective decoder trusts declared lengths when it allocates, so
// untrusted input goes through this check first.
func validMsgpack(b []byte) error {
	r := mpReader{b: b}
	if err := r.skip(maxNesting); err != nil {
		return err
	}
	if r.left() != 0 {
		return errors.New("trailing bytes after msgpack value")
	}
	return nil
}
