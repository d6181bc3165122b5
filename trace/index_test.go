package trace

import (
	"errors"
	"testing"
)

func TestBlockTableThins(t *testing.T) {
	var tb blockTable
	const blocks = 3*maxTable + 17
	for b := uint64(0); b < blocks; b++ {
		tb.add(b, blockRef{Off: int64(b) * 100, First: b * 10})
	}
	if len(tb.refs) > maxTable || tb.stride != 4 {
		t.Fatalf("%d entries, stride %d; want at most %d entries, stride 4", len(tb.refs), tb.stride, maxTable)
	}
	for _, ev := range []uint64{0, 9, 10, 39, 40, 41, 12345, blocks*10 - 1, blocks * 50} {
		b, ref := tb.find(ev)
		want := min(ev/10, blocks-1) / tb.stride * tb.stride
		if b != want || ref.First != want*10 || ref.Off != int64(want)*100 {
			t.Errorf("find(%d) = block %d at %+v, want block %d", ev, b, ref, want)
		}
	}
}

func TestIndexRoundTrip(t *testing.T) {
	s := &Stats{Events: 30, Blocks: 3, RawBytes: 99, Threads: map[int32]uint64{1: 10, 2: 20}}
	s.Kinds[KindSyscall] = KindStats{Events: 25, Bytes: 80}
	s.Kinds[KindTiming] = KindStats{Events: 5, Bytes: 19}
	tb := &blockTable{stride: 1}
	for b := range uint64(3) {
		tb.add(b, blockRef{Off: int64(b) * 64, First: b * 10})
	}
	raw, err := marshalIndex(s, tb, 192)
	if err != nil {
		t.Fatal(err)
	}
	got, gotTable, size, err := parseIndex(raw)
	if err != nil {
		t.Fatal(err)
	}
	if size != 192 || got.Events != 30 || got.Kinds != s.Kinds || got.Threads[2] != 20 ||
		len(gotTable.refs) != 3 || gotTable.refs[2].Off != 128 {
		t.Errorf("parseIndex = %+v, %+v, %d", got, gotTable, size)
	}
}

func TestIndexCheckRejects(t *testing.T) {
	good := func() indexBody {
		return indexBody{Events: 20, Blocks: 2, Size: 200, Stride: 1,
			Table:   []blockRef{{Off: 0, First: 0}, {Off: 100, First: 10}},
			Kinds:   []KindStats{{}, {Events: 20}},
			Threads: []threadCount{{Tid: 1, Events: 15}, {Tid: 2, Events: 5}}}
	}
	x := good()
	if err := x.check(); err != nil {
		t.Fatalf("check(good) = %v", err)
	}
	tests := map[string]func(*indexBody){
		"zero stride":       func(x *indexBody) { x.Stride = 0 },
		"short table":       func(x *indexBody) { x.Table = x.Table[:1] },
		"table not at zero": func(x *indexBody) { x.Table[0].Off = 5 },
		"out of order":      func(x *indexBody) { x.Table[1].First = 0 },
		"beyond the end":    func(x *indexBody) { x.Table[1].Off = 200 },
		"thread counts":     func(x *indexBody) { x.Threads[1].Events = 4 },
		"thread order":      func(x *indexBody) { x.Threads[1].Tid = 1 },
		"kind counts":       func(x *indexBody) { x.Kinds[1].Events = 21 },
		"more blocks":       func(x *indexBody) { x.Blocks = 21 },
		"negative size":     func(x *indexBody) { x.Size = -1 },
	}
	for name, edit := range tests {
		x := good()
		edit(&x)
		if err := x.check(); err == nil {
			t.Errorf("%s: check accepted %+v", name, x)
		}
	}
}

func TestErrorsAreOneLineAndMatch(t *testing.T) {
	id := BlobOf([]byte("x"))
	tests := []struct {
		err      error
		sentinel error
		text     string
	}{
		{&VersionError{Version: 3}, ErrUnsupportedVersion, "unsupported trace version 3 (this hermit reads version 1)"},
		{&TruncatedError{Event: 1234, Block: 7}, ErrTruncated, "truncated at event 1234 (block 7)"},
		{&ChecksumError{Part: partEvents, Block: 7, Event: 1234}, ErrChecksum, "checksum mismatch at block 7 (event 1234)"},
		{&ChecksumError{Part: "index"}, ErrChecksum, "checksum mismatch in index"},
		{&CorruptError{Part: "header", Msg: "truncated"}, ErrCorrupt, "corrupt header: truncated"},
		{&CorruptError{Part: partEvents, Block: 2, Event: 9, Msg: "x"}, ErrCorrupt, "corrupt block 2 (event 9): x"},
		{&MissingBlobError{ID: id}, ErrMissingBlob, "missing blob " + id.String()},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.text {
			t.Errorf("Error() = %q, want %q", got, tt.text)
		}
		if !errors.Is(tt.err, tt.sentinel) {
			t.Errorf("%T does not match %v", tt.err, tt.sentinel)
		}
		if errors.Is(tt.err, ErrNotTrace) {
			t.Errorf("%T matches ErrNotTrace", tt.err)
		}
	}
}
