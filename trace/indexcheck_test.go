package trace

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// writeFinished writes a finished recording of 502 events (the root's
// exec, 500 calls, the root's exit) in blocks of 50 and returns its
// directory.
func writeFinished(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t")
	w, err := CreateOptions(dir, Header{Argv: []string{"prog"}}, Options{BlockEvents: 50, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	evs := []Event{{Kind: KindExec, Tid: 3, Exec: &Exec{Path: "/prog", Argv: []string{"prog"}}}}
	for i := range 500 {
		evs = append(evs, Event{Kind: KindSyscall, Tid: 3, Sysno: 39, Result: int64(i)})
	}
	evs = append(evs, Event{Kind: KindExit, Tid: 3, Group: true})
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

// TestIndexNotTrusted rewrites the index of a finished recording with a
// valid checksum but contents that do not match the events: Open must not
// use its block table, and Scan must not trust its statistics, yet every
// event stays readable and the trace complete.
func TestIndexNotTrusted(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(s *Stats, tb *blockTable)
		atOpen bool // Open notices (else Scan does)
	}{
		{"block offset off by one", func(_ *Stats, tb *blockTable) { tb.refs[3].Off++ }, true},
		{"first events shifted", func(_ *Stats, tb *blockTable) {
			tb.refs[2].First, tb.refs[3].First = tb.refs[2].First+1, tb.refs[3].First+1
		}, true},
		{"a block too few", func(s *Stats, tb *blockTable) { s.Blocks--; tb.refs = tb.refs[:len(tb.refs)-1] }, true},
		{"events miscounted", func(s *Stats, _ *blockTable) { s.Events--; s.Threads[3]--; s.Kinds[KindSyscall].Events-- }, true},
		{"kind counts wrong", func(s *Stats, _ *blockTable) { s.Kinds[KindSyscall].Events--; s.Kinds[KindTiming].Events++ }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFinished(t)
			b, err := os.ReadFile(filepath.Join(dir, indexFile))
			if err != nil {
				t.Fatal(err)
			}
			s, tb, size, err := parseIndex(b)
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(s, tb)
			if b, err = marshalIndex(s, tb, size); err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := parseIndex(b); err != nil {
				t.Fatalf("the edited index does not parse: %v", err)
			}
			if err := os.WriteFile(filepath.Join(dir, indexFile), b, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if (r.IndexError() != nil) != tc.atOpen || r.Truncation() != nil || r.Count() != 502 {
				t.Fatalf("after Open: IndexError() = %v, Truncation() = %v, Count() = %d; want an index error %v, nil, 502",
					r.IndexError(), r.Truncation(), r.Count(), tc.atOpen)
			}
			st, err := r.Scan()
			if err != nil || st.Events != 502 || st.Blocks != 11 {
				t.Errorf("Scan() = %d events, %d blocks, %v; want 502, 11, nil", st.Events, st.Blocks, err)
			}
			ierr := r.IndexError()
			if !errors.Is(ierr, ErrCorrupt) || DamagedFile(ierr) != indexFile {
				t.Errorf("after Scan: IndexError() = %v, want a corrupt index", ierr)
			}
			if _, ok := r.IndexStats(); ok {
				t.Errorf("IndexStats() still offers the index's statistics")
			}
			var ev Event
			if err := r.Seek(175); err != nil || r.Next(&ev) != nil || ev.Result != 174 {
				t.Errorf("Seek(175) = %v, then event with result %d; want nil, 174", err, ev.Result)
			}
			if err := r.Seek(502); err != nil || r.Next(&ev) != io.EOF {
				t.Errorf("Seek(502) = %v, Next did not report the end", err)
			}
		})
	}
}
