package ptrace

import (
	"os"

	"golang.org/x/sys/unix"
)

// Files of procfs, opened without what os.Open adds for files it could
// poll: os.Open of a /proc file costs four fcntl calls and a refused
// epoll_ctl besides the openat, and os.ReadFile an fstat too, where the
// engine reads several such files at every fork, exec and new thread.

// procOpenFile opens name, a file in /proc, with flag (os.O_RDONLY,
// os.O_WRONLY), as a blocking file.
func procOpenFile(name string, flag int) (*os.File, error) {
	fd, err := unix.Open(name, flag|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// procOpen opens name, a file in /proc, for reading.
func procOpen(name string) (*os.File, error) { return procOpenFile(name, os.O_RDONLY) }

// readProcFile reads the whole of name, a file in /proc.
func readProcFile(name string) ([]byte, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 4096)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}
