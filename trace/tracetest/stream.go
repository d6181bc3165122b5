// Package tracetest generates synthetic event streams for tests and
// benchmarks of package trace.
package tracetest

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/hermitdbg/hermit/trace"
)

// x86-64 system call numbers used by the synthetic workload.
const (
	sysRead         = 0
	sysWrite        = 1
	sysClose        = 3
	sysPoll         = 7
	sysLseek        = 8
	sysGetpid       = 39
	sysRecvfrom     = 45
	sysFutex        = 202
	sysClockGettime = 228
	sysEpollWait    = 232
	sysOpenat       = 257
)

// result shapes of a call site.
const (
	resData        = iota // returns 0..64 bytes it also writes to memory
	resFixed              // always returns the same value
	resZero               // returns 0, sometimes -EAGAIN
	resClock              // returns 0 and a 16-byte timespec
	resEvents             // returns 1..3 and 12 bytes per epoll_event
	resAddr               // returns a fresh address (mmap)
	resFd                 // returns a small fd
	resVariedCount        // returns a count that varies widely (write to a pipe)
)

type callSite struct {
	sysno    int32
	external bool
	shape    int
	fixed    int64
	args     int    // 0: same arguments every call; n > 0: one of n argument sets; -1: new arguments every call
	digest   uint64 // of the first argument set
}

type thread struct {
	tid   int32
	sites []callSite
	pc    int
	addr  uint64 // buffer address for memory writes
}

// Stream is a deterministic, realistic stream of recorded events: four
// threads, each running a loop over 13 call sites (epoll_wait, read,
// recvfrom, clock_gettime, write, futex, openat, lseek, close, getpid), in
// scheduler turns of 1 to 16 events, with a random jump in the loop one call
// in eight. Two call sites in 13 (lseek, write of a varying length) have new
// arguments, so a new digest, on every call; four pick among 2 to 16
// argument sets (fds, paths, futex words); the rest repeat theirs. Results vary call to call; outputs are
// 0 to 64 bytes. After a blocking external read, a KindTiming event records
// when it completed. The stream starts with an exec and the clones of the
// threads.
type Stream struct {
	rng      *rand.Rand
	payloads bool
	threads  []thread
	cur      int   // running thread
	turn     int   // events left in its turn
	prelude  int   // exec and clone events emitted so far
	clock    int64 // logical nanoseconds
	timing   bool  // emit a timing event next
	buf      [64]byte
	mem      [1]trace.MemWrite
	exec     trace.Exec
}

// NewStream returns the stream for seed. Without payloads, system calls
// carry no memory writes (everything else is the same), which measures the
// cost of the common payload-free event.
func NewStream(seed uint64, payloads bool) *Stream {
	s := &Stream{rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), payloads: payloads}
	for i := range 4 {
		t := thread{tid: int32(1000 + i), addr: 0x7f0000001000 + uint64(i)<<20}
		t.sites = []callSite{
			{sysno: sysEpollWait, external: true, shape: resEvents},
			{sysno: sysRead, external: true, shape: resData, args: 4}, // one of 4 connections
			{sysno: sysClockGettime, external: true, shape: resClock},
			{sysno: sysWrite, external: true, shape: resFixed, fixed: int64(20 + i)},
			{sysno: sysFutex, shape: resZero, args: 2},
			{sysno: sysRecvfrom, external: true, shape: resData},
			{sysno: sysOpenat, external: true, shape: resFd, args: 16}, // one of 16 paths
			{sysno: sysLseek, external: true, shape: resVariedCount, args: -1},
			{sysno: sysRead, external: true, shape: resData},
			{sysno: sysClose, shape: resZero, args: 12}, // one of 12 fds
			{sysno: sysGetpid, shape: resFixed, fixed: 1000},
			{sysno: sysWrite, external: true, shape: resVariedCount, args: -1}, // varying length
			{sysno: sysClockGettime, external: true, shape: resClock},
		}
		for j := range t.sites {
			t.sites[j].digest = s.rng.Uint64()
		}
		s.threads = append(s.threads, t)
	}
	s.exec = trace.Exec{
		Path: "/usr/bin/server",
		Argv: []string{"server", "--port", "8080"},
		Files: []trace.MappedFile{
			{Path: "/usr/bin/server", Blob: trace.BlobOf([]byte("server")), Addr: 0x400000, Len: 0x20000},
			{Path: "/lib64/ld-linux-x86-64.so.2", Blob: trace.BlobOf([]byte("ld.so")), Addr: 0x7f1000000000, Len: 0x2a000},
		},
	}
	return s
}

