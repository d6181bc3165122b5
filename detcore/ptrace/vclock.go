package ptrace

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/hermitdbg/hermit/detcore"
	"golang.org/x/sys/unix"
)

//go:generate sh testdata/genvclock.sh

// The clock page (detcore/vclock.go): each program gets a page of a memfd
// of its own, mapped MAP_SHARED in the guest and in hermit, and the
// vDSO's clock_gettime, gettimeofday and time are replaced with
// testdata/vclock.S, which reads it. The guest makes the calls that map
// it, at the exec, before the program runs (vc_map, two stops):
// memfd_create and mmap, then close, so that the descriptor is gone
// before the program starts; hermit takes its own copy with pidfd_getfd
// in between.

// vclockData is the placeholder for the page's address in vclockCode.
var vclockData = binary.LittleEndian.AppendUint64(nil, 0x5eedc10c5eedc10c)

// vclockEntries are the vDSO functions the code replaces, with the offset
// of each one's entry in it.
var vclockEntries = []struct {
	name string
	off  int
}{
	{"__vdso_clock_gettime", vclockClockGettime},
	{"__vdso_gettimeofday", vclockGettimeofday},
	{"__vdso_time", vclockTime},
}

// clockPage maps a clock page into the program of thread in (at its
// exec) and puts the code that reads it in its vDSO. When the program
// cannot have one, it returns nil and why; err is for a thread that
// vanished or a tracer failure.
//
// exe is where the executable's ELF header is (0: unknown): when the
// fast-write code at fioBase cannot reach it with a jmp rel32, the code is
// mapped a second time just below it, for the stubs of its rdtsc sites.
func (t *Tracer) clockPage(in *injector, v *vdso, exe uint64) (*detcore.ClockPage, string, error) {
	home, ok := v.syms[vclockEntries[0].name]
	if !ok {
		return nil, "its vDSO has no clock_gettime", nil
	}
	// vclockMap runs from after the clock code's place: the clock code
	// replaces what it overwrites only once it has run.
	mapAt := home.Value + uint64(len(vclockCode))
	if need := uint64(len(vclockCode) + len(vclockMap)); home.Size < need {
		return nil, fmt.Sprintf("its vDSO's clock_gettime is %d bytes, too small for hermit's clock code (%d)", home.Size, need), nil
	}
	err := v.write(mapAt, vclockMap)
	if err == nil {
		err = v.flush()
	}
	if err != nil {
		return nil, "", fmt.Errorf("writing the code that maps it: %w", err)
	}
	if near := exe - fioCodeSize; exe%4096 == 0 && exe > minNear+fioCodeSize && !reaches(fioFast, exe) {
		in.r15 = near
	}
	r, err := in.start(mapAt)
	in.r15 = 0
	if err != nil {
		return nil, "", fmt.Errorf("memfd_create and mmap: %w", err)
	}
	fd, addr := int64(r.R12), int64(r.R13)
	fast := uint64(addr) == fioBase && r.R14 == fioBase+fioCodeOff
	var near uint64
	if r.R15 != 0 && r.R15 == exe-fioCodeSize {
		near = r.R15
	}
	var mem []byte
	why := ""
	switch {
	case fd < 0:
		why = fmt.Sprintf("memfd_create failed in it (%v)", unix.Errno(-fd))
	case addr < 0 && addr > -4096:
		why = fmt.Sprintf("mmap of the clock page failed in it (%v)", unix.Errno(-addr))
	default:
		mem, why = t.shareMemfd(in.tid, int(fd), fast)
	}
	// The close, unless memfd_create failed, and back to the program.
	if _, err := in.cont(); err != nil {
		return nil, "", fmt.Errorf("close: %w", err)
	}
	if mem == nil {
		return nil, why, nil
	}
	release := func() { unix.Munmap(mem) }
	code := bytes.ReplaceAll(vclockCode, vclockData, binary.LittleEndian.AppendUint64(nil, uint64(addr)))
	if err := v.write(home.Value, code); err != nil {
		release()
		return nil, "", fmt.Errorf("writing the clock code: %w", err)
	}
	for _, e := range vclockEntries[1:] {
		s, ok := v.syms[e.name]
		if !ok {
			continue
		}
		// jmp rel32 to the entry.
		jmp := binary.LittleEndian.AppendUint32([]byte{0xe9}, uint32(int32(int64(home.Value)+int64(e.off)-int64(s.Value+5))))
		if err := v.write(s.Value, jmp); err != nil {
			release()
			return nil, "", fmt.Errorf("writing %s: %w", e.name, err)
		}
	}
	if err := v.flush(); err != nil {
		release()
		return nil, "", fmt.Errorf("writing the clock code: %w", err)
	}
	c := detcore.NewClockPage(mem, release)
	c.SetCode(home.Value, home.Value+uint64(len(vclockCode)))
	if fast {
		c.SetFastWrites(t.fastWrites(mem, near))
	}
	return c, "", nil
}

// shareMemfd gives memfd fd of guest thread tid its size (fioSize: the
// guest may have mapped all of it) and maps it in hermit, all of it when
// fast (the guest mapped it for fast writes), else its first page; on
// failure it says why.
func (t *Tracer) shareMemfd(tid, fd int, fast bool) ([]byte, string) {
	own, err := t.dupFd(tid, fd)
	if err != nil {
		return nil, fmt.Sprintf("pidfd_getfd failed for its clock page (%v)", err)
	}
	defer unix.Close(own)
	size := unix.Getpagesize()
	if err := unix.Ftruncate(own, fioSize); err != nil {
		return nil, fmt.Sprintf("ftruncate failed for its clock page (%v)", err)
	}
	if fast {
		size = fioSize
	}
	mem, err := unix.Mmap(own, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Sprintf("mmap failed for its clock page (%v)", err)
	}
	return mem, ""
}
