package trace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// FormatVersion is the trace format version this package writes and reads.
// A reader refuses any other version with a *VersionError. Changes that old
// readers can skip (new header or index fields, new event kinds, trailing
// event fields) do not change it.
const FormatVersion = 1

// Header describes a recording. It is written once, when the trace is
// created.
type Header struct {
	Version uint16            `msgpack:"-"`                // format version, filled in by Open
	Hermit  string            `msgpack:"hermit"`           // hermit version that recorded
	Created time.Time         `msgpack:"created"`          // when recording started
	Argv    []string          `msgpack:"argv"`             // the recorded command
	Env     []string          `msgpack:"env"`              // its environment, as NAME=value
	Dir     string            `msgpack:"dir"`              // its working directory
	Flags   map[string]string `msgpack:"flags,omitempty"`  // run flags that replay must repeat (seed, epoch, ...)
	Kernel  string            `msgpack:"kernel,omitempty"` // host kernel (uname release and version)
	CPU     string            `msgpack:"cpu,omitempty"`    // host CPU model name
	CPUID   []CPUIDLeaf       `msgpack:"cpuid,omitempty"`  // host CPUID leaves
}

// CPUIDLeaf is the result of one CPUID query on the recording host.
type CPUIDLeaf struct {
	_msgpack           struct{} `msgpack:",as_array"`
	Leaf, Subleaf      uint32
	EAX, EBX, ECX, EDX uint32
}

// Program returns the recorded program's name (argv[0]), or "?".
func (h *Header) Program() string {
	if len(h.Argv) == 0 || h.Argv[0] == "" {
		return "?"
	}
	return h.Argv[0]
}

// Envelope of the header and index files:
//
//	offset size field
//	0      8    magic ("HERMITTR" for the header, "HERMITIX" for the index)
//	8      2    format version, little-endian
//	10     2    zero
//	12     4    body length n, little-endian
//	16     n    msgpack body (a map with the field names above)
//	16+n   4    CRC-32C of bytes 0 to 15+n
const envelopeOverhead = 20

var (
	headerMagic = [8]byte{'H', 'E', 'R', 'M', 'I', 'T', 'T', 'R'}
	indexMagic  = [8]byte{'H', 'E', 'R', 'M', 'I', 'T', 'I', 'X'}
)

// maxEnvelope bounds the header and index files a reader accepts, and so
// what a hostile one can make the decoder allocate. Real ones are a few
// hundred KiB at most: the index's block table is capped at maxTable entries.
const maxEnvelope = 8 << 20

func seal(magic [8]byte, body []byte) []byte {
	b := make([]byte, 16, 16+len(body)+4)
	copy(b, magic[:])
	binary.LittleEndian.PutUint16(b[8:], FormatVersion)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(body)))
	b = append(b, body...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// unseal checks an envelope and returns its body. part names the file in
// errors. A wrong magic is ErrNotTrace.
func unseal(magic [8]byte, part string, b []byte) ([]byte, error) {
	if len(b) < len(magic) || [8]byte(b[:8]) != magic {
		return nil, ErrNotTrace
	}
	// The version comes first: later versions may change everything after it.
	if len(b) < 10 {
		return nil, &CorruptError{Part: part, Msg: "truncated"}
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != FormatVersion {
		return nil, &VersionError{Version: v}
	}
	if len(b) < 16 {
		return nil, &CorruptError{Part: part, Msg: "truncated"}
	}
	n := uint64(binary.LittleEndian.Uint32(b[12:]))
	if n+envelopeOverhead > uint64(len(b)) {
		return nil, &CorruptError{Part: part, Msg: "truncated"}
	}
	if n+envelopeOverhead < uint64(len(b)) {
		return nil, &CorruptError{Part: part, Msg: "trailing bytes"}
	}
	if binary.LittleEndian.Uint32(b[16+n:]) != crc32.Checksum(b[:16+n], castagnoli) {
		return nil, &ChecksumError{Part: part}
	}
	body := b[16 : 16+n]
	if err := validMsgpack(body); err != nil {
		return nil, &CorruptError{Part: part, Msg: err.Error()}
	}
	return body, nil
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// marshalHeader returns the header file's content.
func marshalHeader(h *Header) ([]byte, error) {
	body, err := marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode header: %w", err)
	}
	if len(body)+envelopeOverhead > maxEnvelope {
		return nil, fmt.Errorf("encode header: %d bytes exceed %d", len(body), maxEnvelope)
	}
	return seal(headerMagic, body), nil
}

// parseHeader decodes a header file.
func parseHeader(b []byte) (*Header, error) {
	body, err := unseal(headerMagic, "header", b)
	if err != nil {
		return nil, err
	}
	h := new(Header)
	if err := msgpack.Unmarshal(body, h); err != nil {
		return nil, &CorruptError{Part: "header", Msg: err.Error()}
	}
	h.Version = FormatVersion
	return h, nil
}