// Next overwrites ev with the next event. ev's byte slices alias the stream
// until the next call.
func (s *Stream) Next(ev *trace.Event) {
	*ev = trace.Event{}
	if s.prelude < len(s.threads) {
		s.prelude++
		if s.prelude == 1 {
			*ev = trace.Event{Kind: trace.KindExec, Tid: s.threads[0].tid, Exec: &s.exec}
			return
		}
		*ev = trace.Event{Kind: trace.KindClone, Tid: s.threads[0].tid,
			Child: s.threads[s.prelude-1].tid, Flags: 0x3d0f00}
		return
	}
	s.clock += 1000 + s.rng.Int64N(50000)
	if s.timing {
		s.timing = false
		*ev = trace.Event{Kind: trace.KindTiming, Tid: s.threads[s.cur].tid, Time: s.clock}
		return
	}
	if s.turn == 0 {
		s.cur = s.rng.IntN(len(s.threads))
		s.turn = 1 + s.rng.IntN(16)
	}
	s.turn--
	t := &s.threads[s.cur]
	// Mostly follow the loop; sometimes jump, as branches in the program do.
	if s.rng.IntN(8) == 0 {
		t.pc = s.rng.IntN(len(t.sites))
	}
	c := &t.sites[t.pc]
	t.pc = (t.pc + 1) % len(t.sites)
	digest := c.digest
	switch {
	case c.args < 0:
		digest = s.rng.Uint64()
	case c.args > 0:
		digest += uint64(s.rng.IntN(c.args)) * 0x9e3779b97f4a7c15
	}
	*ev = trace.Event{Kind: trace.KindSyscall, Tid: t.tid, Sysno: c.sysno, External: c.external, Digest: digest}
	var out []byte
	switch c.shape {
	case resData:
		n := s.rng.IntN(65)
		if s.rng.IntN(4) == 0 {
			n = 64
		}
		ev.Result = int64(n)
		out = s.text(n)
		if n > 0 && s.rng.IntN(10) == 0 {
			s.timing = true
		}
	case resFixed:
		ev.Result = c.fixed
	case resZero:
		if s.rng.IntN(10) == 0 {
			ev.Result = -11 // EAGAIN
		}
	case resClock:
		out = s.buf[:16]
		binary.LittleEndian.PutUint64(out, uint64(s.clock/1e9))
		binary.LittleEndian.PutUint64(out[8:], uint64(s.clock%1e9))
	case resEvents:
		ev.Result = 1 + s.rng.Int64N(3)
		out = s.buf[:12*ev.Result]
		for i := range ev.Result {
			binary.LittleEndian.PutUint32(out[12*i:], 1)                         // EPOLLIN
			binary.LittleEndian.PutUint64(out[12*i+4:], uint64(5+s.rng.IntN(4))) // fd as data
		}
	case resFd:
		ev.Result = 3 + s.rng.Int64N(12)
	case resVariedCount:
		ev.Result = s.rng.Int64N(1 << 16)
	}
	if s.payloads && out != nil {
		s.mem[0] = trace.MemWrite{Addr: t.addr, Data: out}
		ev.Mem = s.mem[:]
	}
}

// text fills n bytes of the buffer with log-like text.
func (s *Stream) text(n int) []byte {
	const words = "GET /index.html HTTP/1.1 200 OK Host: example.com Accept: */* "
	off := s.rng.IntN(len(words))
	for i := range n {
		s.buf[i] = words[(off+i)%len(words)]
	}
	return s.buf[:n]
}
