package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Reader reads a trace. It never panics on damaged input: damage surfaces
// as a *TruncatedError, *ChecksumError, *CorruptError or *MissingBlobError,
// and every event before the damage stays readable. A Reader is not safe
// for concurrent use.
type Reader struct {
	dir   string
	hdr   *Header
	f     io.ReaderAt // the events file
	close func() error
	size  int64      // size of the events file
	table blockTable // from the index or from walking the block headers
	stats *Stats     // from the index; nil when there is none
	count uint64     // events the trace claims
	end   error      // what follows event count: nil, *TruncatedError, ...
	// noIndex is why the index was not used although the events are
	// complete (IndexError); nil if it was used or the trace is damaged.
	noIndex error
	hbuf    [blockHeaderSize]byte
	zbuf    []byte // stored payload of the current block
	ubuf    []byte // uncompressed payload of the current block

	// Cursor. The current block, if loaded, holds events blk.first to
	// blk.first+blk.count-1; pos is the next event Next returns.
	loaded bool
	blkNo  uint64
	blkOff int64
	blk    blockHeader
	dec    decoder
	pos    uint64
	err    error // sticky damage found while reading
	evSize int   // encoded size of the event Next returned last
}

// Open opens the trace in directory dir. It reads the header and the index,
// and checks the index's block table against the block headers of the
// events file. The index only speeds reading up: without a usable one
// (missing, damaged, or not matching the events), Open walks the block
// headers (cheap: it decompresses nothing) to find the events, and the
// events file alone says whether the trace is complete (see IndexError).
// Damage found here does not fail Open: it is reported by Truncation and by
// Next once the intact events are read.
//
// Open fails with ErrNotTrace, a *VersionError, a *ChecksumError or
// *CorruptError for the header file, or an I/O error.
func Open(dir string) (*Reader, error) {
	hb, err := readLimited(filepath.Join(dir, headerFile))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, ErrNotTrace
	}
	if err != nil {
		return nil, err
	}
	hdr, err := parseHeader(hb)
	if err != nil {
		return nil, err
	}
	r := &Reader{dir: dir, hdr: hdr, f: bytes.NewReader(nil), close: func() error { return nil }}
	f, err := os.Open(filepath.Join(dir, eventsFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// The recorder died right after writing the header: no events.
	case err != nil:
		return nil, err
	default:
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		r.f, r.close, r.size = f, f.Close, fi.Size()
	}
	if err := r.loadIndex(); err != nil {
		r.walkHeaders(err)
	}
	return r, nil
}

// readLimited reads a small file, refusing one larger than maxEnvelope.
func readLimited(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEnvelope+1))
	if err == nil && len(b) > maxEnvelope {
		err = &CorruptError{Part: filepath.Base(name), Msg: "file too large"}
	}
	return b, err
}

// loadIndex uses the index file if it exists, is intact and matches the
// events file.
func (r *Reader) loadIndex() error {
	b, err := readLimited(filepath.Join(r.dir, indexFile))
	if err != nil {
		return err
	}
	stats, table, size, err := parseIndex(b)
	if err != nil {
		return err
	}
	if size != r.size {
		return errIndexSize
	}
	if err := r.checkTable(stats, table); err != nil {
		return err
	}
	r.stats, r.table, r.count = stats, *table, stats.Events
	return nil
}

// checkTable checks an index's block table against the events file: every
// block it lists must start where it says, with the event it says, and the
// blocks from the last one listed must end the file after the index's
// count of blocks and events. It reads one block header per table entry
// and at most stride-1 more.
func (r *Reader) checkTable(s *Stats, t *blockTable) error {
	if len(t.refs) == 0 {
		if r.size != 0 {
			return errIndexTable
		}
		return nil
	}
	for i, ref := range t.refs {
		if _, err := r.readHeader(ref.Off, uint64(i)*t.stride, ref.First); err != nil {
			return errIndexTable
		}
	}
	b := uint64(len(t.refs)-1) * t.stride
	last := t.refs[len(t.refs)-1]
	off, first := last.Off, last.First
	for {
		h, err := r.readHeader(off, b, first)
		if err == io.EOF {
			break
		}
		if err != nil || b-uint64(len(t.refs)-1)*t.stride >= t.stride {
			return errIndexTable
		}
		off += h.size()
		first += uint64(h.count)
		b++
	}
	if b != s.Blocks || first != s.Events {
		return errIndexTable
	}
	return nil
}

