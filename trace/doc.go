// Package trace stores hermit recordings: a versioned header, a stream of
// events, content-addressed blobs and an index, in one directory. It is pure
// Go with no ptrace or CLI concerns, and never panics on damaged input.
//
// # Layout
//
// A trace is a directory (mode 0700, files 0600):
//
//	header          magic "HERMITTR", format version, msgpack Header, CRC-32C
//	events          blocks of events, appended while recording
//	index           written by Close: counts and a block table, CRC-32C
//	blobs/abcdef…   one lz4 frame per blob, named by the SHA-256 of its
//	                content (blobs/ab/cdef… in traces made before 2026-12-08,
//	                which are read as well)
//
// A directory rather than one file, because the events file can then be a
// pure append-only sequence of blocks (what crash safety needs), blobs can be
// written concurrently with events and checked or removed one by one, and
// the index can be replaced atomically at the end.
//
// The events file is a sequence of self-delimiting blocks (block.go): a
// 32-byte header with lengths, event count, first event number and CRC-32C
// checksums of the header and the payload, then the payload, an lz4 block of
// msgpack-encoded events (codec.go). Blocks are independent, so a reader can
// decode any block alone and can find all blocks by walking their headers
// without decompressing anything. The index holds the event count, counts
// and encoded bytes per kind and per thread, and the file offset of every
// block (of every 2^k-th block once there are more than 65536), so Seek(n)
// reads one block header per table entry skipped at most and decodes only
// the block that holds event n.
//
// # What hermit record puts in it
//
// Package trace does not interpret events, but to list processes
// (ProcessTable); package recorder decides what they mean. A recording uses KindSyscall events three ways: an intercepted
// call's entry (External false; Digest of its arguments, which ride along
// as one 48-byte memory write at address 0 when they changed), the result
// of a call replay must not or cannot run (External true, Sysno the call;
// Digest says whether replay emulates it, runs and forces it, or places an
// mmap or a socket), and the host's answer to one of the scheduler's
// questions (External true, negative Sysno naming the question, Digest its
// key). KindFile events list the files the program used, stored as blobs.
// KindClone, KindExec and KindExit events with Group set log the process
// tree with the guest's ids: every thread and process created, every exec
// (path and argv), every process's end; replay skips them, and
// ProcessTable (process.go) turns them into the list of processes. The
// last KindExit, with Group set, ends the recording with the program's
// status. recorder.JournalVersion (header flag "journal") numbers these
// conventions: version 1 had no process events.
//
// # Crash safety
//
// The writer appends whole blocks with one write each: when a block fills
// (32768 events or 128 KiB by default), on Flush, and at most one second
// after a block's first event (then also fsync; Options.NoSync drops the
// fsyncs at creation and Close, not these). If the recorder dies, every
// block written before survives; the last block may be partial. The index
// only speeds reading up, and Open checks its block table against the
// block headers: without a usable one, Open walks the block headers. If
// every block is intact and the last event is the root's exit (which
// hermit record writes last, just before the index), the trace is
// complete and Reader.IndexError says why the index was not used;
// otherwise the trace was not closed, and the reader yields every event of
// the intact blocks and then reports a *TruncatedError naming the first
// missing event and block. Damage inside
// the file is reported as a *ChecksumError for the first bad block; events
// before it remain readable.
//
// # Versioning
//
// FormatVersion changes only when old readers would misread new traces.
// Header and index are msgpack maps, so fields can be added; events of
// kinds a reader does not know are yielded with only Kind set, and trailing
// fields it does not know are skipped.
package trace
