package ptrace

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/hermitdbg/hermit/detcore"
	"golang.org/x/sys/unix"
)

// Fast writes (detcore/fastio.go, testdata/fastio.S). A program whose
// clock page could go at fioBase has, in the same memfd, the engine's
// table of descriptors it may write without a stop and, mapped
// read-execute, the code that makes those writes: the seccomp filter lets
// through every syscall made from its first page (the fast page).
const (
	// fioBase is where vc_map (testdata/vclock.S) maps the clock page:
	// within 2 GiB of the shared libraries (which ASLR-less Linux puts
	// just below 0x7ffff8000000), so that a site reaches its stub with a
	// jmp rel32.
	fioBase = 0x7fffc0000000
	// fioCodeOff is the offset of the code in the memfd: the fast page,
	// then the slow page, which also holds the sites' stubs.
	fioCodeOff = 0x3000
	fioFast    = fioBase + fioCodeOff
	fioSlowOff = fioCodeOff + 0x1000
	fioSize    = fioCodeOff + fioCodeSize
	// fioCodeSize is the size of the code: the fast page and the slow.
	fioCodeSize = 0x2000
	// minNear is the lowest address for a second copy of the code
	// (vm.mmap_min_addr's default).
	minNear = 0x10000
	// fioStubAlign aligns the sites' stubs.
	fioStubAlign = 16
)

// readSite is glibc 2.36's read entry, up to and including its syscall
// instruction: cmpb $0, __libc_single_threaded(%rip); je multi; xor %eax,
// %eax; syscall. 0xff bytes are any (the displacements).
var readSite = []byte{0x80, 0x3d, 0xff, 0xff, 0xff, 0xff, 0x00, 0x74, 0xff, 0x31, 0xc0, 0x0f, 0x05}

// matches reports whether code equals pattern, 0xff in pattern matching
// any byte.
func matches(code, pattern []byte) bool {
	if len(code) != len(pattern) {
		return false
	}
	for i, p := range pattern {
		if p != 0xff && code[i] != p {
			return false
		}
	}
	return true
}

// writeSites are glibc 2.36's write sites, up to and including their
// `mov $1, %eax; syscall`: the single-threaded path (after its je) and the
// cancellable one (after it reloads edi). Only these are patched: what
// precedes the mov tells that the mov is an instruction of its own.
var writeSites = [][]byte{
	{0x74, 0xff, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05},             // je rel8 (any)
	{0x8b, 0x7c, 0x24, 0x08, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05}, // mov 0x8(%rsp),%edi
}

// isWriteSite reports whether code, the bytes that end at a write's
// syscall instruction, is one of writeSites.
func isWriteSite(code []byte) bool {
	for _, w := range writeSites {
		if len(code) < len(w) {
			continue
		}
		c := code[len(code)-len(w):]
		if w[0] == 0x74 {
			// je rel8: any offset.
			c = append([]byte{c[0], 0xff}, c[2:]...)
		}
		if bytes.Equal(c, w) {
			return true
		}
	}
	return false
}

