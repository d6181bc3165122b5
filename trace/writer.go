package trace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// File names inside a trace directory.
const (
	headerFile = "header"
	eventsFile = "events"
	indexFile  = "index"
)

// Options tune a Writer. The zero value of each field selects its default.
type Options struct {
	// BlockEvents ends a block after this many events (default 32768). It
	// bounds the events a seek decodes.
	BlockEvents int
	// BlockBytes ends a block once its encoded events reach this many bytes
	// (default 128 KiB, at most 16 MiB).
	BlockBytes int
	// FlushInterval bounds how long an event waits in memory: a block is
	// written, and the events file synced, at most this long after its first
	// event was appended (default 1s). Negative disables timed flushes.
	FlushInterval time.Duration
	// NoSync skips the fsyncs when the trace is created and closed (the
	// timed flushes still sync): the trace then survives the death of the
	// recorder, but the last second of it may not survive the machine's.
	// Each fsync costs about half a millisecond on a VM's disk.
	NoSync bool
}

func (o *Options) fill() {
	if o.BlockEvents <= 0 {
		o.BlockEvents = 32 << 10
	}
	o.BlockEvents = min(o.BlockEvents, 1<<30)
	if o.BlockBytes <= 0 {
		o.BlockBytes = 128 << 10
	}
	o.BlockBytes = min(o.BlockBytes, 16<<20)
	if o.FlushInterval == 0 {
		o.FlushInterval = time.Second
	}
}

// Writer streams events into a new trace. It holds at most one block of
// events in memory. Append, Flush, Sync and Close must be called from one
// goroutine at a time; PutBlob may be called from any goroutine.
//
// Lock order: mu, then nothing. The timed flush runs on a timer goroutine
// and takes mu.
type Writer struct {
	dir     string
	opts    Options
	syncing sync.WaitGroup // timed-flush syncs in progress

	mu sync.Mutex
	// The fields below are protected by mu.
	f      *os.File // the events file
	enc    encoder  // the open block's payload
	blk    Stats    // the open block's events
	total  Stats    // events in written blocks
	table  blockTable
	off    int64  // size of the events file
	sealed []byte // scratch for a sealed block
	comp   compressor
	timer  *time.Timer
	err    error // first write error; the writer is then unusable
	// exports counts blobs being linked in from a BlobCache.
	exports sync.WaitGroup
	closed  bool
}

// Create starts a trace in directory dir, which must not exist or be empty,
// with default Options. It writes hdr (filling in Version) and returns a
// Writer for the events.
func Create(dir string, hdr Header) (*Writer, error) {
	return CreateOptions(dir, hdr, Options{})
}

// CreateOptions is Create with explicit Options.
func CreateOptions(dir string, hdr Header, opts Options) (*Writer, error) {
	opts.fill()
	if err := makeTraceDir(dir); err != nil {
		return nil, fmt.Errorf("create trace: %w", err)
	}
	hdr.Version = FormatVersion
	b, err := marshalHeader(&hdr)
	if err != nil {
		return nil, fmt.Errorf("create trace: %w", err)
	}
	if err := writeFile(filepath.Join(dir, headerFile), b, !opts.NoSync); err != nil {
		return nil, fmt.Errorf("create trace: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, blobDir), 0o700); err != nil {
		return nil, fmt.Errorf("create trace: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, eventsFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create trace: %w", err)
	}
	if !opts.NoSync {
		if err := syncDir(dir); err != nil {
			f.Close()
			return nil, fmt.Errorf("create trace: %w", err)
		}
	}
	w := &Writer{dir: dir, opts: opts, f: f}
	w.enc.reset()
	if opts.FlushInterval > 0 {
		w.timer = time.AfterFunc(time.Hour, w.timedFlush)
		w.timer.Stop()
	}
	return w, nil
}

// makeTraceDir creates dir with mode 0700, or accepts it if it is an empty
// directory.
func makeTraceDir(dir string) error {
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrNotExist) {
		// hermit record -o a/new/dir: its parents are made, private.
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return err
		}
		err = os.Mkdir(dir, 0o700)
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := d.Readdirnames(1); err != io.EOF {
		if err == nil {
			return fmt.Errorf("%s: directory not empty", dir)
		}
		return err
	}
	return os.Chmod(dir, 0o700)
}

