package trace_test

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/hermitdbg/hermit/trace"
	"github.com/hermitdbg/hermit/trace/tracetest"
)

// streamEvents returns the first n events of stream seed, normalised.
func streamEvents(seed uint64, n int) []trace.Event {
	s := tracetest.NewStream(seed, true)
	out := make([]trace.Event, n)
	var ev trace.Event
	for i := range out {
		s.Next(&ev)
		out[i] = trace.Normalize(&ev)
	}
	return out
}

func TestSeek(t *testing.T) {
	const n = 5000
	dir := filepath.Join(t.TempDir(), "t")
	writeStream(t, dir, 3, n, trace.Options{BlockEvents: 97})
	want := streamEvents(3, n)
	for _, withIndex := range []bool{true, false} {
		if !withIndex {
			os.Remove(filepath.Join(dir, "index"))
		}
		r, err := trace.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		targets := []uint64{0, 96, 97, 98, n - 1, n - 1, 3, 2}
		for range 200 {
			targets = append(targets, rng.Uint64N(n))
		}
		var ev trace.Event
		for _, k := range targets {
			if err := r.Seek(k); err != nil {
				t.Fatalf("Seek(%d): %v", k, err)
			}
			if r.Pos() != k {
				t.Fatalf("after Seek(%d), Pos() = %d", k, r.Pos())
			}
			// Read two events to cross block boundaries too.
			for j := k; j < min(k+2, n); j++ {
				if err := r.Next(&ev); err != nil {
					t.Fatalf("after Seek(%d), Next: %v", k, err)
				}
				if !sameEvent(&ev, &want[j]) {
					t.Fatalf("after Seek(%d), event %d: got %+v, want %+v", k, j, ev, want[j])
				}
			}
		}
		if err := r.Seek(n); err != nil {
			t.Errorf("Seek(Count()) = %v", err)
		}
		if err := r.Next(&ev); withIndex && err != io.EOF || !withIndex && !errors.Is(err, trace.ErrTruncated) {
			t.Errorf("Next at the end (index %v) = %v", withIndex, err)
		}
		if err := r.Seek(n + 1); err == nil {
			t.Error("Seek past the end succeeded")
		}
		r.Close()
	}
}

func TestEventsIterator(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	writeStream(t, dir, 4, 300, trace.Options{BlockEvents: 64})
	want := streamEvents(4, 300)
	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Seek(100); err != nil {
		t.Fatal(err)
	}
	next := uint64(100)
	for n, ev := range r.Events() {
		if n != next || !sameEvent(ev, &want[n]) {
			t.Fatalf("event %d (want number %d): got %+v, want %+v", n, next, ev, want[n])
		}
		next++
		if n == 250 {
			break
		}
	}
	if next != 251 || r.Err() != nil {
		t.Fatalf("stopped at %d, Err() = %v", next, r.Err())
	}
	for range r.Events() {
		next++
	}
	if next != 300 || r.Err() != nil {
		t.Errorf("iterated to %d, Err() = %v; want 300, nil", next, r.Err())
	}
}