// fastWrites writes the fast-write code into mem, hermit's mapping of a
// program's memfd, and returns what the engine needs to use it. near is
// where the program has the code a second time (clockPage), or 0.
func (t *Tracer) fastWrites(mem []byte, near uint64) *detcore.FastWrites {
	base := binary.LittleEndian.AppendUint64(nil, fioBase)
	copy(mem[fioCodeOff:], bytes.ReplaceAll(fioFastCode, vclockData, base))
	copy(mem[fioSlowOff:], fioSlowCode)
	// The stubs follow the slow page's code, one per site, in the order
	// the sites were patched: a stub is the same in every process that
	// shares the page (forks), whichever patched the site first.
	next := len(fioSlowCode)
	stubs := map[uint64]uint64{}
	// stubFor returns the address of the stub that build makes for its
	// address, which ends with a jmp to entry, for site, in the copy of
	// the code at code (fioFast or near).
	stubFor := func(site, code uint64, build func(at uint64) []byte, entry uint64) (uint64, bool) {
		if a, ok := stubs[site]; ok {
			return a, true
		}
		start := (next + fioStubAlign - 1) / fioStubAlign * fioStubAlign
		at := code + fioSlowOff - fioCodeOff + uint64(start)
		b := build(at)
		if b == nil || start+len(b)+5 > 0x1000 {
			return 0, false
		}
		end := at + uint64(len(b)) + 5
		b = binary.LittleEndian.AppendUint32(append(b, 0xe9), uint32(int32(int64(entry)-int64(end))))
		copy(mem[fioSlowOff+start:], b)
		next = start + len(b)
		stubs[site] = at
		return at, true
	}
	le := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	var jmpTo func(site, code uint64, build func(at uint64) []byte, entry uint64, pad []byte) (uint64, []byte, bool)
	fixed := func(b []byte) func(uint64) []byte { return func(uint64) []byte { return b } }
	fw := &detcore.FastWrites{
		CodeStart: fioFast, CodeEnd: fioBase + fioSize, SlowCall: fioBase + fioSlowOff, NearCode: near,
		FdID: func(tid, fd int) (uint64, uint64, bool) {
			h, err := t.heldFd(tid, fd)
			if err != nil || h.stErr != nil {
				return 0, 0, false
			}
			// hermit's copy shares the guest's open file description:
			// the mark is the description's, which a new open lacks.
			// Not on one the guest has signals from (O_ASYNC, a lease,
			// a signal of its own), where the mark would be the signal.
			if !markable(h.fd, fd) {
				return 0, 0, false
			}
			if _, err := unix.FcntlInt(uintptr(h.fd), unix.F_SETSIG, fioMark(fd)); err != nil {
				return 0, 0, false
			}
			return h.st.Dev, h.st.Ino, true
		},
		Unmark: func(tid, fd int) bool {
			h, err := t.heldFd(tid, fd)
			if err != nil || h.stErr != nil {
				return false
			}
			if sig, err := unix.FcntlInt(uintptr(h.fd), unix.F_GETSIG, 0); err != nil || sig != fioMark(fd) {
				return false
			}
			_, err = unix.FcntlInt(uintptr(h.fd), unix.F_SETSIG, 0)
			return err == nil
		},
		Site: func(pc uint64, code []byte) (uint64, []byte, bool) {
			if pc < 13 || pc >= fioBase && pc < fioBase+fioSize || len(code) != 13 {
				return 0, nil, false
			}
			var site uint64
			var stub, pad []byte
			var entry uint64
			switch {
			case isWriteSite(code[2:]):
				// The mov, replaced by the jmp.
				site, entry = pc-7, fioFast
				stub = bytes.ReplaceAll(fioStub, vclockData, le(pc))
			case matches(code[:], readSite):
				// The cmpb, replaced by the jmp and a 2-byte nop; its
				// stub makes the test.
				site, entry = pc-13, fioFast+fioRead
				single := site + 7 + uint64(int64(int32(binary.LittleEndian.Uint32(code[2:]))))
				multi := site + 9 + uint64(int64(int8(code[8])))
				stub = bytes.ReplaceAll(fioReadStub, vclockData, le(pc))
				stub = bytes.ReplaceAll(stub, le(vclockDataSingle), le(single))
				stub = bytes.ReplaceAll(stub, le(vclockDataMulti), le(multi))
				pad = []byte{0x66, 0x90}
			default:
				return 0, nil, false
			}
			return jmpTo(site, fioFast, fixed(stub), entry, pad)
		},
		Undispatch: func(tid int) bool {
			// PR_SYS_DISPATCH_OFF. The code turns it on with calls
			// from hermit's pages (the fast page's, and the slow
			// page's, which the seccomp filter traces) never blocked.
			return setSUD(tid, &sudConfig{}) == nil
		},
		FutexSite: func(pc uint64, code []byte) (uint64, []byte, bool) {
			if pc < 13 || pc >= fioBase && pc < fioBase+fioSize || len(code) != 13 || !isFutexSite(code) {
				return 0, nil, false
			}
			// The instruction before the syscall, replaced by the jmp,
			// runs first in the stub.
			site := pc - 7
			stub := append(append([]byte(nil), code[6:11]...), bytes.ReplaceAll(fioFutexStub, vclockData, le(pc-2))...)
			return jmpTo(site, fioFast, fixed(stub), fioFast+fioFutex, nil)
		},
		TSCSite: func(pc uint64, code []byte) (uint64, []byte, bool) {
			if pc >= fioBase && pc < fioBase+fioSize {
				return 0, nil, false
			}
			copyAt := uint64(fioFast)
			if !reaches(copyAt, pc) {
				if copyAt = near; near == 0 || !reaches(near, pc) {
					return 0, nil, false
				}
			}
			n, build, ok := tscStubOf(t.tscShape(code), pc, code, copyAt)
			if !ok {
				return 0, nil, false
			}
			return jmpTo(pc, copyAt, build, pc+uint64(n), bytes.Repeat([]byte{0x90}, n-5))
		},
	}
	// jmpTo returns the jmp that takes site to its stub (made if new),
	// followed by pad.
	jmpTo = func(site, code uint64, build func(at uint64) []byte, entry uint64, pad []byte) (uint64, []byte, bool) {
		if !reaches(code, site) {
			return 0, nil, false
		}
		at, ok := stubFor(site, code, build, entry)
		if !ok {
			return 0, nil, false
		}
		jmp := binary.LittleEndian.AppendUint32([]byte{0xe9}, uint32(int32(int64(at)-int64(site+5))))
		return site, append(jmp, pad...), true
	}
	return fw
}

// reaches reports whether a site at pc reaches, with a jmp rel32, every
// stub of the copy of the code at code, and they the site's neighbours.
func reaches(code, pc uint64) bool {
	d := int64(code) - int64(pc)
	return d > math.MinInt32+2*fioCodeSize && d < math.MaxInt32-2*fioCodeSize
}

