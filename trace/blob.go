package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pierrec/lz4/v4"
)

// Blobs are stored once each under blobs/ab/cdef..., named by the SHA-256
// of their content ("ab" is the first byte in hex, the rest of the name the
// other 31). Each file is an lz4 frame with block and content checksums. A
// blob is written to a temporary file in blobs/ and renamed into place, so a
// name that exists always holds a complete blob.

// BlobID names a blob by the SHA-256 of its content. The zero BlobID names
// no blob.
type BlobID [32]byte

// IsZero reports whether id names no blob.
func (id BlobID) IsZero() bool { return id == BlobID{} }

// String returns the id in hex.
func (id BlobID) String() string { return hex.EncodeToString(id[:]) }

// Short returns the first 12 hex digits, for display.
func (id BlobID) Short() string { return hex.EncodeToString(id[:6]) }

// MarshalText returns the hex form, so ids read well in JSON.
func (id BlobID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText parses the hex form.
func (id *BlobID) UnmarshalText(b []byte) error {
	v, err := ParseBlobID(string(b))
	*id = v
	return err
}

// ParseBlobID parses the hex form returned by String.
func ParseBlobID(s string) (BlobID, error) {
	var id BlobID
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("parse blob id %q: want %d hex digits", s, 2*len(id))
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("parse blob id %q: %w", s, err)
	}
	return id, nil
}

// BlobOf returns the id of content b.
func BlobOf(b []byte) BlobID { return sha256.Sum256(b) }

const blobDir = "blobs"

// blobPath is where the trace in dir holds blob id: blobs/ID.
func blobPath(dir string, id BlobID) string {
	return filepath.Join(dir, blobDir, id.String())
}

// fannedBlobPath is where a trace made before 2026-12-08 holds blob id:
// blobs/ab/cdef…, in a directory per first two hex digits. Making those
// directories cost as much as the rest of a short recording where the
// filesystem is slow to make inodes (0.25 ms each on this project's
// machines; python3 -c 'import json' stores 113 blobs in 91 of them).
func fannedBlobPath(dir string, id BlobID) string {
	s := id.String()
	return filepath.Join(dir, blobDir, s[:2], s[2:])
}

// fanned reports whether the trace in dir holds its blobs in directories
// (fannedBlobPath).
func fanned(dir string) bool {
	ents, _ := os.ReadDir(filepath.Join(dir, blobDir))
	for _, e := range ents {
		if e.IsDir() && len(e.Name()) == 2 {
			return true
		}
	}
	return false
}

// putBlob stores the content of r in the trace directory dir, once.
func putBlob(dir string, r io.Reader) (id BlobID, err error) {
	tmp, err := os.CreateTemp(filepath.Join(dir, blobDir), ".tmp-*")
	if err != nil {
		return id, fmt.Errorf("put blob: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	zw := lz4.NewWriter(tmp)
	if err := zw.Apply(lz4.BlockSizeOption(lz4.Block256Kb), lz4.ChecksumOption(true), lz4.BlockChecksumOption(true)); err != nil {
		return id, fmt.Errorf("put blob: %w", err)
	}
	if _, err := io.Copy(io.MultiWriter(zw, h), r); err != nil {
		return id, fmt.Errorf("put blob: %w", err)
	}
	if err := zw.Close(); err != nil {
		return id, fmt.Errorf("put blob: %w", err)
	}
	copy(id[:], h.Sum(nil))
	final := blobPath(dir, id)
	if _, err := os.Stat(final); err == nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return id, nil
	}
	// No fsync per blob: a blob is written before any event names it,
	// and Writer.Close syncs the whole trace.
	if err := tmp.Close(); err != nil {
		return id, fmt.Errorf("put blob: %w", err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return id, fmt.Errorf("put blob: %w", err)
	}
	return id, nil
}

// openBlob opens blob id of the trace in dir. The returned reader fails with
// a *ChecksumError if the content does not match id.
func openBlob(dir string, id BlobID) (io.ReadCloser, error) {
	file := blobPath("", id)
	f, err := os.Open(filepath.Join(dir, file))
	if errors.Is(err, fs.ErrNotExist) {
		old := fannedBlobPath("", id)
		if g, gerr := os.Open(filepath.Join(dir, old)); !errors.Is(gerr, fs.ErrNotExist) {
			f, err, file = g, gerr, old
		} else if fanned(dir) {
			file = old // missing from a trace that fans them out
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &MissingBlobError{ID: id, File: file}
	}
	if err != nil {
		return nil, fmt.Errorf("open blob: %w", err)
	}
	return &blobReader{f: f, zr: lz4.NewReader(f), h: sha256.New(), id: id, file: file}, nil
}

type blobReader struct {
	f    *os.File
	zr   *lz4.Reader
	h    hash.Hash
	id   BlobID
	file string // in the trace directory
	err  error
}

func (b *blobReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.zr.Read(p)
	b.h.Write(p[:n])
	switch {
	case err == io.EOF:
		if !bytes.Equal(b.h.Sum(nil), b.id[:]) {
			err = b.damaged()
		}
	case err != nil && !errors.Is(err, fs.ErrClosed):
		// The lz4 reader reports damaged frames with its own errors;
		// read errors from the file come through as *fs.PathError.
		var pe *fs.PathError
		if !errors.As(err, &pe) {
			err = b.damaged()
		}
	}
	b.err = err
	return n, err
}

func (b *blobReader) damaged() error {
	return &ChecksumError{Part: "blob " + b.id.String(), File: b.file}
}

func (b *blobReader) Close() error { return b.f.Close() }

// verifyBlob reads blob id to the end, checking its content.
func verifyBlob(dir string, id BlobID) error {
	rc, err := openBlob(dir, id)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err
}

// syncDir makes a directory's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
