package trace

import (
	"bytes"
	"errors"
	"io"
	"math"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// normalize returns a deep copy of ev in a canonical form for comparison:
// empty slices become nil, and the Exec or Map of their kinds is never nil.
func normalize(ev *Event) Event {
	c := *ev
	c.Mem = nil
	for _, m := range ev.Mem {
		m.Data = bytes.Clone(m.Data)
		if len(m.Data) == 0 {
			m.Data = nil
		}
		c.Mem = append(c.Mem, m)
	}
	c.Siginfo = bytes.Clone(ev.Siginfo)
	if len(c.Siginfo) == 0 {
		c.Siginfo = nil
	}
	if ev.Kind == KindExec {
		x := Exec{}
		if ev.Exec != nil {
			x = *ev.Exec
			x.Argv = append([]string(nil), x.Argv...)
			x.Files = append([]MappedFile(nil), x.Files...)
		}
		if len(x.Argv) == 0 {
			x.Argv = nil
		}
		if len(x.Files) == 0 {
			x.Files = nil
		}
		c.Exec = &x
	}
	if ev.Kind == KindMmap {
		m := MappedFile{}
		if ev.Map != nil {
			m = *ev.Map
		}
		c.Map = &m
	}
	return c
}

func sameEvent(a, b *Event) bool {
	x, y := normalize(a), normalize(b)
	return reflect.DeepEqual(x, y)
}

// sampleEvents has every kind, with edge values.
func sampleEvents() []Event {
	blob := BlobOf([]byte("libc"))
	return []Event{
		{Kind: KindSyscall, Tid: 100, Sysno: 0, External: true, Digest: 0xdeadbeefcafef00d, Result: 5,
			Mem: []MemWrite{{Addr: 0x7ffd0000, Data: []byte("hello")}}},
		{Kind: KindSyscall, Tid: 100, Sysno: 0, External: true, Digest: 0xdeadbeefcafef00d, Result: 0},
		{Kind: KindSyscall, Tid: 100, Sysno: 0, External: true, Digest: 0xdeadbeefcafef00d, Result: 3,
			Mem: []MemWrite{{Addr: 1, Data: []byte("abc")}, {Addr: math.MaxUint64, Data: nil}, {Addr: 2, Blob: blob}}},
		{Kind: KindSyscall, Tid: 100, Sysno: 0, External: true, Digest: 1, Result: -2},
		{Kind: KindSyscall, Tid: 100, Sysno: 0, External: true, Digest: 1, Result: -4095},
		{Kind: KindSyscall, Tid: 100, Sysno: 0, External: true, Digest: 1, Result: math.MinInt64},
		{Kind: KindSyscall, Tid: 101, Sysno: 1, Digest: math.MaxUint64, Result: math.MaxInt64},
		{Kind: KindSyscall, Tid: math.MinInt32, Sysno: math.MaxInt32, Result: 1 << 40,
			Mem: []MemWrite{{Addr: 9, Data: bytes.Repeat([]byte{7}, 70000)}}},
		{Kind: KindClone, Tid: 100, Child: 101, Flags: 0x3d0f00},
		{Kind: KindExit, Tid: 101, Status: 256, Group: false},
		{Kind: KindExit, Tid: 100, Status: math.MinInt32, Group: true},
		{Kind: KindExec, Tid: 100, Exec: &Exec{Path: "/bin/ls", Argv: []string{"ls", "-l", ""},
			Files: []MappedFile{{Path: "/bin/ls", Blob: blob, Addr: 0x400000, Len: 4096, Offset: 0},
				{Path: "/lib64/ld.so", Len: math.MaxUint64, Offset: 1 << 33}}}},
		{Kind: KindExec, Tid: 100},
		{Kind: KindMmap, Tid: 100, Map: &MappedFile{Path: "/lib/libc.so.6", Blob: blob, Addr: 0x7f0000000000, Len: 1 << 21, Offset: 4096}},
		{Kind: KindMmap, Tid: 100},
		{Kind: KindFile, Tid: 100, File: &File{Path: "/usr/lib/libc.so.6", Mode: ModeRegular | 0o755, Blob: blob}},
		{Kind: KindFile, Tid: 100, File: &File{Path: "/lib", Mode: ModeSymlink | 0o777, Target: "usr/lib"}},
		{Kind: KindFile, Tid: 100, File: &File{Path: "/var/big.db", Mode: ModeRegular | 0o644, Size: 5 << 30}},
		{Kind: KindFile, Tid: 100, File: &File{Path: "/home/u/.secret", Mode: ModeDir | 0o700, Uid: 1000, Gid: 100, Owned: true}},
		{Kind: KindSignal, Tid: 100, Signo: 11, Code: 1, Deterministic: true, Siginfo: bytes.Repeat([]byte{1, 2}, 64)},
		{Kind: KindSignal, Tid: 100, Signo: 2, Code: -6},
		{Kind: KindTiming, Tid: 100, Time: 1_000_000_000},
		{Kind: KindTiming, Tid: 100, Time: 5},
		{Kind: KindTiming, Tid: 100, Time: math.MinInt64},
		{Kind: KindTiming, Tid: 100, Time: math.MaxInt64},
		{Kind: KindPreempt, Tid: 7, Ran: 2_000_123_456},
		{Kind: KindSignal, Tid: 3, Signo: 2, Code: 0, AtCall: true, Siginfo: bytes.Repeat([]byte{3}, 128)},
	}
}

func encodeAll(t testing.TB, evs []Event) []byte {
	t.Helper()
	var e encoder
	e.reset()
	for i := range evs {
		if err := checkEvent(&evs[i]); err != nil {
			t.Fatalf("checkEvent(%d): %v", i, err)
		}
		e.append(&evs[i])
	}
	return e.buf
}

func decodeAll(payload []byte) ([]Event, error) {
	var d decoder
	d.reset(payload)
	var out []Event
	for !d.done() {
		var ev Event
		if err := d.next(&ev); err != nil {
			return out, err
		}
		out = append(out, normalize(&ev))
	}
	return out, nil
}

func TestRoundTripEveryKind(t *testing.T) {
	evs := sampleEvents()
	seen := map[Kind]bool{}
	for i := range evs {
		seen[evs[i].Kind] = true
	}
	for k := Kind(1); k < NumKinds; k++ {
		if !seen[k] {
			t.Errorf("sampleEvents has no %s event", k)
		}
	}
	got, err := decodeAll(encodeAll(t, evs))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(got) != len(evs) {
		t.Fatalf("decoded %d events, want %d", len(got), len(evs))
	}
	for i := range evs {
		if !sameEvent(&got[i], &evs[i]) {
			t.Errorf("event %d (%s):\n got %+v\nwant %+v", i, evs[i].Kind, got[i], normalize(&evs[i]))
		}
	}
}

// TestCallSiteForms checks that repeated call sites use the compact forms,
// and that a digest seen twice after its prefix gets a call site of its own.
func TestCallSiteForms(t *testing.T) {
	ev := Event{Kind: KindSyscall, Tid: 7, Sysno: 0, External: true, Digest: 42, Result: 1}
	var e encoder
	e.reset()
	e.append(&ev) // full form, defines site 0
	full := len(e.buf)
	e.append(&ev)
	if n := len(e.buf) - full; n != 2 {
		t.Errorf("repeated call site took %d bytes, want 2", n)
	}
	ev.Digest = 43
	before := len(e.buf)
	e.append(&ev) // head 0, seen once
	e.append(&ev) // head 0, defines site 1
	if e.buf[before] != headNewDigest {
		t.Errorf("new digest at known prefix: head %d, want %d", e.buf[before], headNewDigest)
	}
	before = len(e.buf)
	e.append(&ev)
	if got := e.buf[before]; got != headSite0+1 {
		t.Errorf("third call with digest 43: head %d, want %d", got, headSite0+1)
	}
	got, err := decodeAll(e.buf)
	if err != nil || len(got) != 5 {
		t.Fatalf("decode: %d events, %v", len(got), err)
	}
	for i, want := range []uint64{42, 42, 43, 43, 43} {
		if got[i].Digest != want || got[i].Tid != 7 || got[i].Result != 1 || !got[i].External {
			t.Errorf("event %d: %+v, want digest %d", i, got[i], want)
		}
	}
}

// TestSiteTableFull encodes more distinct call sites than maxSites.
func TestSiteTableFull(t *testing.T) {
	var evs []Event
	for i := range maxSites + 300 {
		evs = append(evs, Event{Kind: KindSyscall, Tid: int32(i % 3), Sysno: int32(i), Digest: uint64(i), Result: int64(i)})
		evs = append(evs, Event{Kind: KindSyscall, Tid: int32(i % 3), Sysno: int32(i), Digest: uint64(i), Result: -1})
		evs = append(evs, Event{Kind: KindSyscall, Tid: int32(i % 3), Sysno: int32(i), Digest: uint64(i + 1), Result: -1})
		evs = append(evs, Event{Kind: KindSyscall, Tid: int32(i % 3), Sysno: int32(i), Digest: uint64(i + 1), Result: -1})
	}
	got, err := decodeAll(encodeAll(t, evs))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(evs) {
		t.Fatalf("decoded %d events, want %d", len(got), len(evs))
	}
	for i := range evs {
		if !sameEvent(&got[i], &evs[i]) {
			t.Fatalf("event %d: got %+v, want %+v", i, got[i], evs[i])
		}
	}
}

// TestPayloadIsMsgpack checks that an encoded block is a plain msgpack
// stream: two values per event, readable by a generic decoder.
func TestPayloadIsMsgpack(t *testing.T) {
	evs := sampleEvents()
	dec := msgpack.NewDecoder(bytes.NewReader(encodeAll(t, evs)))
	n := 0
	for {
		// Skip parses each value fully, including the blob ids, an
		// extension type the library does not know.
		err := dec.Skip()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("value %d: %v", n, err)
		}
		n++
	}
	if n != 2*len(evs) {
		t.Errorf("got %d msgpack values, want %d", n, 2*len(evs))
	}
}