// writeFile writes a new file with mode 0600, and syncs it if sync.
func writeFile(name string, b []byte, sync bool) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Dir returns the trace directory.
func (w *Writer) Dir() string { return w.dir }

// Append adds ev to the trace. ev is not retained. An invalid event is
// refused without harm; after a write error every call returns that error.
func (w *Writer) Append(ev *Event) error {
	if err := checkEvent(ev); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	n := len(w.enc.buf)
	w.enc.append(ev)
	w.blk.countEvent(ev, len(w.enc.buf)-n)
	if w.blk.Events == 1 && w.timer != nil {
		w.timer.Reset(w.opts.FlushInterval)
	}
	if w.blk.Events >= uint64(w.opts.BlockEvents) || len(w.enc.buf) >= w.opts.BlockBytes {
		return w.flushLocked()
	}
	return nil
}

// PutBlob stores the content of r in the trace, once, and returns its id.
func (w *Writer) PutBlob(r io.Reader) (BlobID, error) {
	return putBlob(w.dir, r)
}

// Count returns the number of events appended.
func (w *Writer) Count() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total.Events + w.blk.Events
}

// Flush writes the open block to the events file. Once Flush returns, the
// events appended so far survive the death of the process.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	return w.flushLocked()
}

// Sync flushes and then commits the events file to stable storage, so the
// events survive power loss.
func (w *Writer) Sync() error {
	if err := w.Flush(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync trace: %w", err)
	}
	return nil
}

// flushLocked writes the open block, if it holds events.
//
// Preconditions: w.mu held, w.err nil.
func (w *Writer) flushLocked() error {
	if w.blk.Events == 0 {
		return nil
	}
	first := w.total.Events
	sealed, err := sealBlock(&w.comp, w.sealed, w.enc.buf, first, uint32(w.blk.Events))
	w.sealed = sealed
	if err != nil {
		w.err = fmt.Errorf("compress block: %w", err)
		return w.err
	}
	if _, err := w.f.Write(sealed); err != nil {
		w.err = fmt.Errorf("write trace: %w", err)
		return w.err
	}
	w.table.add(w.total.Blocks, blockRef{Off: w.off, First: first})
	w.off += int64(len(sealed))
	w.blk.Blocks = 1
	w.blk.FileBytes = uint64(len(sealed))
	w.total.add(&w.blk)
	clear(w.blk.Threads)
	threads := w.blk.Threads
	w.blk = Stats{Threads: threads}
	w.enc.reset()
	if cap(w.enc.buf) > 4*w.opts.BlockBytes {
		w.enc.buf = nil // one huge event passed; do not keep its buffer
	}
	if cap(w.sealed) > 8*w.opts.BlockBytes {
		w.sealed = nil
	}
	return nil
}

// timedFlush runs on the timer goroutine.
func (w *Writer) timedFlush() {
	w.mu.Lock()
	if w.closed || w.err != nil || w.blk.Events == 0 {
		w.mu.Unlock()
		return
	}
	err := w.flushLocked()
	if err == nil {
		w.syncing.Add(1)
	}
	w.mu.Unlock()
	if err != nil {
		return
	}
	defer w.syncing.Done()
	if err := w.f.Sync(); err != nil {
		w.mu.Lock()
		if w.err == nil && !w.closed {
			w.err = fmt.Errorf("sync trace: %w", err)
		}
		w.mu.Unlock()
	}
}

// Close flushes the last block, syncs the events and writes the index. The
// trace is complete only once Close returns nil; a trace that was never
// closed reads as truncated.
func (w *Writer) Close() error {
	w.exports.Wait()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if w.err == nil {
		w.flushLocked()
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	err := w.err
	w.mu.Unlock()
	w.syncing.Wait()

	if err == nil && !w.opts.NoSync {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.writeIndex()
	}
	if err != nil {
		return fmt.Errorf("close trace: %w", err)
	}
	return nil
}

func (w *Writer) writeIndex() error {
	b, err := marshalIndex(&w.total, &w.table, w.off)
	if err != nil {
		return err
	}
	tmp := filepath.Join(w.dir, indexFile+".tmp")
	os.Remove(tmp)
	if err := writeFile(tmp, b, !w.opts.NoSync); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(w.dir, indexFile)); err != nil {
		return err
	}
	if w.opts.NoSync {
		return nil
	}
	return syncDir(w.dir)
}

// setErr records a failure that makes the trace incomplete.
func (w *Writer) setErr(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}
