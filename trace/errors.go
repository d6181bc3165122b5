package trace

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error the Reader returns for a damaged or foreign
// trace matches one of them with errors.Is; the struct errors below carry the
// details.
var (
	// ErrNotTrace means the path holds no trace header.
	ErrNotTrace = errors.New("not a trace")
	// ErrUnsupportedVersion means the trace was written in a format version
	// this build cannot read. The error is a *VersionError.
	ErrUnsupportedVersion = errors.New("unsupported trace version")
	// ErrTruncated means the trace ends early. The error is a *TruncatedError.
	ErrTruncated = errors.New("trace truncated")
	// ErrChecksum means stored data does not match its checksum. The error
	// is a *ChecksumError.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrCorrupt means data passed its checksum but does not make sense, or
	// a file is too short to hold what it declares. The error is a
	// *CorruptError.
	ErrCorrupt = errors.New("corrupt trace")
	// ErrMissingBlob means a blob the trace refers to is not stored. The
	// error is a *MissingBlobError.
	ErrMissingBlob = errors.New("missing blob")
	// ErrClosed is returned by a Writer after Close.
	ErrClosed = errors.New("trace writer closed")
	// ErrNoIndex is what Reader.IndexError returns for a complete trace
	// whose index file is missing.
	ErrNoIndex = errors.New("index missing")
)

// VersionError reports a trace written in a format version this build does
// not read.
type VersionError struct {
	Version uint16 // version found in the file
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("unsupported trace version %d (this hermit reads version %d)", e.Version, FormatVersion)
}

// Is matches ErrUnsupportedVersion.
func (e *VersionError) Is(target error) bool { return target == ErrUnsupportedVersion }

// TruncatedError reports a trace whose event stream ends early, usually
// because the recorder was killed. Events 0 to Event-1 are readable.
type TruncatedError struct {
	Event uint64 // number of intact events, which is the first missing event
	Block uint64 // first missing or partial block
	// Off is where block Block starts in the events file, and Size the
	// file's size: Size > Off means the file is cut inside the block.
	Off, Size int64
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("truncated at event %d (block %d)", e.Event, e.Block)
}

// Is matches ErrTruncated.
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// ChecksumError reports stored bytes that do not match their checksum. For
// the event stream, Part is "events" and Block and Event name the damaged
// block and its first event; events before Event are intact.
type ChecksumError struct {
	Part  string // "events", "header", "index" or "blob <id>"
	Block uint64
	Event uint64
	Off   int64  // for Part "events": where the block starts in the file
	File  string // for a blob: its file in the trace directory
}

func (e *ChecksumError) Error() string {
	if e.Part == partEvents {
		return fmt.Sprintf("checksum mismatch at block %d (event %d)", e.Block, e.Event)
	}
	return "checksum mismatch in " + e.Part
}

// Is matches ErrChecksum.
func (e *ChecksumError) Is(target error) bool { return target == ErrChecksum }

// CorruptError reports data that passed its checksum (or has none) but cannot
// be decoded.
type CorruptError struct {
	Part  string // "events", "header", "index" or "blob <id>"
	Block uint64 // for Part "events"
	Event uint64 // for Part "events": the first event of the block
	Off   int64  // for Part "events": where the block starts in the file
	Msg   string
}

func (e *CorruptError) Error() string {
	if e.Part == partEvents {
		return fmt.Sprintf("corrupt block %d (event %d): %s", e.Block, e.Event, e.Msg)
	}
	return fmt.Sprintf("corrupt %s: %s", e.Part, e.Msg)
}

// Is matches ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// MissingBlobError reports a blob that the trace refers to but does not hold.
type MissingBlobError struct {
	ID   BlobID
	File string // where the trace directory would hold it ("" for blobs/ID)
}

func (e *MissingBlobError) Error() string { return "missing blob " + e.ID.String() }

// Is matches ErrMissingBlob.
func (e *MissingBlobError) Is(target error) bool { return target == ErrMissingBlob }

const partEvents = "events"

// DamagedFile returns the file of a trace directory that err, an error from Open
// or a Reader, is about: "events", "header", "index" or a blob's path
// ("blobs/abcdef…", or "blobs/ab/cdef…" in a trace made before
// 2026-12-08). It returns "" if err names no file of the trace.
func DamagedFile(err error) string {
	var (
		te *TruncatedError
		ce *ChecksumError
		co *CorruptError
		mb *MissingBlobError
	)
	part := ""
	switch {
	case errors.As(err, &te):
		return eventsFile
	case errors.As(err, &ce):
		if ce.File != "" {
			return ce.File
		}
		part = ce.Part
	case errors.As(err, &co):
		part = co.Part
	case errors.As(err, &mb):
		if mb.File != "" {
			return mb.File
		}
		return blobPath("", mb.ID)
	case errors.Is(err, ErrNoIndex):
		return indexFile
	}
	if id, ok := strings.CutPrefix(part, "blob "); ok {
		if b, err := ParseBlobID(id); err == nil {
			return blobPath("", b)
		}
	}
	switch part {
	case partEvents, headerFile, indexFile:
		return part
	}
	return ""
}

// Explain returns err's message and, for damage to the events file, where
// in the file it is: "truncated at event 0 (block 0): the events file is
// cut at byte 731, inside block 0, which starts at byte 0".
func Explain(err error) string {
	var (
		te *TruncatedError
		ce *ChecksumError
		co *CorruptError
	)
	switch {
	case errors.As(err, &te):
		switch {
		case te.Size > te.Off:
			return fmt.Sprintf("%v: the events file is cut at byte %d, inside block %d, which starts at byte %d",
				err, te.Size, te.Block, te.Off)
		case te.Block == 0:
			return fmt.Sprintf("%v: the events file is empty", err)
		}
		return fmt.Sprintf("%v: the events file ends at byte %d, after block %d", err, te.Off, te.Block-1)
	case errors.As(err, &ce) && ce.Part == partEvents:
		return fmt.Sprintf("%v, at byte %d of the events file", err, ce.Off)
	case errors.As(err, &co) && co.Part == partEvents:
		return fmt.Sprintf("corrupt block %d (event %d), at byte %d of the events file: %s", co.Block, co.Event, co.Off, co.Msg)
	}
	return err.Error()
}
