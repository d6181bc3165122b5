package detcore_test

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/detcoretest"
)

// fileFake is the scripted tracer plus an in-memory FileTracer: paths name
// fixed struct statx results, and descriptor dirFd is a directory.
type fileFake struct {
	*detcoretest.Tracer
	files map[string]detcore.StatxBuf // by path; "" is descriptor dirFd
	errs  map[string]error
	// found are the paths Statx says it found, by the path asked.
	found  map[string]string
	dir    []detcore.DirEntry
	dirOff int64
	// wrote records the engine's writes to guest memory.
	wrote map[uint64][]byte
}

const (
	dirFd   = 7
	pathA   = 0x5000 // guest strings
	pathB   = 0x5100
	outAddr = 0x6000 // stat buffers
	outB    = 0x6100
	dentsAt = 0x7000
)

func (f *fileFake) WriteMem(tid int, addr uint64, b []byte) error {
	f.wrote[addr] = slices.Clone(b)
	return f.Tracer.WriteMem(tid, addr, b)
}

func (f *fileFake) Statx(tid int, req detcore.StatReq) (detcore.StatxBuf, string, error) {
	if err := f.errs[req.Path]; err != nil {
		return detcore.StatxBuf{}, "", err
	}
	st, ok := f.files[req.Path]
	if !ok {
		return st, "", detcore.Errno(abi.ENOENT)
	}
	return st, f.found[req.Path], nil
}

func (f *fileFake) OpenDir(tid, fd int) (detcore.DirHandle, error) {
	if fd != dirFd {
		return nil, detcore.Errno(abi.EBADF)
	}
	return fakeDir{f}, nil
}

type fakeDir struct{ f *fileFake }

func (d fakeDir) ID() detcore.FileID        { return detcore.FileID{Dev: 1, Ino: 2} }
func (d fakeDir) Offset() (int64, error)    { return d.f.dirOff, nil }
func (d fakeDir) SetOffset(off int64) error { d.f.dirOff = off; return nil }
func (d fakeDir) Close() error              { return nil }
func (d fakeDir) ReadAll() ([]detcore.DirEntry, error) {
	d.f.dirOff = 1 << 40 // the end, in the host's cookies
	return d.f.dir, nil
}

// statx returns a struct statx for host file dev:ino with host times.
func statx(major, minor uint32, ino uint64) detcore.StatxBuf {
	var st detcore.StatxBuf
	le := binary.LittleEndian
	le.PutUint32(st[0:], 0xfff) // basic stats and btime
	le.PutUint32(st[4:], 512)
	le.PutUint64(st[32:], ino)
	le.PutUint16(st[28:], 0o100644)
	for _, off := range []int{64, 80, 96, 112} {
		le.PutUint64(st[off:], 1_700_000_000) // host times
	}
	le.PutUint32(st[136:], major)
	le.PutUint32(st[140:], minor)
	return st
}

func newFileFake(root ...step) *fileFake {
	f := &fileFake{Tracer: detcoretest.New(root...), files: map[string]detcore.StatxBuf{},
		errs: map[string]error{}, found: map[string]string{}, wrote: map[uint64][]byte{}}
	// The engine reads paths by the chunk, as far as the page allows.
	for addr, s := range map[uint64]string{pathA: "a", pathB: "b"} {
		b := make([]byte, 256)
		copy(b, s)
		_ = f.Tracer.WriteMem(1, addr, b)
	}
	_ = f.Tracer.WriteMem(1, outAddr, make([]byte, 256))
	return f
}

func newfstatat(path, out uint64) step {
	return detcoretest.Syscall(abi.SYS_NEWFSTATAT, uint64(0xffffff9c), path, out, 0)
}

// statFields decodes ino, dev, blksize and mtime (s) of a struct stat.
func statFields(b []byte) (ino, dev, blksize, mtime uint64) {
	le := binary.LittleEndian
	return le.Uint64(b[8:]), le.Uint64(b[0:]), le.Uint64(b[56:]), le.Uint64(b[88:])
}

func TestFilesStat(t *testing.T) {
	epoch := uint64(detcore.DefaultEpoch.Unix())
	f := newFileFake(exiting([]step{
		newfstatat(pathA, outAddr),
		newfstatat(pathB, outAddr), // gives ENOENT
		detcoretest.Syscall(abi.SYS_STATX, uint64(0xffffff9c), pathA, 0, 0xfff, outAddr),
	})...)
	f.files["a"] = statx(0, 55, 4242)
	cfg := detcore.Config{Quantum: quantum}
	if _, err := detcore.NewEngine(f, cfg, 1).Run(); err != nil {
		t.Fatal(err)
	}
	if err := f.Finished(); err != nil {
		t.Fatal(err)
	}
	var rets []int64
	for _, c := range f.Calls() {
		if c.Nr != abi.SYS_EXIT {
			if !c.Emulated {
				t.Errorf("%s ran natively, want it emulated (one stop)", abi.SyscallName(c.Nr))
			}
			rets = append(rets, c.Ret)
		}
	}
	if want := []int64{0, -abi.ENOENT, 0}; !slices.Equal(rets, want) {
		t.Errorf("results %v, want %v", rets, want)
	}
	b := f.wrote[outAddr]
	if len(b) != 256 {
		t.Fatalf("statx wrote %d bytes, want 256", len(b))
	}
	le := binary.LittleEndian
	ino, minor, blksize, mtime := le.Uint64(b[32:]), le.Uint32(b[140:]), le.Uint32(b[4:]), le.Uint64(b[112:])
	if ino != 1000 || minor != 0x8000 || blksize != 4096 || mtime != epoch {
		t.Errorf("statx gave ino %d, dev 0:%#x, blksize %d, mtime %d; want 1000, 0:0x8000, 4096, %d", ino, minor, blksize, mtime, epoch)
	}
}

