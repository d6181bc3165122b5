package ptrace

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// What a debugger reads beyond the general registers: the siginfo of a
// signal stop, and files of a rebuilt root (the XSAVE area comes from
// VectorRegs, spin_unsafe.go).

// siginfoSize is sizeof(siginfo_t) on x86-64.
const siginfoSize = 128

// Siginfo returns the siginfo_t of the signal thread tid is stopped with
// (PTRACE_GETSIGINFO): valid at a signal-delivery stop.
func (t *Tracer) Siginfo(tid int) ([]byte, error) {
	b := make([]byte, siginfoSize)
	if err := ptracePtr(unix.PTRACE_GETSIGINFO, tid, 0, unsafe.Pointer(&b[0])); err != nil {
		return nil, fmt.Errorf("reading the siginfo of thread %d: %w", tid, gone(err))
	}
	return b, nil
}

// SetSiginfo replaces the siginfo_t of the signal thread tid is stopped
// with (PTRACE_SETSIGINFO).
func (t *Tracer) SetSiginfo(tid int, info []byte) error {
	if len(info) < siginfoSize {
		return fmt.Errorf("siginfo of %d bytes, want %d", len(info), siginfoSize)
	}
	if err := ptracePtr(unix.PTRACE_SETSIGINFO, tid, 0, unsafe.Pointer(&info[0])); err != nil {
		return fmt.Errorf("setting the siginfo of thread %d: %w", tid, gone(err))
	}
	return nil
}

// OpenInRoot opens path for reading as a process whose root directory is
// root would: ".." stops at root and absolute symlinks resolve inside it
// (openat2 RESOLVE_IN_ROOT), so a rebuilt root's files are served as the
// recorded program saw them and nothing outside root is reached.
func OpenInRoot(root, path string) (*os.File, error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, path, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
