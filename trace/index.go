package trace

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

// Stats summarises a trace's event stream.
type Stats struct {
	Events    uint64              // events
	Blocks    uint64              // blocks holding them
	RawBytes  uint64              // encoded event bytes before compression
	FileBytes uint64              // bytes of the events file they take (headers included)
	Kinds     [NumKinds]KindStats // by kind; unknown kinds are not counted here
	Threads   map[int32]uint64    // events per tid
}

// KindStats counts the events of one kind.
type KindStats struct {
	_msgpack struct{} `msgpack:",as_array"`
	Events   uint64
	Bytes    uint64 // encoded bytes before compression
}

func (s *Stats) add(o *Stats) {
	s.Events += o.Events
	s.Blocks += o.Blocks
	s.RawBytes += o.RawBytes
	s.FileBytes += o.FileBytes
	for k := range s.Kinds {
		s.Kinds[k].Events += o.Kinds[k].Events
		s.Kinds[k].Bytes += o.Kinds[k].Bytes
	}
	if len(o.Threads) > 0 && s.Threads == nil {
		s.Threads = make(map[int32]uint64, len(o.Threads))
	}
	for t, n := range o.Threads {
		s.Threads[t] += n
	}
}

// countEvent adds one event of encoded size n.
func (s *Stats) countEvent(ev *Event, n int) {
	s.Events++
	s.RawBytes += uint64(n)
	if ev.Kind.Known() {
		s.Kinds[ev.Kind].Events++
		s.Kinds[ev.Kind].Bytes += uint64(n)
	}
	if s.Threads == nil {
		s.Threads = make(map[int32]uint64)
	}
	s.Threads[ev.Tid]++
}

// blockRef locates a block in the events file.
type blockRef struct {
	_msgpack struct{} `msgpack:",as_array"`
	Off      int64    // offset of the block header
	First    uint64   // number of its first event
}

// maxTable bounds the block table kept in memory and in the index. Beyond
// it, the table keeps every second entry and doubles its stride, so its size
// stays bounded however long the trace; a seek then walks at most stride-1
// block headers forward from the nearest entry.
const maxTable = 1 << 16

// blockTable lists every stride-th block.
type blockTable struct {
	refs   []blockRef // refs[i] is block i*stride
	stride uint64
}

// add records block number b, which must follow the last block added.
func (t *blockTable) add(b uint64, ref blockRef) {
	if t.stride == 0 {
		t.stride = 1
	}
	if b%t.stride != 0 {
		return
	}
	t.refs = append(t.refs, ref)
	if len(t.refs) > maxTable {
		n := 0
		for i := 0; i < len(t.refs); i += 2 {
			t.refs[n] = t.refs[i]
			n++
		}
		t.refs = t.refs[:n]
		t.stride *= 2
	}
}

// find returns the block number and location of the last listed block whose
// first event is at most n.
func (t *blockTable) find(n uint64) (uint64, blockRef) {
	lo, hi := 0, len(t.refs) // invariant: refs[lo-1].First <= n < refs[hi].First
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.refs[m].First <= n {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, blockRef{}
	}
	return uint64(lo-1) * t.stride, t.refs[lo-1]
}

// indexBody is the msgpack body of the index file, written when a trace is
// closed. A trace without one was not closed: the reader rebuilds the table
// by walking the block headers and reports the trace as truncated.
type indexBody struct {
	Events uint64      `msgpack:"events"`
	Blocks uint64      `msgpack:"blocks"`
	Size   int64       `msgpack:"size"` // events file size
	Raw    uint64      `msgpack:"raw"`
	Stride uint64      `msgpack:"stride"`
	Table  []blockRef  `msgpack:"table"`
	Kinds  []KindStats `msgpack:"kinds"` // by kind number
	// Threads are sorted by tid, so that the same trace gives the same
	// bytes (a map would be written in random order).
	Threads []threadCount `msgpack:"threads"`
}

