package trace_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/hermitdbg/hermit/trace"
)

// blobTrace writes a trace with one exec event referring to the given blob
// contents and returns its directory and the blob ids.
func blobTrace(t *testing.T, contents ...[]byte) (string, []trace.BlobID) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t")
	w, err := trace.Create(dir, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	var ids []trace.BlobID
	x := &trace.Exec{Path: "/bin/prog", Argv: []string{"prog"}}
	for i, c := range contents {
		id, err := w.PutBlob(bytes.NewReader(c))
		if err != nil {
			t.Fatal(err)
		}
		if id != trace.BlobOf(c) {
			t.Errorf("PutBlob(content %d) = %v, want its SHA-256 %v", i, id, trace.BlobOf(c))
		}
		ids = append(ids, id)
		x.Files = append(x.Files, trace.MappedFile{Path: "/lib/" + id.Short(), Blob: id})
	}
	if err := w.Append(&trace.Event{Kind: trace.KindExec, Tid: 1, Exec: x}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, ids
}

func TestBlobs(t *testing.T) {
	big := make([]byte, 3<<20)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range big {
		big[i] = byte(rng.IntN(4)) // compressible but not trivial
	}
	small := []byte("#!/bin/sh\necho hi\n")
	dir, ids := blobTrace(t, big, small, small, nil)
	if ids[1] != ids[2] {
		t.Errorf("same content got ids %v and %v", ids[1], ids[2])
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "blobs"))
	if len(ents) != 3 { // three distinct blobs, no temporary files left
		t.Errorf("blobs/ holds %d entries, want 3", len(ents))
	}
	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, want := range map[int][]byte{0: big, 1: small, 3: nil} {
		got, err := r.Blob(ids[i])
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Blob(%d): %d bytes, %v; want %d bytes", i, len(got), err, len(want))
		}
	}
	if _, err := r.Scan(); err != nil {
		t.Errorf("Scan() = %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, "blobs", ids[0].String()))
	if err != nil || fi.Size() >= int64(len(big)) {
		t.Errorf("stored big blob: %v, %v; want a compressed file", fi, err)
	}
}

// TestFannedBlobs: a trace made before 2026-12-08 holds its blobs in a
// directory per first two hex digits (blobs/ab/cdef…); it reads as
// before, and a damaged or missing blob there is named by its own path.
func TestFannedBlobs(t *testing.T) {
	content := bytes.Repeat([]byte("shared library text "), 5000)
	dir, ids := blobTrace(t, content, []byte("libm"))
	fanned := make([]string, len(ids))
	for i, id := range ids {
		s := id.String()
		fanned[i] = filepath.Join("blobs", s[:2], s[2:])
		if err := os.MkdirAll(filepath.Join(dir, "blobs", s[:2]), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "blobs", s), filepath.Join(dir, fanned[i])); err != nil {
			t.Fatal(err)
		}
	}
	r := openReader(t, dir)
	if got, err := r.Blob(ids[0]); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("Blob of a fanned trace: %d bytes, %v; want %d bytes", len(got), err, len(content))
	}
	if _, err := r.Scan(); err != nil {
		t.Errorf("Scan() of a fanned trace = %v", err)
	}
	if n, size := r.StoredBlobs(); n != 2 || size == 0 {
		t.Errorf("StoredBlobs() = %d, %d; want 2 blobs", n, size)
	}
	p := filepath.Join(dir, fanned[0])
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b := append([]byte(nil), orig...)
	b[len(b)/2] ^= 0x10
	os.WriteFile(p, b, 0o600)
	if _, err := r.Blob(ids[0]); !errors.Is(err, trace.ErrChecksum) || trace.DamagedFile(err) != fanned[0] {
		t.Errorf("a damaged fanned blob: %v, in file %q; want a checksum mismatch in %s", err, trace.DamagedFile(err), fanned[0])
	}
	os.Remove(filepath.Join(dir, fanned[1]))
	if _, err := r.Blob(ids[1]); !errors.Is(err, trace.ErrMissingBlob) || trace.DamagedFile(err) != fanned[1] {
		t.Errorf("a missing fanned blob: %v, in file %q; want it missing at %s", err, trace.DamagedFile(err), fanned[1])
	}
}

func TestMissingBlob(t *testing.T) {
	dir, ids := blobTrace(t, []byte("libc"))
	os.Remove(filepath.Join(dir, "blobs", ids[0].String()))
	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var mb *trace.MissingBlobError
	if _, err := r.Blob(ids[0]); !errors.As(err, &mb) || mb.ID != ids[0] {
		t.Errorf("Blob(removed) = %v, want missing blob", err)
	}
	if _, err := r.Scan(); !errors.Is(err, trace.ErrMissingBlob) {
		t.Errorf("Scan() = %v, want missing blob", err)
	}
}

func TestDamagedBlob(t *testing.T) {
	content := bytes.Repeat([]byte("shared library text "), 5000)
	dir, ids := blobTrace(t, content)
	p := filepath.Join(dir, "blobs", ids[0].String())
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{0, 5, len(orig) / 2, len(orig) - 1} {
		b := append([]byte(nil), orig...)
		b[off] ^= 0x10
		os.WriteFile(p, b, 0o600)
		r, err := trace.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Blob(ids[0]); !errors.Is(err, trace.ErrChecksum) {
			t.Errorf("flip at blob byte %d: Blob() = %v, want checksum mismatch", off, err)
		}
		if _, err := r.Scan(); !errors.Is(err, trace.ErrChecksum) {
			t.Errorf("flip at blob byte %d: Scan() = %v, want checksum mismatch", off, err)
		}
		r.Close()
	}
	// A blob holding other (intact) content: the hash tells.
	other := filepath.Join(t.TempDir(), "o")
	w, _ := trace.Create(other, testHeader())
	id, _ := w.PutBlob(bytes.NewReader([]byte("other")))
	w.Close()
	b, _ := os.ReadFile(filepath.Join(other, "blobs", id.String()))
	os.WriteFile(p, b, 0o600)
	rc, err := openReader(t, dir).OpenBlob(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadAll(rc); !errors.Is(err, trace.ErrChecksum) {
		t.Errorf("swapped blob: %v, want checksum mismatch", err)
	}
}

func openReader(t *testing.T, dir string) *trace.Reader {
	t.Helper()
	r, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestParseBlobID(t *testing.T) {
	id := trace.BlobOf([]byte("x"))
	got, err := trace.ParseBlobID(id.String())
	if err != nil || got != id {
		t.Errorf("ParseBlobID(%s) = %v, %v", id, got, err)
	}
	for _, bad := range []string{"", "abc", id.String()[:63] + "g"} {
		if _, err := trace.ParseBlobID(bad); err == nil {
			t.Errorf("ParseBlobID(%q) succeeded", bad)
		}
	}
}
