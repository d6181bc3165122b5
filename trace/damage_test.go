package trace_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/trace"
)

// damageFixture writes a trace of 20000 events in blocks of 500 and returns
// its directory and blocks.
func damageFixture(t *testing.T) (string, []trace.BlockSpan) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "orig")
	writeStream(t, dir, 7, 20000, trace.Options{BlockEvents: 500})
	blocks, err := trace.Blocks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 40 {
		t.Fatalf("fixture has %d blocks, want 40", len(blocks))
	}
	return dir, blocks
}

// copyTrace copies the trace in src to a new directory, applying edit to the
// events file's bytes.
func copyTrace(t *testing.T, src string, edit func([]byte) []byte) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "events" {
			b = edit(b)
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// blockAt returns the block holding byte off of the events file.
func blockAt(blocks []trace.BlockSpan, off int64) (int, trace.BlockSpan) {
	for i, b := range blocks {
		if off < b.End {
			return i, b
		}
	}
	return len(blocks), trace.BlockSpan{First: blocks[len(blocks)-1].First + blocks[len(blocks)-1].Count}
}

// readDamaged opens dir, reads it to the end checking every event against
// stream 7, and returns the number of events read and the final error. It
// also checks that Scan agrees.
func readDamaged(t *testing.T, dir string, withIndex bool) (uint64, error) {
	t.Helper()
	if !withIndex {
		os.Remove(filepath.Join(dir, "index"))
	}
	r, err := trace.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	n, err := checkStream(t, r, 7, 0)
	if err == nil {
		t.Fatalf("read %d events of a damaged trace without error", n)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") {
		t.Errorf("error %q has more than one line", msg)
	}
	if _, serr := r.Scan(); serr == nil || serr.Error() != err.Error() {
		t.Errorf("Scan() = %v, want %v", serr, err)
	}
	return n, err
}

func TestCutTrace(t *testing.T) {
	orig, blocks := damageFixture(t)
	size := blocks[len(blocks)-1].End
	rng := rand.New(rand.NewPCG(1, 2))
	cuts := []int64{0, blocks[3].Off, blocks[3].Off + 1, size - 1}
	for len(cuts) < 10+4 {
		cuts = append(cuts, rng.Int64N(size))
	}
	for _, cut := range cuts {
		i, b := blockAt(blocks, cut)
		for _, withIndex := range []bool{true, false} {
			dir := copyTrace(t, orig, func(e []byte) []byte { return e[:cut] })
			n, err := readDamaged(t, dir, withIndex)
			var te *trace.TruncatedError
			if !errors.As(err, &te) || te.Event != b.First || te.Block != uint64(i) || n != b.First {
				t.Errorf("cut at byte %d (index %v): read %d events, then %v; want %d events, then truncated at event %d (block %d)",
					cut, withIndex, n, err, b.First, b.First, i)
			}
		}
	}
}

func TestFlippedByte(t *testing.T) {
	orig, blocks := damageFixture(t)
	size := blocks[len(blocks)-1].End
	rng := rand.New(rand.NewPCG(3, 4))
	offs := []int64{0, 29, blocks[5].Off + 4, blocks[5].Off + 16, size - 1}
	for len(offs) < 10+5 {
		offs = append(offs, rng.Int64N(size))
	}
	for _, off := range offs {
		i, b := blockAt(blocks, off)
		mask := byte(1 + rng.IntN(255))
		for _, withIndex := range []bool{true, false} {
			dir := copyTrace(t, orig, func(e []byte) []byte { e[off] ^= mask; return e })
			n, err := readDamaged(t, dir, withIndex)
			var ce *trace.ChecksumError
			if !errors.As(err, &ce) || ce.Block != uint64(i) || ce.Event != b.First || n != b.First {
				t.Errorf("flip at byte %d (index %v): read %d events, then %v; want %d events, then checksum mismatch at block %d",
					off, withIndex, n, err, b.First, i)
			}
		}
	}
}

func TestDamagedHeader(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	writeStream(t, dir, 1, 10, trace.Options{})
	hb, err := os.ReadFile(filepath.Join(dir, "header"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func([]byte) []byte
		want error
	}{
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, trace.ErrNotTrace},
		{"version", func(b []byte) []byte { b[8] = 9; return b }, trace.ErrUnsupportedVersion},
		{"body", func(b []byte) []byte { b[20] ^= 0x40; return b }, trace.ErrChecksum},
		{"crc", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, trace.ErrChecksum},
		{"cut", func(b []byte) []byte { return b[:len(b)-5] }, trace.ErrCorrupt},
		{"tiny", func(b []byte) []byte { return b[:10] }, trace.ErrCorrupt},
		{"empty", func(b []byte) []byte { return nil }, trace.ErrNotTrace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.edit(append([]byte(nil), hb...))
			if err := os.WriteFile(filepath.Join(dir, "header"), b, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := trace.Open(dir)
			if err == nil {
				r.Close()
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Open = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := trace.Open(t.TempDir()); !errors.Is(err, trace.ErrNotTrace) {
		t.Errorf("Open(empty dir) = %v, want ErrNotTrace", err)
	}
	var ve *trace.VersionError
	os.WriteFile(filepath.Join(dir, "header"), append(hb[:8:8], 2, 0), 0o600)
	if _, err := trace.Open(dir); !errors.As(err, &ve) || ve.Version != 2 || ve.Error() != "unsupported trace version 2 (this hermit reads version 1)" {
		t.Errorf("Open(version 2) = %v", err)
	}
}

// TestDamagedIndex checks that a damaged index is reported, and that the
// events stay readable through the block headers.
func TestDamagedIndex(t *testing.T) {
	orig := filepath.Join(t.TempDir(), "t")
	writeStream(t, orig, 7, 3000, trace.Options{BlockEvents: 500})
	ib, err := os.ReadFile(filepath.Join(orig, "index"))
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{0, 9, 14, 20, len(ib) / 2, len(ib) - 1} {
		dir := copyTrace(t, orig, func(b []byte) []byte { return b })
		b := append([]byte(nil), ib...)
		b[off] ^= 0x21
		os.WriteFile(filepath.Join(dir, "index"), b, 0o600)
		r, err := trace.Open(dir)
		if err != nil {
			t.Fatalf("flip at index byte %d: Open = %v", off, err)
		}
		n, err := checkStream(t, r, 7, 0)
		r.Close()
		if n != 3000 || !(errors.Is(err, trace.ErrChecksum) || errors.Is(err, trace.ErrCorrupt)) ||
			!strings.Contains(err.Error(), "index") {
			t.Errorf("flip at index byte %d: read %d events, then %v; want 3000, then index damage", off, n, err)
		}
	}
}

// TestGarbageEvents feeds an events file of random bytes.
func TestGarbageEvents(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	writeStream(t, dir, 1, 1, trace.Options{})
	os.Remove(filepath.Join(dir, "index"))
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		b := make([]byte, rng.IntN(4096))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		os.WriteFile(filepath.Join(dir, "events"), b, 0o600)
		r, err := trace.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Scan(); err == nil && len(b) > 0 {
			t.Errorf("Scan of %d random bytes found no damage", len(b))
		}
		r.Close()
	}
}

// TestNoEventsFile is a recorder killed between writing the header and
// creating the events file.
func TestNoEventsFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	writeStream(t, dir, 1, 10, trace.Options{})
	os.Remove(filepath.Join(dir, "events"))
	os.Remove(filepath.Join(dir, "index"))
	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var te *trace.TruncatedError
	if err := r.Next(&trace.Event{}); !errors.As(err, &te) || te.Event != 0 || r.Count() != 0 {
		t.Errorf("Next = %v, Count = %d; want truncated at event 0", err, r.Count())
	}
}