// walkHeaders finds the blocks by reading each block header in turn. Called
// when the index is unusable, for the reason why. Damage to a block header
// ends the events there. If every block is intact and the events end as a
// finished recording does (complete), the trace is complete and why is
// only a warning (IndexError); otherwise the trace was never closed (the
// recorder died, or is still running), or the events file lost its end.
func (r *Reader) walkHeaders(why error) {
	r.stats, r.table, r.count, r.end, r.noIndex = nil, blockTable{}, 0, nil, nil
	var off int64
	var b uint64
	for {
		h, err := r.readHeader(off, b, r.count)
		if err == io.EOF {
			break
		}
		if err != nil {
			r.end = err
			return
		}
		r.table.add(b, blockRef{Off: off, First: r.count})
		r.count += uint64(h.count)
		off += h.size()
		b++
	}
	if r.complete() {
		r.noIndex = indexProblem(why)
		return
	}
	switch {
	case errors.Is(why, fs.ErrNotExist) || why == errIndexSize || why == errIndexTable:
		r.end = &TruncatedError{Event: r.count, Block: b, Off: off, Size: r.size}
	case errors.Is(why, ErrChecksum) || errors.Is(why, ErrCorrupt):
		r.end = why
	default:
		r.end = &CorruptError{Part: "index", Msg: why.Error()}
	}
}

// indexProblem turns why the index was not used into the error IndexError
// returns.
func indexProblem(why error) error {
	switch {
	case errors.Is(why, fs.ErrNotExist):
		return ErrNoIndex
	case errors.Is(why, ErrChecksum) || errors.Is(why, ErrCorrupt):
		return why
	}
	return &CorruptError{Part: "index", Msg: why.Error()}
}

// complete reports whether the events Open found end as every finished
// recording does: with the exit of the root process (a KindExit with Group
// set, for the first process of the trace or, as older recordings wrote
// it, for tid 0), which hermit record writes last, just before the index.
// It decodes the first and the last block, and leaves no block loaded.
func (r *Reader) complete() bool {
	if r.count == 0 {
		return false
	}
	defer func() { r.loaded, r.pos, r.err = false, 0, nil }()
	var ev Event
	pt := NewProcessTable(r.hdr)
	if r.Seek(0) != nil {
		return false
	}
	for len(pt.procs) == 0 && r.pos < r.blk.first+uint64(r.blk.count) {
		n := r.pos
		if r.Next(&ev) != nil {
			return false
		}
		pt.Add(n, &ev)
	}
	var root int32
	if len(pt.procs) > 0 {
		root = pt.procs[0].Vpid
	}
	if r.Seek(r.count-1) != nil || r.Next(&ev) != nil {
		return false
	}
	return ev.Kind == KindExit && ev.Group && (ev.Tid == 0 || ev.Tid == root)
}

var (
	errIndexSize  = errors.New("index and events file disagree in size")
	errIndexTable = errors.New("index block table does not match the events file")
)

// readHeader reads the header of block b at off, whose first event must be
// first. It returns io.EOF when off is the end of the file.
func (r *Reader) readHeader(off int64, b, first uint64) (blockHeader, error) {
	if off == r.size {
		return blockHeader{}, io.EOF
	}
	if r.size-off < blockHeaderSize {
		return blockHeader{}, r.truncated(off, b, first)
	}
	if _, err := r.f.ReadAt(r.hbuf[:], off); err != nil {
		return blockHeader{}, r.ioError(err, off, first, b)
	}
	h, err := parseBlockHeader(r.hbuf[:])
	switch {
	case err == errBlockCRC:
		return h, &ChecksumError{Part: partEvents, Block: b, Event: first, Off: off}
	case err != nil:
		return h, &CorruptError{Part: partEvents, Block: b, Event: first, Off: off, Msg: err.Error()}
	case h.first != first:
		return h, &CorruptError{Part: partEvents, Block: b, Event: first, Off: off,
			Msg: fmt.Sprintf("block starts at event %d", h.first)}
	case h.size() > r.size-off:
		return h, r.truncated(off, b, first)
	}
	return h, nil
}

// truncated reports the events file ending in or before block b at off.
func (r *Reader) truncated(off int64, b, first uint64) *TruncatedError {
	return &TruncatedError{Event: first, Block: b, Off: off, Size: r.size}
}

// ioError turns an error reading the events file into a truncation if the
// file shrank under us.
func (r *Reader) ioError(err error, off int64, first, b uint64) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.truncated(off, b, first)
	}
	return fmt.Errorf("read events: %w", err)
}

// Close releases the events file.
func (r *Reader) Close() error { return r.close() }

// Dir returns the trace directory.
func (r *Reader) Dir() string { return r.dir }

// Header returns the trace header.
func (r *Reader) Header() *Header { return r.hdr }

// Count returns the number of events the trace holds, or for a damaged trace
// the number before the damage Open found (reading may find more damage).
func (r *Reader) Count() uint64 { return r.count }

// Truncation returns nil if the trace is complete: it was closed and its
// index matches its events, or without a usable index its events end as a
// finished recording does (see IndexError). Otherwise it returns the error
// Next will return after event Count()-1: a *TruncatedError when the
// recorder did not finish or the file was cut, or a *ChecksumError or
// *CorruptError for a damaged block header or index.
func (r *Reader) Truncation() error { return r.end }