// threadCount is one thread's event count in the index.
type threadCount struct {
	_msgpack struct{} `msgpack:",as_array"`
	Tid      int32
	Events   uint64
}

func sortedThreads(m map[int32]uint64) []threadCount {
	out := make([]threadCount, 0, len(m))
	for tid, n := range m {
		out = append(out, threadCount{Tid: tid, Events: n})
	}
	slices.SortFunc(out, func(a, b threadCount) int { return cmp.Compare(a.Tid, b.Tid) })
	return out
}

func marshalIndex(s *Stats, t *blockTable, size int64) ([]byte, error) {
	body, err := marshal(&indexBody{
		Events:  s.Events,
		Blocks:  s.Blocks,
		Size:    size,
		Raw:     s.RawBytes,
		Stride:  max(t.stride, 1),
		Table:   t.refs,
		Kinds:   s.Kinds[:],
		Threads: sortedThreads(s.Threads),
	})
	if err != nil {
		return nil, fmt.Errorf("encode index: %w", err)
	}
	return seal(indexMagic, body), nil
}

// parseIndex decodes and checks an index file.
func parseIndex(b []byte) (*Stats, *blockTable, int64, error) {
	body, err := unseal(indexMagic, "index", b)
	if err != nil {
		return nil, nil, 0, err
	}
	var x indexBody
	if err := msgpack.Unmarshal(body, &x); err != nil {
		return nil, nil, 0, &CorruptError{Part: "index", Msg: err.Error()}
	}
	if err := x.check(); err != nil {
		return nil, nil, 0, &CorruptError{Part: "index", Msg: err.Error()}
	}
	s := &Stats{
		Events:    x.Events,
		Blocks:    x.Blocks,
		RawBytes:  x.Raw,
		FileBytes: uint64(x.Size),
	}
	if len(x.Threads) > 0 {
		s.Threads = make(map[int32]uint64, len(x.Threads))
		for _, tc := range x.Threads {
			s.Threads[tc.Tid] += tc.Events
		}
	}
	copy(s.Kinds[:], x.Kinds)
	return s, &blockTable{refs: x.Table, stride: x.Stride}, x.Size, nil
}

// check verifies that the index describes a possible trace.
func (x *indexBody) check() error {
	if x.Size < 0 || x.Stride == 0 || x.Stride > 1<<40 {
		return fmt.Errorf("bad size %d or stride %d", x.Size, x.Stride)
	}
	if x.Blocks > x.Events || x.Blocks > uint64(x.Size)/blockHeaderSize {
		return fmt.Errorf("%d blocks cannot hold %d events in %d bytes", x.Blocks, x.Events, x.Size)
	}
	if want := (x.Blocks + x.Stride - 1) / x.Stride; uint64(len(x.Table)) != want {
		return fmt.Errorf("block table has %d entries, want %d", len(x.Table), want)
	}
	for i, r := range x.Table {
		if i == 0 && (r.Off != 0 || r.First != 0) {
			return fmt.Errorf("block table starts at offset %d, event %d", r.Off, r.First)
		}
		if r.Off >= x.Size || r.First >= x.Events {
			return fmt.Errorf("block table entry %d beyond the end", i)
		}
		if i > 0 && (r.Off <= x.Table[i-1].Off || r.First <= x.Table[i-1].First) {
			return fmt.Errorf("block table entry %d out of order", i)
		}
	}
	if len(x.Kinds) > NumKinds {
		x.Kinds = x.Kinds[:NumKinds] // kinds added later; their counts are not ours
	}
	var kinds, threads uint64
	for _, k := range x.Kinds {
		kinds += k.Events
	}
	for i, tc := range x.Threads {
		if i > 0 && tc.Tid <= x.Threads[i-1].Tid {
			return fmt.Errorf("thread %d listed out of order", tc.Tid)
		}
		threads += tc.Events
	}
	if kinds > x.Events || threads != x.Events {
		return fmt.Errorf("per-kind (%d) or per-thread (%d) counts do not add up to %d events", kinds, threads, x.Events)
	}
	return nil
}
