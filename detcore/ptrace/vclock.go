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
// it (injected at the exec, before the program runs): memfd_create, mmap
// and close, so that the descriptor is gone before the program starts;
// hermit takes its own copy with pidfd_getfd in between.

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
func (t *Tracer) clockPage(in *injector, v *vdso) (*detcore.ClockPage, string, error) {
	home, ok := v.syms[vclockEntries[0].name]
	if !ok || in.insn == 0 {
		return nil, "its vDSO has no clock_gettime", nil
	}
	// The memfd's name goes after the code, which replaces it at the end.
	name := append([]byte("hermit-clock"), 0)
	if need := uint64(len(vclockCode) + len(name)); home.Size < need {
		return nil, fmt.Sprintf("its vDSO's clock_gettime is %d bytes, too small for hermit's clock code (%d)", home.Size, need), nil
	}
	nameAt := home.Value + uint64(len(vclockCode))
	if err := v.write(nameAt, name); err != nil {
		return nil, "", err
	}
	fd, err := in.call(unix.SYS_MEMFD_CREATE, nameAt, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, "", err
	}
	if fd < 0 {
		return nil, fmt.Sprintf("memfd_create failed in it (%v)", unix.Errno(-fd)), nil
	}
	mem, why, err := t.shareMemfd(in, int(fd))
	if err != nil || mem == nil {
		return nil, why, err
	}
	release := func() { unix.Munmap(mem) }
	addr, err := in.call(unix.SYS_MMAP, 0, uint64(len(mem)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED, uint64(fd), 0)
	if err == nil {
		_, err = in.call(unix.SYS_CLOSE, uint64(fd))
	}
	switch {
	case err != nil:
		release()
		return nil, "", err
	case addr < 0 && addr > -4096:
		release()
		return nil, fmt.Sprintf("mmap of the clock page failed in it (%v)", unix.Errno(-addr)), nil
	}
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
	return detcore.NewClockPage(mem, release), "", nil
}

// shareMemfd gives memfd fd of the guest thread its page size and maps it
// in hermit. On failure it closes fd in the guest and says why.
func (t *Tracer) shareMemfd(in *injector, fd int) ([]byte, string, error) {
	fail := func(what string, e error) ([]byte, string, error) {
		_, err := in.call(unix.SYS_CLOSE, uint64(fd))
		return nil, fmt.Sprintf("%s failed for its clock page (%v)", what, e), err
	}
	own, err := t.dupFd(in.tid, fd)
	if err != nil {
		return fail("pidfd_getfd", err)
	}
	defer unix.Close(own)
	size := unix.Getpagesize()
	if err := unix.Ftruncate(own, int64(size)); err != nil {
		return fail("ftruncate", err)
	}
	mem, err := unix.Mmap(own, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail("mmap", err)
	}
	return mem, "", nil
}
