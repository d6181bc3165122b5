package trace_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/trace"
	"github.com/hermitdbg/hermit/trace/tracetest"
)

func testHeader() trace.Header {
	return trace.Header{
		Hermit:  "test",
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Argv:    []string{"/usr/bin/server", "--port", "8080"},
		Env:     []string{"PATH=/usr/bin", "HOME=/root"},
		Dir:     "/srv",
		Flags:   map[string]string{"seed": "42", "epoch": "2021-12-31T23:59:59Z"},
		Kernel:  "6.18.44",
		CPU:     "AMD EPYC",
		CPUID:   []trace.CPUIDLeaf{{Leaf: 0, EAX: 0x10, EBX: 0x68747541}, {Leaf: 7, Subleaf: 0, EBX: 0x219c97a9}},
	}
}

// writeStream writes n events of stream seed to a new trace in dir.
func writeStream(t testing.TB, dir string, seed uint64, n int, opts trace.Options) {
	t.Helper()
	w, err := trace.CreateOptions(dir, testHeader(), opts)
	if err != nil {
		t.Fatal(err)
	}
	s := tracetest.NewStream(seed, true)
	var ev trace.Event
	for range n {
		s.Next(&ev)
		if err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkStream reads r from its position and compares each event with stream
// seed, from event first on. It returns the number of events read and the
// error that ended reading (nil for io.EOF).
func checkStream(t testing.TB, r *trace.Reader, seed uint64, first uint64) (uint64, error) {
	t.Helper()
	s := tracetest.NewStream(seed, true)
	var want, got trace.Event
	for range first {
		s.Next(&want)
	}
	n := uint64(0)
	for {
		err := r.Next(&got)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		s.Next(&want)
		if !sameEvent(&got, &want) {
			t.Fatalf("event %d: got %+v, want %+v", first+n, got, want)
		}
		n++
	}
}

func TestMillionEvents(t *testing.T) {
	const n = 1_000_000
	dir := filepath.Join(t.TempDir(), "t")
	w, err := trace.Create(dir, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	s := tracetest.NewStream(1, true)
	var ev trace.Event
	var before, after runtime.MemStats
	peak := uint64(0)
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		s.Next(&ev)
		if err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
		if i%100_000 == 0 {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
		}
	}
	runtime.ReadMemStats(&after)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Blocks are ~128 KiB; the writer keeps one open, one sealed and the
	// compressor's tables. A leak per event would show as ~tens of MiB.
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("writer: %d events, %.1f MiB allocated in total, heap in use %.1f -> peak %.1f MiB",
		n, float64(alloc)/(1<<20), float64(before.HeapInuse)/(1<<20), float64(peak)/(1<<20))
	if alloc > 8<<20 {
		t.Errorf("writing %d events allocated %d bytes, want under 8 MiB", n, alloc)
	}
	if peak > before.HeapInuse+8<<20 {
		t.Errorf("heap in use grew from %d to %d bytes while writing", before.HeapInuse, peak)
	}

	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Count() != n || r.Truncation() != nil {
		t.Fatalf("Count() = %d, Truncation() = %v; want %d, nil", r.Count(), r.Truncation(), n)
	}
	got, err := checkStream(t, r, 1, 0)
	if err != nil || got != n {
		t.Fatalf("read %d events, %v; want %d", got, err, n)
	}
	if !sameHeader(r.Header(), testHeader()) {
		t.Errorf("header: got %+v, want %+v", r.Header(), testHeader())
	}
	st, ok := r.IndexStats()
	if !ok || st.Events != n || st.Kinds[trace.KindSyscall].Events == 0 || len(st.Threads) != 4 {
		t.Errorf("IndexStats() = %+v, %v", st, ok)
	}
}

func sameHeader(got *trace.Header, want trace.Header) bool {
	want.Version = trace.FormatVersion
	g := *got
	return g.Hermit == want.Hermit && g.Created.Equal(want.Created) && equalStrings(g.Argv, want.Argv) &&
		equalStrings(g.Env, want.Env) && g.Dir == want.Dir && len(g.Flags) == len(want.Flags) &&
		g.Flags["seed"] == want.Flags["seed"] && g.Kernel == want.Kernel && g.CPU == want.CPU &&
		len(g.CPUID) == len(want.CPUID) && g.CPUID[1] == want.CPUID[1] && g.Version == want.Version
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFileModes: a trace's files are 0600 and its directories 0700,
// and so are the parents Create makes (record -o new/dir).
func TestFileModes(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "new")
	dir := filepath.Join(parent, "sub", "t")
	w, err := trace.Create(dir, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.PutBlob(readerOf("some library")); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&trace.Event{Kind: trace.KindTiming, Tid: 1, Time: 2}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = fs.ModeDir | 0o700
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
		n++
		return nil
	})
	if n < 8 { // new/, sub/, dir, header, events, index, blobs/, the blob
		t.Errorf("walked %d entries, want at least 8", n)
	}
}

func TestCreateRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o600)
	if w, err := trace.Create(dir, testHeader()); err == nil {
		w.Close()
		t.Fatal("Create accepted a non-empty directory")
	}
	empty := t.TempDir()
	w, err := trace.Create(empty, testHeader())
	if err != nil {
		t.Fatalf("Create(empty existing dir): %v", err)
	}
	w.Close()
}

// TestBlockEventsFlush checks that a block is written as soon as it has
// BlockEvents events, without Flush or Close.
func TestBlockEventsFlush(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	w, err := trace.CreateOptions(dir, testHeader(), trace.Options{BlockEvents: 100, FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ev := trace.Event{Kind: trace.KindSyscall, Tid: 1, Sysno: 39, Result: 1}
	for range 250 {
		if err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
	}
	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var te *trace.TruncatedError
	if r.Count() != 200 || !errors.As(r.Truncation(), &te) || te.Event != 200 || te.Block != 2 {
		t.Errorf("open trace: Count() = %d, Truncation() = %v; want 200, truncated at event 200 (block 2)", r.Count(), r.Truncation())
	}
}

// TestTimedFlush checks that events reach the file within FlushInterval
// while the writer is idle.
func TestTimedFlush(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	w, err := trace.CreateOptions(dir, testHeader(), trace.Options{FlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range 3 {
		if err := w.Append(&trace.Event{Kind: trace.KindTiming, Tid: 1, Time: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := trace.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := r.Count()
		r.Close()
		if n == 3 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5s, %d events readable, want 3", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWriterAfterClose(t *testing.T) {
	w, err := trace.Create(filepath.Join(t.TempDir(), "t"), testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&trace.Event{Kind: trace.KindTiming}); !errors.Is(err, trace.ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, trace.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
}

func TestAppendRefusesBadEvent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	w, err := trace.Create(dir, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&trace.Event{Kind: 99}); err == nil {
		t.Error("Append accepted kind 99")
	}
	if err := w.Append(&trace.Event{Kind: trace.KindExit, Tid: 3}); err != nil {
		t.Errorf("Append after a refused event: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Count() != 1 {
		t.Errorf("Count() = %d, want 1", r.Count())
	}
}

func TestEmptyTrace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	w, err := trace.Create(dir, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ev trace.Event
	if err := r.Next(&ev); err != io.EOF || r.Count() != 0 || r.Truncation() != nil {
		t.Errorf("empty trace: Next = %v, Count = %d, Truncation = %v", err, r.Count(), r.Truncation())
	}
	if _, err := r.Scan(); err != nil {
		t.Errorf("Scan() = %v", err)
	}
}