// futexInsns are the instructions a futex wake site may have just before
// its syscall instruction, which its jmp replaces and its stub makes
// (none refers to rip): glibc's `mov $202, %eax` (its inline futex
// calls) and `mov 8(%rsp), %r9` (the end of its syscall()).
var futexInsns = [][]byte{
	{0xb8, 0xca, 0x00, 0x00, 0x00},
	{0x4c, 0x8b, 0x4c, 0x24, 0x08},
}

// isFutexSite reports whether code, the 13 bytes that end with a futex
// wake's syscall instruction, ends with one of futexInsns and then the
// syscall, the byte before being no prefix of it (a REX, operand or
// address size, lock, repeat or segment prefix would make the
// instruction another).
func isFutexSite(code []byte) bool {
	if code[11] != 0x0f || code[12] != 0x05 {
		return false
	}
	switch p := code[5]; {
	case p >= 0x40 && p <= 0x4f, p == 0x66, p == 0x67, p == 0xf0, p == 0xf2, p == 0xf3,
		p == 0x26, p == 0x2e, p == 0x36, p == 0x3e, p == 0x64, p == 0x65:
		return false
	}
	for _, in := range futexInsns {
		if bytes.Equal(code[6:11], in) {
			return true
		}
	}
	return false
}

// Placeholders of fioReadStub (testdata/fastio.S: DATA1, DATA2).
const (
	vclockDataSingle = 0x5eedc10c5eedc10d
	vclockDataMulti  = 0x5eedc10c5eedc10e
)

var _ detcore.FastPipeTracer = (*Tracer)(nil)

// InternalPipe implements detcore.FastPipeTracer: a pipe or FIFO that
// FdClass calls internal (not hermit's stdio).
func (t *Tracer) InternalPipe(tid, fd int) bool {
	_, c := t.FdKindClass(tid, fd, true)
	h, err := t.heldFd(tid, fd)
	return c == FdInternal && err == nil && h.stErr == nil && h.st.Mode&unix.S_IFMT == unix.S_IFIFO
}

// WriteEnd implements detcore.PartWriteTracer: hermit's stdio and what
// FdClass calls external are outside, but for a TCP connection between
// two guest sockets; a pipe, FIFO or Unix stream socket it calls internal
// are inside, a Unix datagram or seqpacket socket it
// calls internal takes datagrams, and a pty is a terminal.
func (t *Tracer) WriteEnd(tid, fd int) detcore.WriteEnd {
	_, c := t.FdKindClass(tid, fd, true)
	h, err := t.heldFd(tid, fd)
	switch {
	case err != nil || h.stErr != nil:
		return detcore.WriteUnknown
	case c == FdStdio:
		return detcore.WriteOutside
	case isPty(&h.st):
		// A pty other than hermit's own terminal: the guest may well
		// read its other side (pty.spawn, script, expect), and its parts
		// wait as well for a reader outside.
		return detcore.WriteTerminal
	case c == FdExternal && t.loopbackInside(tid, h.fd, &h.st):
		// A TCP connection between two guest sockets over loopback.
		return detcore.WriteInside
	case c == FdExternal:
		return detcore.WriteOutside
	case c == FdInternal && (h.st.Mode&unix.S_IFMT == unix.S_IFIFO || unixStream(h.fd)):
		return detcore.WriteInside
	case c == FdInternal && unixMessages(h.fd):
		return detcore.WriteDatagrams
	}
	return detcore.WriteUnknown
}

// isPty reports whether st is a pseudo-terminal's side: a slave (majors
// 136 to 143) or a master (/dev/ptmx, 5:2).
func isPty(st *unix.Stat_t) bool {
	m := unix.Major(st.Rdev)
	return st.Mode&unix.S_IFMT == unix.S_IFCHR && (m >= 136 && m <= 143 || m == 5 && unix.Minor(st.Rdev) == 2)
}

// markable reports whether hermit may mark the open file description of
// its copy c of guest descriptor fd: the guest has no signals from it
// (no O_ASYNC, no lease, no F_SETSIG of its own), so the mark, the
// signal F_SETSIG sets, never reaches the guest (and F_GETSIG, which the
// engine intercepts, answers 0).
func markable(c, fd int) bool {
	fl, err := unix.FcntlInt(uintptr(c), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_ASYNC != 0 {
		return false
	}
	if sig, err := unix.FcntlInt(uintptr(c), unix.F_GETSIG, 0); err != nil || sig != 0 && sig != fioMark(fd) {
		return false
	}
	lease, err := unix.FcntlInt(uintptr(c), unix.F_GETLEASE, 0)
	return err != nil || lease == unix.F_UNLCK
}

// fioMark is the signal number (F_SETSIG) by which the fast code knows an
// open file description hermit entered as descriptor fd: 1 to 64, for
// the descriptor's number (a description dup'd to another number fails
// its check too, unless the numbers are 64 apart).
func fioMark(fd int) int { return 1 + fd%64 }
