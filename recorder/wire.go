package recorder

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/trace"
)

// How the engine's questions to the host are stored in a trace.
//
// The engine asks the tracer about the world outside the guest (is this
// descriptor ready? what kind is it? what does stat say about this path?)
// at deterministic points, in a deterministic order. A recording logs each
// answer as a KindSyscall event with External set and a negative Sysno
// naming the question; replay answers from the log, in the same order.
// Digest holds the question's key (a descriptor number, a hash of the
// path), so that a replay that asks something else is caught.

// Query codes: the negated Sysno of an answer event. The numbers are part
// of the trace format.
const (
	QueryFdKind      = 1  // Result: the detcore.FdKind
	QueryPipeSpace   = 2  // Result: the space
	QueryPoll        = 3  // Result: ready bitmask, or Mem[0]: one byte per descriptor
	QueryStatx       = 4  // Result: 0 or error; Mem[0]: the struct statx
	QueryOpenDir     = 5  // Result: 0 or error; Mem[0]: the directory's FileID
	QueryReadDir     = 6  // Result: entries or error; Mem[0]: the entries
	QueryFdPath      = 7  // Result: 0 or error; Mem[0]: the path
	QueryReadFd      = 8  // Result: offset or error; Mem[0]: the content
	QueryOutside     = 9  // Result: 1 if the wait depends on the outside world
	QueryCPUID       = 10 // Digest: leaf<<32 | subleaf; Mem[0]: eax, ebx, ecx, edx
	QueryFifo        = 11 // Result: 1 if the path names a FIFO; Mem[0]: its FileID
	QueryFifoRead    = 12 // Result: 1 if the FIFO has a reader
	QueryFifoWrite   = 13 // Result: 1 if a writer came to the FIFO (detcore.FifoReader)
	QueryBackground  = 14 // Result: 1 if the thread's process is in its terminal's background
	QueryPipe        = 15 // Result: 1 if the descriptor is a pipe the guest holds alone (detcore.FastPipeTracer)
	QueryAccessMode  = 16 // Result: the descriptor's O_ACCMODE, or -1 (detcore.AccessModeTracer)
	QueryStdioPipe   = 17 // (journal version 11 only)
	QueryWriteEnd    = 18 // Result: the detcore.WriteEnd of the descriptor (detcore.PartWriteTracer)
	QuerySignals     = 19 // Result: 0 or error; Mem[0]: the thread's pending, the process's pending and the blocked signals (EncodeSignals)
	QueryFastWrites  = 20 // Result: the digest of what the process wrote without a stop (detcore.FastWriteJournal); not the host's answer, the guest's
	QueryPseudoDev   = 21 // Digest: StringKey of the kind; Result: the device of pipefs, sockfs or nsfs, or -1 (detcore.PseudoDevTracer)
	QueryCallOutput  = 22 // Digest: the size; Result: 0 or error; Mem[0]: what a call that ran natively wrote (detcore.OutputTracer)
	QuerySockTimeout = 23 // Digest: the descriptor, times 2, plus 1 for the send timeout; Result: the timeout in ns, or -1: no socket (detcore.SockTimeoutTracer)
)

var queryNames = [...]string{"", "fd-kind", "pipe-space", "poll", "statx", "open-dir", "read-dir", "fd-path", "read-fd", "outside", "cpuid", "fifo", "fifo-reader", "fifo-writer", "background", "internal-pipe", "access-mode", "stdio-pipe", "write-end", "signals", "fast-writes", "pseudo-dev", "call-output", "sock-timeout"}

// QueryName names an answer event's question from its Sysno (negative).
func QueryName(sysno int32) string {
	if q := -sysno; q > 0 && int(q) < len(queryNames) {
		return queryNames[q]
	}
	return fmt.Sprintf("query%d", -sysno)
}

// ResultCode is the Digest of an external syscall result event: what
// replay does with it.
const (
	// ResultEmulate: replay skips the call and injects Result and Mem.
	ResultEmulate = 0
	// ResultForce: replay runs the call (on its rebuilt files) and then
	// sets its result to Result.
	ResultForce = 1
	// ResultPlace: an mmap that replay runs with MAP_FIXED_NOREPLACE at
	// the address in Result (or that fails with it).
	ResultPlace = 2
	// ResultSocket: an accepted connection (Result is its descriptor, Mem
	// the peer's address), which replay stands in for with a new socket.
	ResultSocket = 3
	// ResultStandIn: a terminal (or a namespace) the guest opened
	// (Result is its descriptor), which replay stands in for with a pty
	// of its own (or a socket); Mem[0] holds its flags as a
	// little-endian uint64 (devices.go).
	ResultStandIn = 4
	// ResultRefused: a call hermit cannot replay (Mem[0] says why, on one
	// line). The recording warned of it; replay stops there.
	ResultRefused = 5
	// ResultSplice: a splice, tee or sendfile with an external end
	// (splice.go), which replay skips: Result is its count, Mem the
	// offsets it updated and, at address 0, what to do to the internal
	// end (SpliceNone, SpliceFill and the bytes, SpliceSkip).
	ResultSplice = 6
	// ResultPreempted: a call the watchdog's stop interrupted before it
	// did anything (Result is the restart code; Mem[0], if there, says
	// the stop was for a spin examination), which the kernel made again:
	// replay runs a call that does nothing in its place, with the
	// watchdog's stop on its way.
	ResultPreempted = 7
)

// Error codes in an answer's Result, below every errno.
const (
	codeGone        = -(1 << 20) - 1
	codeNotEmulated = -(1 << 20) - 2
	codeOther       = -(1 << 20) - 3
)