// IndexError returns why the index was not used for a trace whose events
// file is complete without it: ErrNoIndex if there is none, or a
// *ChecksumError or *CorruptError (Part "index") if it is damaged or does
// not match the events (found by Open, or by Scan comparing its
// statistics). That is a warning: every event is readable. IndexError is
// nil when the index was used, or when the trace is damaged or truncated
// (then Truncation or the reading says so).
func (r *Reader) IndexError() error { return r.noIndex }

// IndexStats returns the statistics stored in the index, and false if the
// trace has no usable index (then Scan computes them).
func (r *Reader) IndexStats() (Stats, bool) {
	if r.stats == nil {
		return Stats{}, false
	}
	return *r.stats, true
}

// Pos returns the number of the event the next call to Next returns.
func (r *Reader) Pos() uint64 { return r.pos }

// Seek positions the reader so that Next returns event n. Seeking to
// Count() is allowed and makes Next report the end.
func (r *Reader) Seek(n uint64) error {
	if n > r.count {
		return fmt.Errorf("seek to event %d: trace has %d events", n, r.count)
	}
	r.err = nil
	if r.loaded && n >= r.blk.first && n < r.blk.first+uint64(r.blk.count) && n >= r.pos {
		return r.skip(n - r.pos)
	}
	r.loaded = false
	r.pos = n
	if n == r.count {
		return nil
	}
	b, ref := r.table.find(n)
	off, first := ref.Off, ref.First
	for {
		h, err := r.readHeader(off, b, first)
		if err == io.EOF {
			err = r.truncated(off, b, first)
		}
		if err != nil {
			r.err = err
			return err
		}
		if n < first+uint64(h.count) {
			break
		}
		off += h.size()
		first += uint64(h.count)
		b++
	}
	if err := r.load(off, b, first); err != nil {
		return err
	}
	return r.skip(n - first)
}

// skip decodes and drops n events of the current block.
func (r *Reader) skip(n uint64) error {
	var ev Event
	for ; n > 0; n-- {
		if err := r.Next(&ev); err != nil {
			return err
		}
	}
	return nil
}

// load reads block b at off and prepares to decode it from its first event.
func (r *Reader) load(off int64, b, first uint64) error {
	h, err := r.readHeader(off, b, first)
	if err == io.EOF {
		err = r.truncated(off, b, first)
	}
	if err != nil {
		r.err = err
		return err
	}
	if cap(r.zbuf) < int(h.clen) {
		r.zbuf = make([]byte, h.clen)
	}
	stored := r.zbuf[:h.clen]
	if _, err := r.f.ReadAt(stored, off+blockHeaderSize); err != nil {
		r.err = r.ioError(err, off, first, b)
		return r.err
	}
	payload, err := openPayload(&h, stored, r.ubuf)
	if h.clen != h.ulen {
		r.ubuf = payload
	}
	if errors.Is(err, ErrChecksum) {
		r.err = &ChecksumError{Part: partEvents, Block: b, Event: first, Off: off}
		return r.err
	}
	if err != nil {
		r.err = &CorruptError{Part: partEvents, Block: b, Event: first, Off: off, Msg: err.Error()}
		return r.err
	}
	r.loaded, r.blkNo, r.blkOff, r.blk, r.pos = true, b, off, h, first
	r.dec.reset(payload)
	return nil
}

// Next decodes the next event into ev, reusing ev's storage; the event's
// byte slices alias the reader's buffers until the next call. At the end of
// an intact trace Next returns io.EOF. At the end of the readable events of
// a damaged one it returns the damage: a *TruncatedError, *ChecksumError or
// *CorruptError, again on every later call.
func (r *Reader) Next(ev *Event) error {
	if r.err != nil {
		return r.err
	}
	if r.pos >= r.count {
		if r.end != nil {
			return r.end
		}
		return io.EOF
	}
	if !r.loaded {
		if err := r.loadFor(r.pos); err != nil {
			return err
		}
	} else if r.pos == r.blk.first+uint64(r.blk.count) {
		if err := r.load(r.blkOff+r.blk.size(), r.blkNo+1, r.pos); err != nil {
			return err
		}
	}
	start := r.dec.r.off
	if err := r.dec.next(ev); err != nil {
		return r.corrupt(fmt.Sprintf("event %d: %v", r.pos, err))
	}
	r.evSize = r.dec.r.off - start
	r.pos++
	if end := r.blk.first + uint64(r.blk.count); (r.pos == end) != r.dec.done() {
		return r.corrupt(fmt.Sprintf("block holds a different number of events than its header's %d", r.blk.count))
	}
	return nil
}

