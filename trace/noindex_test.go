package trace_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/trace"
	"github.com/hermitdbg/hermit/trace/tracetest"
)

// rootPid is the root process of recordingEvents.
const rootPid = 7

// recordingEvents returns n events shaped as hermit record writes them:
// the root's exec first, then stream 5, then the root's exit twice (as the
// engine reports it, and as the recorder's Close ends the trace).
func recordingEvents(n int) []trace.Event {
	out := []trace.Event{{Kind: trace.KindExec, Tid: rootPid, Exec: &trace.Exec{Path: "/bin/prog", Argv: []string{"prog"}}}}
	s := tracetest.NewStream(5, true)
	var ev trace.Event
	for len(out) < n-2 {
		s.Next(&ev)
		out = append(out, trace.Normalize(&ev))
	}
	exit := trace.Event{Kind: trace.KindExit, Tid: rootPid, Status: 3 << 8, Group: true}
	return append(out, exit, exit)
}

// writeEvents writes evs as a trace in a new directory, in blocks of 100
// events, and returns it.
func writeEvents(t *testing.T, evs []trace.Event) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t")
	w, err := trace.CreateOptions(dir, testHeader(), trace.Options{BlockEvents: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Append(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readAll reads r from event 0 and compares each event with want. It
// returns the number of events read and the error that ended reading.
func readAll(t *testing.T, r *trace.Reader, want []trace.Event) (uint64, error) {
	t.Helper()
	if err := r.Seek(0); err != nil {
		return 0, err
	}
	var ev trace.Event
	n := uint64(0)
	for {
		err := r.Next(&ev)
		if err != nil {
			return n, err
		}
		if n >= uint64(len(want)) || !trace.SameEvent(&ev, &want[n]) {
			t.Fatalf("event %d differs from the one written", n)
		}
		n++
	}
}

// TestCompleteWithoutIndex checks that the index is only an accelerator: a
// finished recording whose index is missing, damaged or wrong reads as
// complete from its events file, with IndexError saying why the index was
// not used.
func TestCompleteWithoutIndex(t *testing.T) {
	evs := recordingEvents(1234)
	orig := writeEvents(t, evs)
	index, err := os.ReadFile(filepath.Join(orig, "index"))
	if err != nil {
		t.Fatal(err)
	}
	other := writeEvents(t, recordingEvents(1000)) // a smaller trace's index
	otherIndex, err := os.ReadFile(filepath.Join(other, "index"))
	if err != nil {
		t.Fatal(err)
	}
	flip := func(off int) []byte {
		b := append([]byte(nil), index...)
		b[off] ^= 0x10
		return b
	}
	tests := []struct {
		name  string
		index []byte // nil: no index file
		want  error  // what IndexError matches
	}{
		{"intact", index, nil},
		{"missing", nil, trace.ErrNoIndex},
		{"empty", []byte{}, trace.ErrCorrupt},
		{"flipped header byte", flip(3), trace.ErrNotTrace},
		{"flipped body byte", flip(len(index) / 2), trace.ErrChecksum},
		{"flipped checksum byte", flip(len(index) - 1), trace.ErrChecksum},
		{"cut", index[:len(index)/2], trace.ErrCorrupt},
		{"another trace's", otherIndex, trace.ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTrace(t, orig, func(b []byte) []byte { return b })
			p := filepath.Join(dir, "index")
			if tc.index == nil {
				os.Remove(p)
			} else if err := os.WriteFile(p, tc.index, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := trace.Open(dir)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer r.Close()
			if r.Count() != uint64(len(evs)) || r.Truncation() != nil {
				t.Errorf("Count() = %d, Truncation() = %v; want %d, nil", r.Count(), r.Truncation(), len(evs))
			}
			ierr := r.IndexError()
			switch {
			case tc.want == nil && ierr != nil:
				t.Errorf("IndexError() = %v, want nil", ierr)
			case tc.want == trace.ErrNotTrace:
				// A bad magic: any error naming the index will do.
				if ierr == nil || !strings.Contains(ierr.Error(), "index") {
					t.Errorf("IndexError() = %v, want an error naming the index", ierr)
				}
			case tc.want != nil && (!errors.Is(ierr, tc.want) || !strings.Contains(ierr.Error(), "index")):
				t.Errorf("IndexError() = %v, want %v naming the index", ierr, tc.want)
			}
			if _, ok := r.IndexStats(); ok != (tc.want == nil) {
				t.Errorf("IndexStats() ok = %v, want %v", ok, tc.want == nil)
			}
			if ierr != nil && trace.DamagedFile(ierr) != "index" {
				t.Errorf("DamagedFile(%v) = %q, want index", ierr, trace.DamagedFile(ierr))
			}
			if n, err := readAll(t, r, evs); n != uint64(len(evs)) || err != io.EOF {
				t.Errorf("read %d events, then %v; want %d, then EOF", n, err, len(evs))
			}
			for _, k := range []uint64{1233, 0, 555, 100, 99, 1234} {
				if err := r.Seek(k); err != nil {
					t.Fatalf("Seek(%d): %v", k, err)
				}
				var ev trace.Event
				err := r.Next(&ev)
				if k == uint64(len(evs)) {
					if err != io.EOF {
						t.Errorf("Next after Seek(%d) = %v, want EOF", k, err)
					}
					continue
				}
				if err != nil || !trace.SameEvent(&ev, &evs[k]) {
					t.Errorf("Next after Seek(%d) = %v, or not event %d", k, err, k)
				}
			}
			s, err := r.Scan()
			if errors.Is(err, trace.ErrMissingBlob) {
				err = nil // the synthetic stream names blobs it does not store
			}
			if err != nil || s.Events != uint64(len(evs)) || s.Blocks != 13 {
				t.Errorf("Scan() = %d events in %d blocks, %v; want %d in 13, nil", s.Events, s.Blocks, err, len(evs))
			}
		})
	}
}

// TestUnfinishedWithoutIndex checks that without an index, events that do
// not end with the root's exit read as truncated, however intact: the
// recorder died between blocks.
func TestUnfinishedWithoutIndex(t *testing.T) {
	evs := recordingEvents(450)
	child := trace.Event{Kind: trace.KindExit, Tid: rootPid + 1, Group: true}
	for _, tc := range []struct {
		name string
		evs  []trace.Event
	}{
		{"before the root's exit", evs[:400]},
		{"at another process's exit", append(append([]trace.Event(nil), evs[:399]...), child)},
		{"a single block", evs[:50]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeEvents(t, tc.evs)
			os.Remove(filepath.Join(dir, "index"))
			r, err := trace.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			n := uint64(len(tc.evs))
			blocks := (n + 99) / 100
			var te *trace.TruncatedError
			if !errors.As(r.Truncation(), &te) || te.Event != n || te.Block != blocks || te.Off != te.Size || r.IndexError() != nil {
				t.Fatalf("Truncation() = %#v, IndexError() = %v; want truncated at event %d (block %d) at the end of the file, nil",
					r.Truncation(), r.IndexError(), n, blocks)
			}
			if got, err := readAll(t, r, tc.evs); got != n || err != r.Truncation() {
				t.Errorf("read %d events, then %v; want %d, then %v", got, err, n, r.Truncation())
			}
			if msg := trace.Explain(te); !strings.Contains(msg, "the events file ends at byte") {
				t.Errorf("Explain(%v) = %q, want it to say where the events file ends", te, msg)
			}
		})
	}
}

// TestCutEvents cuts the events file of a finished recording at several
// points, the first block included, with and without its index: Open
// succeeds, and Count, Truncation, Next, Seek and Explain say where the
// events end.
func TestCutEvents(t *testing.T) {
	evs := recordingEvents(1234)
	orig := writeEvents(t, evs)
	blocks, err := trace.Blocks(orig)
	if err != nil {
		t.Fatal(err)
	}
	size := blocks[len(blocks)-1].End
	tests := []struct {
		name string
		cut  int64
		// block is where the events end; inside says the cut is in it.
		block   int
		inside  bool
		explain string
	}{
		{"empty", 0, 0, false, "the events file is empty"},
		{"inside the first block's header", 10, 0, true, "cut at byte 10, inside block 0, which starts at byte 0"},
		{"half the first block", blocks[0].End / 2, 0, true, "inside block 0, which starts at byte 0"},
		{"one byte short of the first block", blocks[0].End - 1, 0, true, "inside block 0"},
		{"after the first block", blocks[0].End, 1, false, "ends at byte"},
		{"inside block 5", blocks[5].Off + 40, 5, true, "inside block 5"},
		{"one byte short", size - 1, len(blocks) - 1, true, "inside block 12"},
	}
	for _, tc := range tests {
		for _, withIndex := range []bool{true, false} {
			dir := copyTrace(t, orig, func(b []byte) []byte { return b[:tc.cut] })
			if !withIndex {
				os.Remove(filepath.Join(dir, "index"))
			}
			what := tc.name
			if !withIndex {
				what += ", no index"
			}
			r, err := trace.Open(dir)
			if err != nil {
				t.Fatalf("%s: Open: %v", what, err)
			}
			first := uint64(0)
			if tc.block < len(blocks) {
				first = blocks[tc.block].First
			}
			var te *trace.TruncatedError
			end := r.Truncation()
			if !errors.As(end, &te) || te.Event != first || te.Block != uint64(tc.block) ||
				te.Size != tc.cut || (te.Size > te.Off) != tc.inside || r.Count() != first || r.IndexError() != nil {
				t.Errorf("%s: Count() = %d, Truncation() = %#v, IndexError() = %v; want %d, truncated at event %d (block %d), nil",
					what, r.Count(), end, r.IndexError(), first, first, tc.block)
				r.Close()
				continue
			}
			if msg := trace.Explain(end); !strings.HasPrefix(msg, end.Error()+": ") || !strings.Contains(msg, tc.explain) {
				t.Errorf("%s: Explain = %q, want %q after the error", what, msg, tc.explain)
			}
			if f := trace.DamagedFile(end); f != "events" {
				t.Errorf("%s: DamagedFile = %q, want events", what, f)
			}
			if n, err := readAll(t, r, evs); n != first || err == nil || err.Error() != end.Error() {
				t.Errorf("%s: read %d events, then %v; want %d, then %v", what, n, err, first, end)
			}
			if err := r.Seek(first + 1); err == nil {
				t.Errorf("%s: Seek past the end succeeded", what)
			}
			if err := r.Seek(first); err != nil {
				t.Errorf("%s: Seek(%d) = %v", what, first, err)
			} else if err := r.Next(&trace.Event{}); err == nil || err.Error() != end.Error() {
				t.Errorf("%s: Next at the end = %v, want %v", what, err, end)
			}
			if first > 0 {
				var ev trace.Event
				if err := r.Seek(first - 1); err != nil || r.Next(&ev) != nil || !trace.SameEvent(&ev, &evs[first-1]) {
					t.Errorf("%s: the last intact event %d is not readable after Seek", what, first-1)
				}
			}
			if _, err := r.Scan(); err == nil || err.Error() != end.Error() {
				t.Errorf("%s: Scan() = %v, want %v", what, err, end)
			}
			r.Close()
		}
	}
}

// TestDamagedFile checks which file DamagedFile names for each kind of
// error.
func TestDamagedFile(t *testing.T) {
	var id trace.BlobID
	id[0], id[1] = 0xab, 0xcd
	tests := []struct {
		err  error
		want string
	}{
		{&trace.TruncatedError{Event: 3, Block: 1}, "events"},
		{&trace.ChecksumError{Part: "events", Block: 1}, "events"},
		{&trace.CorruptError{Part: "events", Msg: "x"}, "events"},
		{&trace.ChecksumError{Part: "index"}, "index"},
		{&trace.CorruptError{Part: "header", Msg: "x"}, "header"},
		{&trace.ChecksumError{Part: "blob " + id.String()}, filepath.Join("blobs", id.String())},
		{&trace.MissingBlobError{ID: id}, filepath.Join("blobs", id.String())},
		{&trace.MissingBlobError{ID: id, File: filepath.Join("blobs", "ab", id.String()[2:])}, filepath.Join("blobs", "ab", id.String()[2:])},
		{trace.ErrNoIndex, "index"},
		{io.ErrUnexpectedEOF, ""},
	}
	for _, tc := range tests {
		if got := trace.DamagedFile(tc.err); got != tc.want {
			t.Errorf("DamagedFile(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