// errorCode encodes a tracer error as an answer's Result (and message).
func errorCode(err error) (int64, []byte) {
	var errno detcore.Errno
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &errno):
		return -int64(errno), nil
	case errors.Is(err, detcore.ErrGone):
		return codeGone, nil
	case errors.Is(err, detcore.ErrNotEmulated):
		return codeNotEmulated, nil
	}
	return codeOther, []byte(err.Error())
}

// ErrorOf decodes an error encoded by errorCode; nil if res is not one.
func ErrorOf(res int64, msg []byte) error {
	switch {
	case res >= 0:
		return nil
	case res == codeGone:
		return fmt.Errorf("recorded: %w", detcore.ErrGone)
	case res == codeNotEmulated:
		return detcore.ErrNotEmulated
	case res == codeOther:
		return errors.New(string(msg))
	}
	return detcore.Errno(-res)
}

// PollKey is the Digest of a poll answer: the descriptors asked about.
func PollKey(ws []detcore.FdWait) uint64 {
	h := uint64(len(ws))
	for _, w := range ws {
		h = mix(h, uint64(w.Fd)<<16|uint64(uint16(w.Events)))
	}
	return h
}

// StringKey hashes a path (FNV-1a) with a number, for Digest.
func StringKey(s string, n uint64) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return mix(h, n)
}

func mix(h, v uint64) uint64 {
	h ^= v + 0x9e3779b97f4a7c15 + h<<6 + h>>2
	return h * 0xff51afd7ed558ccd
}

// EncodePoll encodes poll readiness as an answer's Result and Mem.
func EncodePoll(ready []bool) (int64, []trace.MemWrite) {
	if len(ready) <= 62 {
		var m int64
		for i, r := range ready {
			if r {
				m |= 1 << i
			}
		}
		return m, nil
	}
	b := make([]byte, len(ready))
	for i, r := range ready {
		if r {
			b[i] = 1
		}
	}
	return 0, []trace.MemWrite{{Data: b}}
}

// DecodePoll decodes readiness of n descriptors.
func DecodePoll(n int, res int64, mem []trace.MemWrite) []bool {
	ready := make([]bool, n)
	if n > 62 {
		if len(mem) > 0 {
			for i := 0; i < n && i < len(mem[0].Data); i++ {
				ready[i] = mem[0].Data[i] != 0
			}
		}
		return ready
	}
	for i := range ready {
		ready[i] = res&(1<<i) != 0
	}
	return ready
}

// EncodeFileID encodes a detcore.FileID.
func EncodeFileID(id detcore.FileID) []byte {
	b := make([]byte, 25)
	binary.LittleEndian.PutUint64(b[0:], id.Dev)
	binary.LittleEndian.PutUint64(b[8:], id.Ino)
	binary.LittleEndian.PutUint64(b[16:], uint64(id.Btime))
	if id.BtimeKnown {
		b[24] = 1
	}
	return b
}

// DecodeFileID decodes EncodeFileID's bytes.
func DecodeFileID(b []byte) (detcore.FileID, error) {
	if len(b) < 25 {
		return detcore.FileID{}, errors.New("short file id")
	}
	return detcore.FileID{
		Dev:        binary.LittleEndian.Uint64(b[0:]),
		Ino:        binary.LittleEndian.Uint64(b[8:]),
		Btime:      int64(binary.LittleEndian.Uint64(b[16:])),
		BtimeKnown: b[24] != 0,
	}, nil
}

// EncodeDir encodes directory entries.
func EncodeDir(ents []detcore.DirEntry) []byte {
	var b []byte
	for _, e := range ents {
		b = binary.AppendUvarint(b, uint64(len(e.Name)))
		b = append(b, e.Name...)
		b = append(b, e.Type)
		b = append(b, EncodeFileID(e.ID)...)
	}
	return b
}

// DecodeDir decodes EncodeDir's bytes.
func DecodeDir(b []byte) ([]detcore.DirEntry, error) {
	var out []detcore.DirEntry
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n+26 {
			return nil, errors.New("corrupt directory listing")
		}
		b = b[k:]
		e := detcore.DirEntry{Name: string(b[:n]), Type: b[n]}
		e.ID, _ = DecodeFileID(b[n+1:])
		out = append(out, e)
		b = b[n+26:]
	}
	return out, nil
}

// CPUIDKey is the Digest of a cpuid answer.
func CPUIDKey(leaf, subleaf uint32) uint64 { return uint64(leaf)<<32 | uint64(subleaf) }

// EncodeCPUID encodes a cpuid answer.
func EncodeCPUID(v [4]uint32) []byte {
	b := make([]byte, 16)
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// DecodeCPUID decodes EncodeCPUID's bytes.
func DecodeCPUID(b []byte) ([4]uint32, bool) {
	var v [4]uint32
	if len(b) != 16 {
		return v, false
	}
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v, true
}

// EncodeSignals encodes a thread's signal state (detcore.Tracer.Signals)
// for a signals answer.
func EncodeSignals(own, shared, blocked uint64) []byte {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint64(b, own)
	binary.LittleEndian.PutUint64(b[8:], shared)
	binary.LittleEndian.PutUint64(b[16:], blocked)
	return b
}

// DecodeSignals decodes EncodeSignals' bytes.
func DecodeSignals(b []byte) (own, shared, blocked uint64, err error) {
	if len(b) != 24 {
		return 0, 0, 0, fmt.Errorf("a signals answer of %d bytes, not 24", len(b))
	}
	return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:]), nil
}
