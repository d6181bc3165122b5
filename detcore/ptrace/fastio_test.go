package ptrace

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestFilterFastPage: the filter lets through a traced syscall made from
// the fast page, and only from there: the slow page, the bytes around
// the fast page and an address 4 GiB away are traced as usual.
func TestFilterFastPage(t *testing.T) {
	prog := buildFilter([]int{unix.SYS_WRITE, unix.SYS_READ, unix.SYS_FSTAT}, nil)
	for _, c := range []struct {
		name string
		ip   uint64
		want uint32
	}{
		{"fast page start", fioFast, unix.SECCOMP_RET_ALLOW},
		{"fast page end", fioFast + 0xfff, unix.SECCOMP_RET_ALLOW},
		{"before the fast page", fioFast - 1, unix.SECCOMP_RET_TRACE},
		{"slow page", fioFast + 0x1000, unix.SECCOMP_RET_TRACE},
		{"4 GiB up", fioFast + 1<<32, unix.SECCOMP_RET_TRACE},
		{"libc", 0x7ffff7ed8350, unix.SECCOMP_RET_TRACE},
	} {
		for _, nr := range []int{unix.SYS_WRITE, unix.SYS_READ, unix.SYS_FSTAT} {
			info := syscallInfo{Arch: unix.AUDIT_ARCH_X86_64, Nr: uint64(nr), IP: c.ip}
			if got := filterAction(prog, &info); got != c.want {
				t.Errorf("%s (%#x): syscall %d gets %#x, want %#x", c.name, c.ip, nr, got, c.want)
			}
		}
	}
	// An untraced call stays allowed from anywhere.
	info := syscallInfo{Arch: unix.AUDIT_ARCH_X86_64, Nr: unix.SYS_GETPID, IP: fioFast + 0x1000}
	if got := filterAction(prog, &info); got != unix.SECCOMP_RET_ALLOW {
		t.Errorf("getpid from the slow page gets %#x, want ALLOW", got)
	}
}

// TestSites: the write and read sites of glibc 2.36 (the bytes before and
// up to their syscall instruction) are recognized, and look-alikes that
// are not sites are not.
func TestSites(t *testing.T) {
	for _, c := range []struct {
		name  string
		code  []byte // 13 bytes ending at the syscall instruction's end
		write bool
		read  bool
	}{
		{"write, single-threaded", []byte{0x00, 0x00, 0x80, 0x3d, 0x91, 0x32, 0x0e, 0x00, 0x00, 0x74, 0x17, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05}[5:], true, false},
		{"write, cancellable", []byte{0x10, 0x41, 0x89, 0xc0, 0x8b, 0x7c, 0x24, 0x08, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05}[2:], true, false},
		{"read, single-threaded", []byte{0x80, 0x3d, 0x31, 0x33, 0x0e, 0x00, 0x00, 0x74, 0x17, 0x31, 0xc0, 0x0f, 0x05}, false, true},
		{"mov r8d, 1 then syscall", []byte{0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x41, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05}[1:], false, false},
		{"write without the je", []byte{0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05}[2:], false, false},
		{"read of another nr", []byte{0x80, 0x3d, 0x31, 0x33, 0x0e, 0x00, 0x00, 0x74, 0x17, 0x31, 0xc9, 0x0f, 0x05}, false, false},
	} {
		if len(c.code) != 13 {
			t.Fatalf("%s: %d bytes, want 13", c.name, len(c.code))
		}
		if got := isWriteSite(c.code[2:]); got != c.write {
			t.Errorf("%s: isWriteSite %v, want %v", c.name, got, c.write)
		}
		if got := matches(c.code, readSite); got != c.read {
			t.Errorf("%s: a read site %v, want %v", c.name, got, c.read)
		}
	}
}

// TestFastCode: the fast-write code fits its pages, enters where hermit
// jumps, and leaves the slow page room for stubs.
func TestFastCode(t *testing.T) {
	if len(fioFastCode) > 0x1000 || fioRead >= len(fioFastCode) {
		t.Errorf("fast page code %d bytes, fio_read at %#x", len(fioFastCode), fioRead)
	}
	if room := 0x1000 - len(fioSlowCode); room < 64*(len(fioReadStub)+5) {
		t.Errorf("room for %d read stubs only", room/(len(fioReadStub)+5))
	}
	if fioBase+fioSize > 0x7fffffffffff || fioBase%0x1000 != 0 {
		t.Errorf("fioBase %#x is no page of user space for %#x bytes", fioBase, fioSize)
	}
	if fioMark(3) != 4 || fioMark(66) != 3 || fioMark(63) != 64 {
		t.Errorf("fioMark: %d %d %d", fioMark(3), fioMark(66), fioMark(63))
	}
}
