package ptrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"github.com/hermitdbg/hermit/detcore"
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
	fioSize    = fioCodeOff + 0x2000
	// fioStubSize is the room of a site's stub.
	fioStubSize = 32
)

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
// program's memfd, and returns what the engine needs to use it.
func (t *Tracer) fastWrites(mem []byte) *detcore.FastWrites {
	base := binary.LittleEndian.AppendUint64(nil, fioBase)
	copy(mem[fioCodeOff:], bytes.ReplaceAll(fioFastCode, vclockData, base))
	copy(mem[fioSlowOff:], fioSlowCode)
	// The stubs follow the slow page's code, one per site, in the order
	// the sites were patched.
	next := (len(fioSlowCode) + fioStubSize - 1) / fioStubSize * fioStubSize
	stubs := map[uint64]uint64{}
	stubFor := func(site uint64) (uint64, bool) {
		if a, ok := stubs[site]; ok {
			return a, true
		}
		if next+fioStubSize > 0x1000 {
			return 0, false
		}
		at := uint64(fioBase + fioSlowOff + next)
		b := bytes.ReplaceAll(fioStub, vclockData, binary.LittleEndian.AppendUint64(nil, site+7))
		end := at + uint64(len(b)) + 5
		b = binary.LittleEndian.AppendUint32(append(b, 0xe9), uint32(int32(int64(fioFast)-int64(end))))
		copy(mem[fioSlowOff+next:], b)
		next += fioStubSize
		stubs[site] = at
		return at, true
	}
	return &detcore.FastWrites{
		FdID: func(tid, fd int) (uint64, uint64, bool) {
			h, err := t.heldFd(tid, fd)
			if err != nil || h.stErr != nil {
				return 0, 0, false
			}
			return h.st.Dev, h.st.Ino, true
		},
		Patch: func(tid int, pc uint64) bool {
			if pc < 11 || pc >= fioBase && pc < fioBase+fioSize {
				return false
			}
			var code [11]byte
			if t.ReadMem(tid, pc-uint64(len(code)), code[:]) != nil || !isWriteSite(code[:]) {
				return false
			}
			site := pc - 7 // the mov
			rel := int64(fioBase+fioSlowOff) - int64(site+5)
			if rel < math.MinInt32 || rel > math.MaxInt32-0x1000 {
				return false
			}
			at, ok := stubFor(site)
			if !ok {
				return false
			}
			jmp := binary.LittleEndian.AppendUint32([]byte{0xe9}, uint32(int32(int64(at)-int64(site+5))))
			return writeCode(tid, site, jmp) == nil
		},
	}
}

// writeCode writes b at addr in tid's process, whose code pages are not
// writable: through /proc/PID/mem.
func writeCode(tid int, addr uint64, b []byte) error {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", tid), os.O_WRONLY, 0)
	if err != nil {
		return gone(err)
	}
	defer f.Close()
	_, err = f.WriteAt(b, int64(addr))
	return err
}