func TestUnknownKindIsSkipped(t *testing.T) {
	var e encoder
	e.reset()
	e.append(&Event{Kind: KindTiming, Tid: 1, Time: 10})
	// A kind from a later version, with a nested body.
	b := append(e.buf, byte(NumKinds))
	b = appendArrayHeader(b, 3)
	b = appendInt(b, 1)
	b = appendArrayHeader(b, 1)
	b = appendStr(b, "future")
	b = appendBin(b, []byte{1, 2, 3})
	e.buf = b
	e.append(&Event{Kind: KindTiming, Tid: 1, Time: 25})
	got, err := decodeAll(e.buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[1].Kind != NumKinds || got[2].Time != 25 {
		t.Errorf("got %+v, want timing 10, kind %d, timing 25", got, NumKinds)
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
	}{
		{"undefined call site", []byte{headSite0 + 3, 1}},
		{"new digest without site", []byte{headNewDigest, 0x93, 0, 1, 1}},
		{"short syscall body", []byte{byte(KindSyscall), 0x92, 1, 2}},
		{"unpaired memory", []byte{byte(KindSyscall), 0x96, 1, 2, 3, mpTrue, 0, 5}},
		{"string as tid", []byte{byte(KindClone), 0x93, 0xa1, 'x', 2, 3}},
		{"tid out of range", []byte{byte(KindTiming), 0x92, mpInt64, 0x80, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"array longer than data", []byte{byte(KindExit), mpArray32, 0xff, 0xff, 0xff, 0xff, 1}},
		{"truncated", []byte{byte(KindTiming), 0x92, 1}},
		{"negative head", []byte{0xff, 1}},
		{"bad blob ext", []byte{byte(KindMmap), 0x96, 1, 0xa0, mpExt8, 32, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeAll(tt.b)
			if err == nil {
				t.Errorf("decoded %+v, want an error", got)
			}
		})
	}
}

func TestCheckEventRefuses(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
	}{
		{"zero kind", Event{}},
		{"unknown kind", Event{Kind: NumKinds}},
		{"data and blob", Event{Kind: KindSyscall, Mem: []MemWrite{{Data: []byte{1}, Blob: BlobOf(nil)}}}},
		{"too large", Event{Kind: KindSyscall, Mem: []MemWrite{{Data: make([]byte, MaxEventSize+1)}}}},
	}
	for _, tt := range tests {
		if err := checkEvent(&tt.ev); err == nil {
			t.Errorf("%s: checkEvent accepted %+v", tt.name, tt.ev.Kind)
		}
	}
}

func TestMsgpackIntegers(t *testing.T) {
	vals := []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
		-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64}
	for _, v := range vals {
		b := appendInt(nil, v)
		r := mpReader{b: b}
		got, err := r.int()
		if err != nil || got != v || r.left() != 0 {
			t.Errorf("int %d: got %d, %v, %d bytes left", v, got, err, r.left())
		}
		var lib int64
		if err := msgpack.Unmarshal(b, &lib); err != nil || lib != v {
			t.Errorf("int %d: msgpack library reads %d, %v", v, lib, err)
		}
	}
	for _, v := range []uint64{0, 127, 128, math.MaxUint64} {
		b := appendUint(nil, v)
		r := mpReader{b: b}
		if got, err := r.uint(); err != nil || got != v {
			t.Errorf("uint %d: got %d, %v", v, got, err)
		}
	}
	r := mpReader{b: appendUint(nil, math.MaxUint64)}
	if _, err := r.int(); !errors.Is(err, errRange) {
		t.Errorf("int() of MaxUint64: %v, want errRange", err)
	}
}

