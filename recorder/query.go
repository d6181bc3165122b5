package recorder

import (
	"errors"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/trace"
)

// Queries answered at their entry. A recording keeps what readlink and
// access told the guest (clQuery). Let run, such a call costs two stops:
// its entry, and its exit, where the result is read. Most of them fail
// (gcc's realpath calls readlink on every component of a path, and gets
// EINVAL for each that is not a link; compilers probe for files that are
// not there): the recorder asks the host at the entry instead, the engine
// gives the guest the answer, and the call costs one stop. The event is
// the one the exit would have written, so replay is unchanged.
//
// Only answers that write no guest memory are given this way: a failure,
// or access(F_OK) of a file that is there. A link's target goes through
// the kernel, which alone can tell a read-only buffer (EFAULT) from a
// writable one; so does a permission check, which depends on the guest's
// credentials.

// queryHost is what the recorder asks the host about paths.
type queryHost interface {
	// Readlink reads the symbolic link path names for thread tid,
	// relative to its descriptor dirfd (AT_FDCWD: its working directory):
	// the target, the guest's detcore.Errno, or detcore.ErrNotEmulated.
	Readlink(tid, dirfd int, path string) (string, error)
	// PathExists says whether path names a file for thread tid: nil, the
	// guest's detcore.Errno, or detcore.ErrNotEmulated.
	PathExists(tid, dirfd int, path string, nofollow bool) error
}

// Flags of faccessat2 (<linux/fcntl.h>).
const (
	atSymlinkNofollow = 0x100
	atEaccess         = 0x200
)

// answer returns the result of query c when the host can tell it without
// the call running and the answer writes no guest memory.
func (r *Recorder) answer(c *detcore.Call) (int64, bool) {
	dirfd, path, mode, flags := abi.AT_FDCWD, c.Args[0], c.Args[1], uint64(0)
	switch c.Nr {
	case abi.SYS_READLINK:
		mode = c.Args[2] // the buffer's size
	case abi.SYS_READLINKAT:
		dirfd, path, mode = int(int32(c.Args[0])), c.Args[1], c.Args[3]
	case abi.SYS_ACCESS:
	case abi.SYS_FACCESSAT:
		dirfd, path, mode = int(int32(c.Args[0])), c.Args[1], c.Args[2]
	case abi.SYS_FACCESSAT2:
		dirfd, path, mode, flags = int(int32(c.Args[0])), c.Args[1], c.Args[2], c.Args[3]
	default:
		return 0, false
	}
	link := c.Nr == abi.SYS_READLINK || c.Nr == abi.SYS_READLINKAT
	switch {
	case link && int32(mode) <= 0, !link && mode&^7 != 0, flags&^(atSymlinkNofollow|atEaccess) != 0:
		return 0, false // EINVAL, which the kernel tells first
	}
	p, err := r.host.ReadString(c.Tid, path, abi.MaxPath)
	if err != nil {
		return 0, false
	}
	if link {
		_, err = r.host.Readlink(c.Tid, dirfd, p)
		if err == nil {
			return 0, false // the target goes through the kernel
		}
	} else {
		err = r.host.PathExists(c.Tid, dirfd, p, flags&atSymlinkNofollow != 0)
		if err == nil {
			return 0, mode == 0 // F_OK; a permission check is the kernel's
		}
	}
	var en detcore.Errno
	if !errors.As(err, &en) {
		return 0, false
	}
	return -int64(en), true
}

// answered emulates query c with the host's answer, if it has one, and
// keeps it as the call's exit would have.
func (r *Recorder) answered(c *detcore.Call) (detcore.Outcome, bool) {
	res, ok := r.answer(c)
	if !ok {
		return detcore.Outcome{}, false
	}
	r.append(&trace.Event{Kind: trace.KindSyscall, External: true, Tid: int32(c.Vtid), Sysno: int32(c.Nr), Result: res})
	return detcore.Outcome{Emulate: true, Result: res}, true
}