func (r *Reader) corrupt(msg string) error {
	r.err = &CorruptError{Part: partEvents, Block: r.blkNo, Event: r.blk.first, Off: r.blkOff, Msg: msg}
	return r.err
}

// loadFor positions the reader, which has no block loaded, at event n.
func (r *Reader) loadFor(n uint64) error { return r.Seek(n) }

// Events returns an iterator over the events from the current position to
// the end. It yields each event's number and the event, which aliases the
// reader's buffers until the next iteration. After the loop, Err reports why
// it stopped early, or nil at the end of an intact trace.
func (r *Reader) Events() iter.Seq2[uint64, *Event] {
	return func(yield func(uint64, *Event) bool) {
		var ev Event
		for {
			n := r.pos
			if err := r.Next(&ev); err != nil {
				return
			}
			if !yield(n, &ev) {
				return
			}
		}
	}
}

// Err returns the error that ended iteration: nil at the end of an intact
// trace, otherwise the damage.
func (r *Reader) Err() error {
	if r.err != nil {
		return r.err
	}
	if r.pos >= r.count {
		return r.end
	}
	return nil
}

// OpenBlob opens a stored blob. Reading it fails with a *ChecksumError if
// its content does not match id; a blob that is not stored gives a
// *MissingBlobError.
func (r *Reader) OpenBlob(id BlobID) (io.ReadCloser, error) {
	return openBlob(r.dir, id)
}

// Blob returns the content of a stored blob.
func (r *Reader) Blob(id BlobID) ([]byte, error) {
	rc, err := openBlob(r.dir, id)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// StoredBlobs returns the number of blobs stored in the trace and the bytes
// they take on disk.
func (r *Reader) StoredBlobs() (n int, size int64) {
	var count func(dir string, depth int)
	count = func(dir string, depth int) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			switch {
			case e.IsDir() && depth == 0:
				count(filepath.Join(dir, e.Name()), 1) // fannedBlobPath
			case e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".tmp-"):
				if fi, err := e.Info(); err == nil {
					n++
					size += fi.Size()
				}
			}
		}
	}
	count(filepath.Join(r.dir, blobDir), 0)
	return n, size
}

// Scan reads every event from the start, checking each block, and every
// blob the events refer to. It returns statistics of the intact events and
// nil, or the first damage found. It moves the read position to the end.
func (r *Reader) Scan() (Stats, error) { return r.ScanWith(nil) }

// ScanWith is Scan that also shows each intact event and its number to
// visit (if not nil), which must not keep it.
func (r *Reader) ScanWith(visit func(n uint64, ev *Event)) (Stats, error) {
	var s Stats
	if err := r.Seek(0); err != nil {
		return s, err
	}
	blobs := make(map[BlobID]bool)
	var ev Event
	blocks := uint64(0)
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			s.Blocks = blocks
			return s, err
		}
		s.countEvent(&ev, r.evSize)
		if visit != nil {
			visit(r.pos-1, &ev)
		}
		if r.pos == r.blk.first+1 {
			blocks++
			s.FileBytes += uint64(r.blk.size())
		}
		collectBlobs(&ev, blobs)
	}
	s.Blocks = blocks
	if r.stats != nil && !sameCounts(r.stats, &s) {
		// The events are the truth: the index is not to be trusted, but
		// nothing is lost.
		r.stats = nil
		r.noIndex = &CorruptError{Part: "index", Msg: "statistics do not match the events"}
	}
	ids := make([]BlobID, 0, len(blobs))
	for id := range blobs {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b BlobID) int { return slices.Compare(a[:], b[:]) })
	for _, id := range ids {
		if err := verifyBlob(r.dir, id); err != nil {
			return s, err
		}
	}
	return s, nil
}

func collectBlobs(ev *Event, blobs map[BlobID]bool) {
	for i := range ev.Mem {
		if !ev.Mem[i].Blob.IsZero() {
			blobs[ev.Mem[i].Blob] = true
		}
	}
	if ev.Exec != nil {
		for i := range ev.Exec.Files {
			if !ev.Exec.Files[i].Blob.IsZero() {
				blobs[ev.Exec.Files[i].Blob] = true
			}
		}
	}
	if ev.Map != nil && !ev.Map.Blob.IsZero() {
		blobs[ev.Map.Blob] = true
	}
	if ev.File != nil && !ev.File.Blob.IsZero() {
		blobs[ev.File.Blob] = true
	}
}

func sameCounts(a, b *Stats) bool {
	if a.Events != b.Events || a.Blocks != b.Blocks || a.RawBytes != b.RawBytes ||
		a.Kinds != b.Kinds || len(a.Threads) != len(b.Threads) {
		return false
	}
	for t, n := range a.Threads {
		if b.Threads[t] != n {
			return false
		}
	}
	return true
}
