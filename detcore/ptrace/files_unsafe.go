package ptrace

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// statx is statx(2) into a buffer in the kernel's own layout of struct
// statx, so that fields newer than x/sys's Statx_t reach the guest too.
func statx(dirfd int, path string, flags int, mask uint32, out *[256]byte) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall6(unix.SYS_STATX, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags), uintptr(mask), uintptr(unsafe.Pointer(out)), 0)
	if e != 0 {
		return e
	}
	return nil
}
