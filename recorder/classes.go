package recorder

import (
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/trace"
)

// class says what the recorder must keep of a syscall that runs natively.
type class int

const (
	clNone class = iota
	// clRead reads data: kept (result and bytes) when the descriptor is
	// external or hermit's stdio.
	clRead
	// clSend writes data: its result is kept when the descriptor is an
	// external one other than hermit's stdio (which replay writes for real).
	clSend
	// clSocket queries or changes a socket: kept when it is external.
	clSocket
	// clIoctl: kept when the descriptor is external or hermit's stdio.
	clIoctl
	// clWait (poll, select, epoll_wait): always kept, since replay cannot
	// ask the kernel about descriptors that are not really there.
	clWait
	// clQuery asks about a path or filesystem: always kept.
	clQuery
	// clChange changes the filesystem: replay runs it on the rebuilt root
	// and forces the recorded result.
	clChange
	// clOpen opens a path: the file is captured the first time.
	clOpen
	// clChdir enters a directory, which the rebuilt root must have.
	clChdir
	// clAccept accepts a connection from outside: replay makes a socket
	// in its place (the same descriptor number) and feeds it the recorded
	// address.
	clAccept
	// clMmap maps a file where the kernel chooses, which depends on the
	// filesystem (huge-page alignment): replay maps it at the recorded
	// address.
	clMmap
	// clRemap is an mremap that may move a mapping: where the kernel
	// moves a file mapping depends on the filesystem, as for clMmap, so
	// replay moves it to the recorded address.
	clRemap
	// clSpecial: what to keep depends on the arguments (special.go).
	clSpecial
	// clSplice moves data between two descriptors in the kernel: kept
	// when one end is external (splice.go).
	clSplice
	// clCopy copies between two files in the kernel (copy_file_range):
	// its result is kept, as the kernel may refuse it in replay's root
	// and not in the recording's, or the reverse (files on two
	// filesystems: EXDEV), and replay copies as many bytes with sendfile,
	// which any two files allow.
	clCopy
	// clGroup asks for a process group or session (getpgrp, getpgid,
	// getsid): kept, as a replay's guest is in a process group of its
	// own (ptrace.Options.OwnGroup), whose leader it sees (1), where a
	// recording's is in hermit's, whose leader it does not (0).
	clGroup
)

var classes = map[int]class{
	abi.SYS_READ: clRead, abi.SYS_READV: clRead, abi.SYS_PREAD64: clRead, abi.SYS_PREADV: clRead,
	abi.SYS_PREADV2: clRead, abi.SYS_RECVFROM: clRead, abi.SYS_RECVMSG: clRead, abi.SYS_RECVMMSG: clRead,

	abi.SYS_WRITE: clSend, abi.SYS_WRITEV: clSend, abi.SYS_SENDTO: clSend, abi.SYS_SENDMSG: clSend,
	abi.SYS_SENDMMSG: clSend, abi.SYS_PWRITE64: clSend,

	abi.SYS_CONNECT: clSocket, abi.SYS_GETSOCKNAME: clSocket, abi.SYS_GETPEERNAME: clSocket,
	abi.SYS_GETSOCKOPT: clSocket, abi.SYS_SHUTDOWN: clSocket, abi.SYS_BIND: clSocket, abi.SYS_LISTEN: clSocket,
	abi.SYS_SETSOCKOPT: clSocket,

	abi.SYS_IOCTL: clIoctl,

	abi.SYS_POLL: clWait, abi.SYS_PPOLL: clWait, abi.SYS_SELECT: clWait, abi.SYS_PSELECT6: clWait,
	abi.SYS_EPOLL_WAIT: clWait, abi.SYS_EPOLL_PWAIT: clWait, abi.SYS_EPOLL_PWAIT2: clWait,

	abi.SYS_READLINK: clQuery, abi.SYS_READLINKAT: clQuery, abi.SYS_ACCESS: clQuery,
	abi.SYS_FACCESSAT: clQuery, abi.SYS_FACCESSAT2: clQuery, abi.SYS_STATFS: clQuery, abi.SYS_FSTATFS: clQuery,
	abi.SYS_GETXATTR: clQuery, abi.SYS_LGETXATTR: clQuery, abi.SYS_FGETXATTR: clQuery,
	abi.SYS_LISTXATTR: clQuery, abi.SYS_LLISTXATTR: clQuery, abi.SYS_FLISTXATTR: clQuery,

	abi.SYS_MKDIR: clChange, abi.SYS_MKDIRAT: clChange, abi.SYS_RMDIR: clChange, abi.SYS_UNLINK: clChange,
	abi.SYS_UNLINKAT: clChange, abi.SYS_RENAME: clChange, abi.SYS_RENAMEAT: clChange, abi.SYS_RENAMEAT2: clChange,
	abi.SYS_LINK: clChange, abi.SYS_LINKAT: clChange, abi.SYS_SYMLINK: clChange, abi.SYS_SYMLINKAT: clChange,
	abi.SYS_CHMOD: clChange, abi.SYS_FCHMODAT: clChange, abi.SYS_CHOWN: clChange, abi.SYS_FCHOWNAT: clChange,
	abi.SYS_LCHOWN: clChange, abi.SYS_TRUNCATE: clChange,
	abi.SYS_UTIMENSAT: clChange, abi.SYS_UTIME: clChange, abi.SYS_UTIMES: clChange, abi.SYS_FUTIMESAT: clChange,

	abi.SYS_OPEN: clOpen, abi.SYS_OPENAT: clOpen, abi.SYS_OPENAT2: clOpen, abi.SYS_CREAT: clOpen,

	abi.SYS_CHDIR: clChdir,

	abi.SYS_MMAP: clMmap, abi.SYS_MREMAP: clRemap,

	abi.SYS_PRCTL: clSpecial, abi.SYS_CAPGET: clSpecial, abi.SYS_CAPSET: clSpecial, abi.SYS_FCNTL: clSpecial,
	abi.SYS_MOUNT: clSpecial, abi.SYS_UMOUNT2: clSpecial, abi.SYS_MOUNT_SETATTR: clSpecial,
	abi.SYS_MOVE_MOUNT: clSpecial, abi.SYS_FSOPEN: clSpecial, abi.SYS_OPEN_TREE: clSpecial,

	abi.SYS_ACCEPT: clAccept, abi.SYS_ACCEPT4: clAccept,

	abi.SYS_SPLICE: clSplice, abi.SYS_TEE: clSplice, abi.SYS_SENDFILE: clSplice,

	abi.SYS_COPY_FILE_RANGE: clCopy,

	abi.SYS_GETPGRP: clGroup, abi.SYS_GETPGID: clGroup, abi.SYS_GETSID: clGroup,
}