// TestFilesRealMtimeWherever: a file under --real-mtimes keeps its mtime
// however the guest names it (here by a relative path, which the tracer
// finds under /usr/); one found elsewhere shows the epoch.
func TestFilesRealMtimeWherever(t *testing.T) {
	epoch := uint64(detcore.DefaultEpoch.Unix())
	f := newFileFake(exiting([]step{newfstatat(pathA, outAddr), newfstatat(pathB, outB)})...)
	f.files["a"], f.found["a"] = statx(8, 1, 7), "/usr/lib/a"
	f.files["b"], f.found["b"] = statx(8, 1, 8), "/home/u/b"
	_ = f.Tracer.WriteMem(1, outB, make([]byte, 256))
	cfg := detcore.Config{Quantum: quantum, RealMtimes: []string{"/usr/"}}
	if _, err := detcore.NewEngine(f, cfg, 1).Run(); err != nil {
		t.Fatal(err)
	}
	if err := f.Finished(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, m := statFields(f.wrote[outAddr]); m != 1_700_000_000 {
		t.Errorf("the file found under /usr/ by a relative path has mtime %d, want its own 1700000000", m)
	}
	if _, _, _, m := statFields(f.wrote[outB]); m != epoch {
		t.Errorf("the file found elsewhere has mtime %d, want the epoch %d", m, epoch)
	}
}

func TestFilesStatFallsBackToNative(t *testing.T) {
	f := newFileFake(exiting([]step{newfstatat(pathA, outAddr)})...)
	f.errs["a"] = detcore.ErrNotEmulated
	// What the kernel leaves in the buffer when the call runs natively.
	st := make([]byte, 144)
	binary.LittleEndian.PutUint64(st[8:], 99)
	binary.LittleEndian.PutUint64(st[0:], 0x2a) // 0:42
	_ = f.Tracer.WriteMem(1, outAddr, st)
	if _, err := detcore.NewEngine(f, detcore.Config{Quantum: quantum}, 1).Run(); err != nil {
		t.Fatal(err)
	}
	ino, dev, blksize, _ := statFields(f.wrote[outAddr])
	if ino != 1000 || dev != 0x8000000 || blksize != 4096 {
		t.Errorf("rewritten at exit: ino %d, dev %#x, blksize %d; want 1000, 0x8000000, 4096", ino, dev, blksize)
	}
}

func TestFilesGetdentsSorted(t *testing.T) {
	getdents := detcoretest.Syscall(abi.SYS_GETDENTS64, dirFd, dentsAt, 4096)
	write := detcoretest.Syscall(abi.SYS_PWRITE64, 3, 0, 1, 0)
	f := newFileFake(exiting([]step{getdents, getdents, write, newfstatat(pathB, outAddr)})...)
	for i, name := range []string{"b", "..", "c", ".", "a"} {
		f.dir = append(f.dir, detcore.DirEntry{Name: name, Type: 8, ID: detcore.FileID{Dev: 1, Ino: uint64(50 - i), Btime: 1_700_000_000e9, BtimeKnown: true}})
	}
	f.files["b"] = statx(0, 1, 50) // the file "b" lists as, 0:1 ino 50
	f.files[""] = statx(0, 1, 50)  // descriptor 3, written to
	if _, err := detcore.NewEngine(f, detcore.Config{Quantum: quantum}, 1).Run(); err != nil {
		t.Fatal(err)
	}
	var rets []int64
	for _, c := range f.Calls() {
		rets = append(rets, c.Ret)
	}
	if want := []int64{5 * 24, 0, 0, 0}; !slices.Equal(rets, want) {
		t.Errorf("results %v, want %v", rets, want)
	}
	if f.dirOff != 5 {
		t.Errorf("directory offset %d after the listing, want 5 (the entry count)", f.dirOff)
	}
	var names []string
	var inos []uint64
	for rec := f.wrote[dentsAt]; len(rec) >= 24; rec = rec[24:] {
		names = append(names, string(rec[19:19+slices.Index(rec[19:], 0)]))
		inos = append(inos, binary.LittleEndian.Uint64(rec))
	}
	if want := []string{".", "..", "a", "b", "c"}; !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	if want := []uint64{1000, 1001, 1002, 1003, 1004}; !slices.Equal(inos, want) {
		t.Errorf("inodes %v, want %v", inos, want)
	}
	// "b" (virtual 1003) was written at the third turn: its mtime moved
	// from the epoch to 3 turns later.
	ino, _, _, mtime := statFields(f.wrote[outAddr])
	nsec := binary.LittleEndian.Uint64(f.wrote[outAddr][96:])
	if ino != 1003 || mtime != uint64(detcore.DefaultEpoch.Unix()) || nsec != 3*quantum {
		t.Errorf("stat b: ino %d mtime %d.%09d, want 1003 and %d.%09d", ino, mtime, nsec, detcore.DefaultEpoch.Unix(), 3*quantum)
	}
}