func TestValidMsgpack(t *testing.T) {
	good, _ := msgpack.Marshal(map[string]any{"a": []any{1, "x", 2.5, nil, true, []byte{1}}, "b": map[string]int{"c": 3}})
	if err := validMsgpack(good); err != nil {
		t.Errorf("validMsgpack(good) = %v", err)
	}
	deep := bytes.Repeat([]byte{0x91}, maxNesting+1)
	deep = append(deep, 1)
	bad := map[string][]byte{
		"empty":    {},
		"trailing": append(append([]byte{}, good...), 1),
		"huge map": {mpMap32, 0x7f, 0xff, 0xff, 0xff},
		"deep":     deep,
		"c1":       {0xc1},
		"cut str":  {mpStr8, 10, 'a'},
	}
	for name, b := range bad {
		if err := validMsgpack(b); err == nil {
			t.Errorf("validMsgpack(%s) accepted %x", name, b)
		}
	}
}

// TestWriterReaderEveryKind round-trips every kind through the files, in
// blocks small enough that events straddle block boundaries.
func TestWriterReaderEveryKind(t *testing.T) {
	dir := t.TempDir() + "/t"
	w, err := CreateOptions(dir, Header{Argv: []string{"x"}}, Options{BlockEvents: 3})
	if err != nil {
		t.Fatal(err)
	}
	evs := sampleEvents()
	for i := range evs {
		if err := w.Append(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for i, ev := range r.Events() {
		if !sameEvent(ev, &evs[i]) {
			t.Errorf("event %d (%s):\n got %+v\nwant %+v", i, evs[i].Kind, normalize(ev), normalize(&evs[i]))
		}
		n++
	}
	if n != len(evs) || r.Err() != nil {
		t.Errorf("read %d events, Err() = %v; want %d, nil", n, r.Err(), len(evs))
	}
}