// Syscalls lists the syscalls that recording and replay intercept in
// addition to the engine's (detcore.InterceptedSyscalls).
func Syscalls() []int {
	nrs := make([]int, 0, len(classes))
	for nr := range classes {
		nrs = append(nrs, nr)
	}
	return nrs
}

// Restarted reports whether a raw syscall result is one of the kernel's
// restart codes (ERESTARTSYS and friends), seen at the exit of a call a
// signal interrupted. Replay runs such calls natively: only the kernel can
// restart them.
func Restarted(res int64) bool { return res <= -512 && res >= -516 }

// changesFile are the clChange calls that change an existing file's
// owner, mode, size or times: the file is captured as it was (one the
// guest never opens, Java's preferences' mod file that it only stats and
// touches, would not be in a replay's root, and the call would fail
// there, and what the engine asks after it with it).
var changesFile = map[int]bool{
	abi.SYS_CHMOD: true, abi.SYS_FCHMODAT: true, abi.SYS_CHOWN: true, abi.SYS_FCHOWNAT: true, abi.SYS_LCHOWN: true,
	abi.SYS_TRUNCATE: true, abi.SYS_UTIMENSAT: true, abi.SYS_UTIME: true, abi.SYS_UTIMES: true, abi.SYS_FUTIMESAT: true,
}

// pathArg returns the (dirfd, path) argument positions of a path syscall:
// dirfd -1 means the path is relative to the working directory.
func pathArg(nr int) (dirfd, path int) {
	switch nr {
	case abi.SYS_OPENAT, abi.SYS_OPENAT2, abi.SYS_MKDIRAT, abi.SYS_UNLINKAT, abi.SYS_FCHMODAT, abi.SYS_FCHOWNAT,
		abi.SYS_RENAMEAT, abi.SYS_RENAMEAT2, abi.SYS_LINKAT, abi.SYS_UTIMENSAT, abi.SYS_FUTIMESAT:
		return 0, 1
	case abi.SYS_SYMLINKAT:
		return 1, 2
	case abi.SYS_SYMLINK:
		return -1, 1
	}
	return -1, 0
}

// raised finds the job-control signal (SIGTTOU, SIGTTIN) the kernel sent
// host thread tid's process group as an external call on a terminal was
// interrupted, and records it as the call's one output at address 0:
// replay has no terminal to send it, so it sends it itself.
func (r *Recorder) raised(tid int) []trace.MemWrite {
	_, shared, _, err := r.host.Signals(tid)
	if err != nil {
		return nil
	}
	for _, sig := range []int{abi.SIGTTOU, abi.SIGTTIN} {
		if shared&(1<<(sig-1)) != 0 {
			return []trace.MemWrite{{Addr: 0, Data: []byte{byte(sig)}}}
		}
	}
	return nil
}

// RaisedSignal returns the signal raised records for a restarted call,
// or 0.
func RaisedSignal(mem []trace.MemWrite) int {
	if len(mem) == 1 && mem[0].Addr == 0 && len(mem[0].Data) == 1 {
		return int(mem[0].Data[0])
	}
	return 0
}
