package strace

import (
	"strconv"
	"strings"
)

// flag names one bit (or several bits, all of which must be set) of a
// flag word. Tables list multi-bit names before their parts.
type flag struct {
	v    uint64
	name string
}

// flags formats v as NAME|NAME|0xrest, or zero when v is 0.
func flags(v uint64, tab []flag, zero string) string {
	if v == 0 {
		return zero
	}
	var parts []string
	for _, e := range tab {
		if e.v != 0 && v&e.v == e.v {
			parts = append(parts, e.name)
			v &^= e.v
		}
	}
	if v != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(v, 16))
	}
	return strings.Join(parts, "|")
}

// enum formats v by its name in tab, or in decimal.
func enum(v int64, tab map[int64]string) string {
	if n, ok := tab[v]; ok {
		return n
	}
	return strconv.FormatInt(v, 10)
}

// enumHex formats v by its name in tab, or in hex.
func enumHex(v uint64, tab map[int64]string) string {
	if n, ok := tab[int64(v)]; ok {
		return n
	}
	return hex(v)
}

// Open flags from <asm-generic/fcntl.h> (octal, as there).
var openFlags = []flag{
	{0o20200000, "O_TMPFILE"},
	{0o4010000, "O_SYNC"},
	{0o100, "O_CREAT"},
	{0o200, "O_EXCL"},
	{0o400, "O_NOCTTY"},
	{0o1000, "O_TRUNC"},
	{0o2000, "O_APPEND"},
	{0o4000, "O_NONBLOCK"},
	{0o10000, "O_DSYNC"},
	{0o20000, "O_ASYNC"},
	{0o40000, "O_DIRECT"},
	{0o100000, "O_LARGEFILE"},
	{0o200000, "O_DIRECTORY"},
	{0o400000, "O_NOFOLLOW"},
	{0o1000000, "O_NOATIME"},
	{0o2000000, "O_CLOEXEC"},
	{0o10000000, "O_PATH"},
}

const (
	oAccMode = 0o3
	oCreat   = 0o100
	oTmpfile = 0o20000000 // __O_TMPFILE
)

var accModes = [...]string{"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"}

// openFlagsString formats open(2) flags: the access mode, then the rest.
func openFlagsString(v uint64) string {
	s := accModes[v&oAccMode]
	if rest := v &^ oAccMode; rest != 0 {
		s += "|" + flags(rest, openFlags, "")
	}
	return s
}

// File type and permission bits from <linux/stat.h>.
var fileTypes = map[int64]string{
	0o140000: "S_IFSOCK",
	0o120000: "S_IFLNK",
	0o100000: "S_IFREG",
	0o060000: "S_IFBLK",
	0o040000: "S_IFDIR",
	0o020000: "S_IFCHR",
	0o010000: "S_IFIFO",
}

var modeBits = []flag{{0o4000, "S_ISUID"}, {0o2000, "S_ISGID"}, {0o1000, "S_ISVTX"}}

// modeString formats a mode: type and set-id bits by name, then the
// permissions in octal ("S_IFREG|0644", "0755", "000").
func modeString(v uint64, withType bool) string {
	var parts []string
	if withType {
		if t := v & 0o170000; t != 0 {
			if n, ok := fileTypes[int64(t)]; ok {
				parts = append(parts, n)
			} else {
				parts = append(parts, "0"+strconv.FormatUint(t, 8))
			}
			v &^= 0o170000
		}
	}
	if s := v & 0o7000; s != 0 {
		parts = append(parts, flags(s, modeBits, ""))
	}
	perm := v &^ 0o7000
	if withType {
		perm &^= 0o170000
	}
	// As printf's %#03o: a leading 0, at least three digits.
	p := "0" + strconv.FormatUint(perm, 8)
	for len(p) < 3 {
		p = "0" + p
	}
	return strings.Join(append(parts, p), "|")
}

// Memory protection and mapping flags from <asm-generic/mman-common.h>,
// <linux/mman.h> and <asm/mman.h>.
var mmapProt = []flag{
	{0x1, "PROT_READ"},
	{0x2, "PROT_WRITE"},
	{0x4, "PROT_EXEC"},
	{0x8, "PROT_SEM"},
	{0x01000000, "PROT_GROWSDOWN"},
	{0x02000000, "PROT_GROWSUP"},
}

var mmapTypes = [16]string{0: "0", 1: "MAP_SHARED", 2: "MAP_PRIVATE", 3: "MAP_SHARED_VALIDATE"}

var mmapFlags = []flag{
	{0x10, "MAP_FIXED"},
	{0x20, "MAP_ANONYMOUS"},
	{0x40, "MAP_32BIT"},
	{0x100, "MAP_GROWSDOWN"},
	{0x800, "MAP_DENYWRITE"},
	{0x1000, "MAP_EXECUTABLE"},
	{0x2000, "MAP_LOCKED"},
	{0x4000, "MAP_NORESERVE"},
	{0x8000, "MAP_POPULATE"},
	{0x10000, "MAP_NONBLOCK"},
	{0x20000, "MAP_STACK"},
	{0x40000, "MAP_HUGETLB"},
	{0x80000, "MAP_SYNC"},
	{0x100000, "MAP_FIXED_NOREPLACE"},
	{0x4000000, "MAP_UNINITIALIZED"},
}

// mmapFlagsString formats mmap flags: the mapping type, then the rest,
// then a huge page size (MAP_HUGE_SHIFT 26) as MAP_HUGE_2MB.
func mmapFlagsString(v uint64) string {
	t := mmapTypes[v&0xf]
	if t == "" {
		t = hex(v & 0xf)
	}
	rest := v &^ 0xf
	var huge uint64
	if rest&0x40000 != 0 {
		// With MAP_HUGETLB, bits 26-31 are a page size (and bit 26 is
		// not MAP_UNINITIALIZED).
		huge = rest >> 26 & 0x3f
		rest &^= 0x3f << 26
	}
	s := t
	if rest != 0 {
		s += "|" + flags(rest, mmapFlags, "")
	}
	if huge != 0 {
		s += "|" + hugeSize(huge)
	}
	return s
}

func hugeSize(shift uint64) string {
	switch {
	case shift >= 30 && shift < 40:
		return "MAP_HUGE_" + utoa(1<<(shift-30)) + "GB"
	case shift >= 20:
		return "MAP_HUGE_" + utoa(1<<(shift-20)) + "MB"
	case shift >= 10:
		return "MAP_HUGE_" + utoa(1<<(shift-10)) + "KB"
	}
	return strconv.FormatUint(shift, 10) + "<<MAP_HUGE_SHIFT"
}

// madvise advice and mremap, msync and mlock flags from
// <asm-generic/mman-common.h> and <linux/mman.h>.
var madvise = map[int64]string{
	0: "MADV_NORMAL", 1: "MADV_RANDOM", 2: "MADV_SEQUENTIAL", 3: "MADV_WILLNEED",
	4: "MADV_DONTNEED", 8: "MADV_FREE", 9: "MADV_REMOVE", 10: "MADV_DONTFORK",
	11: "MADV_DOFORK", 12: "MADV_MERGEABLE", 13: "MADV_UNMERGEABLE",
	14: "MADV_HUGEPAGE", 15: "MADV_NOHUGEPAGE", 16: "MADV_DONTDUMP",
	17: "MADV_DODUMP", 18: "MADV_WIPEONFORK", 19: "MADV_KEEPONFORK",
	20: "MADV_COLD", 21: "MADV_PAGEOUT", 22: "MADV_POPULATE_READ",
	23: "MADV_POPULATE_WRITE", 24: "MADV_DONTNEED_LOCKED", 25: "MADV_COLLAPSE",
	100: "MADV_HWPOISON", 101: "MADV_SOFT_OFFLINE",
	102: "MADV_GUARD_INSTALL", 103: "MADV_GUARD_REMOVE",
}

var mremapFlags = []flag{{1, "MREMAP_MAYMOVE"}, {2, "MREMAP_FIXED"}, {4, "MREMAP_DONTUNMAP"}}

var msyncFlags = []flag{{1, "MS_ASYNC"}, {2, "MS_INVALIDATE"}, {4, "MS_SYNC"}}

var mlockallFlags = []flag{{1, "MCL_CURRENT"}, {2, "MCL_FUTURE"}, {4, "MCL_ONFAULT"}}

var mlock2Flags = []flag{{1, "MLOCK_ONFAULT"}}

// Clone flags from <linux/sched.h>.
var cloneFlags = []flag{
	{0x00000080, "CLONE_NEWTIME"},
	{0x00000100, "CLONE_VM"},
	{0x00000200, "CLONE_FS"},
	{0x00000400, "CLONE_FILES"},
	{0x00000800, "CLONE_SIGHAND"},
	{0x00001000, "CLONE_PIDFD"},
	{0x00002000, "CLONE_PTRACE"},
	{0x00004000, "CLONE_VFORK"},
	{0x00008000, "CLONE_PARENT"},
	{0x00010000, "CLONE_THREAD"},
	{0x00020000, "CLONE_NEWNS"},
	{0x00040000, "CLONE_SYSVSEM"},
	{0x00080000, "CLONE_SETTLS"},
	{0x00100000, "CLONE_PARENT_SETTID"},
	{0x00200000, "CLONE_CHILD_CLEARTID"},
	{0x00400000, "CLONE_DETACHED"},
	{0x00800000, "CLONE_UNTRACED"},
	{0x01000000, "CLONE_CHILD_SETTID"},
	{0x02000000, "CLONE_NEWCGROUP"},
	{0x04000000, "CLONE_NEWUTS"},
	{0x08000000, "CLONE_NEWIPC"},
	{0x10000000, "CLONE_NEWUSER"},
	{0x20000000, "CLONE_NEWPID"},
	{0x40000000, "CLONE_NEWNET"},
	{0x80000000, "CLONE_IO"},
	{0x100000000, "CLONE_CLEAR_SIGHAND"},
	{0x200000000, "CLONE_INTO_CGROUP"},
}

// cloneFlagsSig formats clone(2)'s flags: the low byte is the exit signal.
func cloneFlagsSig(v uint64) string {
	sig := v & 0xff
	rest := v &^ 0xff
	var parts []string
	if rest != 0 {
		parts = append(parts, flags(rest, cloneFlags, ""))
	}
	if sig != 0 || rest == 0 {
		parts = append(parts, sigArg(sig))
	}
	return strings.Join(parts, "|")
}

// Futex operations from <linux/futex.h>.
var futexCmds = [...]string{
	"FUTEX_WAIT", "FUTEX_WAKE", "FUTEX_FD", "FUTEX_REQUEUE", "FUTEX_CMP_REQUEUE",
	"FUTEX_WAKE_OP", "FUTEX_LOCK_PI", "FUTEX_UNLOCK_PI", "FUTEX_TRYLOCK_PI",
	"FUTEX_WAIT_BITSET", "FUTEX_WAKE_BITSET", "FUTEX_WAIT_REQUEUE_PI",
	"FUTEX_CMP_REQUEUE_PI", "FUTEX_LOCK_PI2",
}

const (
	futexPrivate   = 128
	futexClockRT   = 256
	futexCmdMask   = 0x7f
	futexBitsetAny = 0xffffffff
)

func futexOpString(op uint64) string {
	op32 := op & 0xffffffff
	cmd := op32 & futexCmdMask
	if cmd >= uint64(len(futexCmds)) || op32&^(futexCmdMask|futexPrivate|futexClockRT) != 0 || op != op32 {
		return hex(op)
	}
	s := futexCmds[cmd]
	if op32&futexPrivate != 0 {
		s += "_PRIVATE"
	}
	if op32&futexClockRT != 0 {
		s += "|FUTEX_CLOCK_REALTIME"
	}
	return s
}

// FUTEX_OP encoding for FUTEX_WAKE_OP from <linux/futex.h>.
var futexWakeOps = [...]string{"FUTEX_OP_SET", "FUTEX_OP_ADD", "FUTEX_OP_OR", "FUTEX_OP_ANDN", "FUTEX_OP_XOR"}
var futexWakeCmps = [...]string{"FUTEX_OP_CMP_EQ", "FUTEX_OP_CMP_NE", "FUTEX_OP_CMP_LT", "FUTEX_OP_CMP_LE", "FUTEX_OP_CMP_GT", "FUTEX_OP_CMP_GE"}

func futexWakeOpString(v uint64) string {
	v &= 0xffffffff
	op := v >> 28 & 7
	shift := v>>28&8 != 0
	cmp := v >> 24 & 15
	oparg := v >> 12 & 0xfff
	cmparg := v & 0xfff
	opName := "0x" + strconv.FormatUint(op, 16)
	if op < uint64(len(futexWakeOps)) {
		opName = futexWakeOps[op]
	}
	if shift {
		opName = "FUTEX_OP_OPARG_SHIFT|" + opName
	}
	cmpName := "0x" + strconv.FormatUint(cmp, 16)
	if cmp < uint64(len(futexWakeCmps)) {
		cmpName = futexWakeCmps[cmp]
	}
	return "{" + opName + ", " + utoa(oparg) + ", " + cmpName + ", " + utoa(cmparg) + "}"
}

// Seek whences from <linux/fs.h>.
var whences = map[int64]string{0: "SEEK_SET", 1: "SEEK_CUR", 2: "SEEK_END", 3: "SEEK_DATA", 4: "SEEK_HOLE"}

// *at flags from <linux/fcntl.h>.
var atFlags = []flag{
	{0x100, "AT_SYMLINK_NOFOLLOW"},
	{0x200, "AT_REMOVEDIR"},
	{0x400, "AT_SYMLINK_FOLLOW"},
	{0x800, "AT_NO_AUTOMOUNT"},
	{0x1000, "AT_EMPTY_PATH"},
	{0x2000, "AT_STATX_FORCE_SYNC"},
	{0x4000, "AT_STATX_DONT_SYNC"},
	{0x8000, "AT_RECURSIVE"},
}

// faccessat2's flags: 0x200 is AT_EACCESS there.
var accessAtFlags = []flag{
	{0x100, "AT_SYMLINK_NOFOLLOW"},
	{0x200, "AT_EACCESS"},
	{0x1000, "AT_EMPTY_PATH"},
}

// statxFlagsString formats statx's flags, naming the default sync type.
func statxFlagsString(v uint64) string {
	s := flags(v, atFlags, "")
	if v&0x6000 == 0 {
		if s == "" {
			return "AT_STATX_SYNC_AS_STAT"
		}
		return "AT_STATX_SYNC_AS_STAT|" + s
	}
	return s
}

// statx masks from <linux/stat.h>.
var statxMask = []flag{
	{0xfff, "STATX_ALL"},
	{0x7ff, "STATX_BASIC_STATS"},
	{0x1, "STATX_TYPE"},
	{0x2, "STATX_MODE"},
	{0x4, "STATX_NLINK"},
	{0x8, "STATX_UID"},
	{0x10, "STATX_GID"},
	{0x20, "STATX_ATIME"},
	{0x40, "STATX_MTIME"},
	{0x80, "STATX_CTIME"},
	{0x100, "STATX_INO"},
	{0x200, "STATX_SIZE"},
	{0x400, "STATX_BLOCKS"},
	{0x800, "STATX_BTIME"},
	{0x1000, "STATX_MNT_ID"},
	{0x2000, "STATX_DIOALIGN"},
	{0x4000, "STATX_MNT_ID_UNIQUE"},
	{0x8000, "STATX_SUBVOL"},
	{0x10000, "STATX_WRITE_ATOMIC"},
}

// access(2) modes from <unistd.h>.
var accessModes = []flag{{4, "R_OK"}, {2, "W_OK"}, {1, "X_OK"}}

// renameat2 flags from <linux/fs.h>.
var renameFlags = []flag{{1, "RENAME_NOREPLACE"}, {2, "RENAME_EXCHANGE"}, {4, "RENAME_WHITEOUT"}}

// flock(2) operations from <asm-generic/fcntl.h>.
var flockOps = []flag{{1, "LOCK_SH"}, {2, "LOCK_EX"}, {4, "LOCK_NB"}, {8, "LOCK_UN"}, {32, "LOCK_MAND"}}

// fcntl commands from <asm-generic/fcntl.h> and <linux/fcntl.h>.
var fcntlCmds = map[int64]string{
	0: "F_DUPFD", 1: "F_GETFD", 2: "F_SETFD", 3: "F_GETFL", 4: "F_SETFL",
	5: "F_GETLK", 6: "F_SETLK", 7: "F_SETLKW", 8: "F_SETOWN", 9: "F_GETOWN",
	10: "F_SETSIG", 11: "F_GETSIG", 15: "F_SETOWN_EX", 16: "F_GETOWN_EX",
	17: "F_GETOWNER_UIDS", 36: "F_OFD_GETLK", 37: "F_OFD_SETLK", 38: "F_OFD_SETLKW",
	1024: "F_SETLEASE", 1025: "F_GETLEASE", 1026: "F_NOTIFY", 1030: "F_DUPFD_CLOEXEC",
	1031: "F_SETPIPE_SZ", 1032: "F_GETPIPE_SZ", 1033: "F_ADD_SEALS", 1034: "F_GET_SEALS",
	1035: "F_GET_RW_HINT", 1036: "F_SET_RW_HINT", 1037: "F_GET_FILE_RW_HINT",
	1038: "F_SET_FILE_RW_HINT",
}

// Descriptor flags, seals, lock types and dnotify flags from
// <asm-generic/fcntl.h> and <linux/fcntl.h>.
var fdFlags = []flag{{1, "FD_CLOEXEC"}}

var sealFlags = []flag{
	{1, "F_SEAL_SEAL"}, {2, "F_SEAL_SHRINK"}, {4, "F_SEAL_GROW"},
	{8, "F_SEAL_WRITE"}, {16, "F_SEAL_FUTURE_WRITE"}, {32, "F_SEAL_EXEC"},
}

var lockTypes = map[int64]string{0: "F_RDLCK", 1: "F_WRLCK", 2: "F_UNLCK"}

var leaseTypes = map[int64]string{0: "F_RDLCK", 1: "F_WRLCK", 2: "F_UNLCK"}

var notifyFlags = []flag{
	{1, "DN_ACCESS"}, {2, "DN_MODIFY"}, {4, "DN_CREATE"}, {8, "DN_DELETE"},
	{16, "DN_RENAME"}, {32, "DN_ATTRIB"}, {0x80000000, "DN_MULTISHOT"},
}

// Descriptor-creating flags: eventfd, timerfd, signalfd, inotify, epoll
// and socket flags share O_CLOEXEC and O_NONBLOCK's values
// (<linux/eventfd.h>, <linux/timerfd.h>, <linux/signalfd.h>,
// <linux/inotify.h>, <linux/eventpoll.h>, <linux/net.h>).
var (
	efdFlags     = []flag{{1, "EFD_SEMAPHORE"}, {0o4000, "EFD_NONBLOCK"}, {0o2000000, "EFD_CLOEXEC"}}
	tfdFlags     = []flag{{0o4000, "TFD_NONBLOCK"}, {0o2000000, "TFD_CLOEXEC"}}
	tfdSetFlags  = []flag{{1, "TFD_TIMER_ABSTIME"}, {2, "TFD_TIMER_CANCEL_ON_SET"}}
	sfdFlags     = []flag{{0o4000, "SFD_NONBLOCK"}, {0o2000000, "SFD_CLOEXEC"}}
	inFlags      = []flag{{0o4000, "IN_NONBLOCK"}, {0o2000000, "IN_CLOEXEC"}}
	epollFlags   = []flag{{0o2000000, "EPOLL_CLOEXEC"}}
	sockFlags    = []flag{{0o4000, "SOCK_NONBLOCK"}, {0o2000000, "SOCK_CLOEXEC"}}
	pidfdFlags   = []flag{{0o4000, "PIDFD_NONBLOCK"}, {8, "PIDFD_THREAD"}}
	memfdFlags   = []flag{{1, "MFD_CLOEXEC"}, {2, "MFD_ALLOW_SEALING"}, {4, "MFD_HUGETLB"}, {8, "MFD_NOEXEC_SEAL"}, {16, "MFD_EXEC"}}
	grndFlags    = []flag{{1, "GRND_NONBLOCK"}, {2, "GRND_RANDOM"}, {4, "GRND_INSECURE"}}
	timerFlags   = []flag{{1, "TIMER_ABSTIME"}}
	xattrFlags   = []flag{{1, "XATTR_CREATE"}, {2, "XATTR_REPLACE"}}
	spliceFlags  = []flag{{1, "SPLICE_F_MOVE"}, {2, "SPLICE_F_NONBLOCK"}, {4, "SPLICE_F_MORE"}, {8, "SPLICE_F_GIFT"}}
	closeRange   = []flag{{2, "CLOSE_RANGE_UNSHARE"}, {4, "CLOSE_RANGE_CLOEXEC"}}
	umountFlags  = []flag{{1, "MNT_FORCE"}, {2, "MNT_DETACH"}, {4, "MNT_EXPIRE"}, {8, "UMOUNT_NOFOLLOW"}}
	uringEnter   = []flag{{1, "IORING_ENTER_GETEVENTS"}, {2, "IORING_ENTER_SQ_WAKEUP"}, {4, "IORING_ENTER_SQ_WAIT"}, {8, "IORING_ENTER_EXT_ARG"}, {16, "IORING_ENTER_REGISTERED_RING"}}
	fallocModes  = []flag{{1, "FALLOC_FL_KEEP_SIZE"}, {2, "FALLOC_FL_PUNCH_HOLE"}, {4, "FALLOC_FL_NO_HIDE_STALE"}, {8, "FALLOC_FL_COLLAPSE_RANGE"}, {0x10, "FALLOC_FL_ZERO_RANGE"}, {0x20, "FALLOC_FL_INSERT_RANGE"}, {0x40, "FALLOC_FL_UNSHARE_RANGE"}}
	resolveFlags = []flag{{1, "RESOLVE_NO_XDEV"}, {2, "RESOLVE_NO_MAGICLINKS"}, {4, "RESOLVE_NO_SYMLINKS"}, {8, "RESOLVE_BENEATH"}, {0x10, "RESOLVE_IN_ROOT"}, {0x20, "RESOLVE_CACHED"}}
)

// inotify event masks from <linux/inotify.h>.
var inotifyMask = []flag{
	{0x1, "IN_ACCESS"}, {0x2, "IN_MODIFY"}, {0x4, "IN_ATTRIB"},
	{0x8, "IN_CLOSE_WRITE"}, {0x10, "IN_CLOSE_NOWRITE"}, {0x20, "IN_OPEN"},
	{0x40, "IN_MOVED_FROM"}, {0x80, "IN_MOVED_TO"}, {0x100, "IN_CREATE"},
	{0x200, "IN_DELETE"}, {0x400, "IN_DELETE_SELF"}, {0x800, "IN_MOVE_SELF"},
	{0x2000, "IN_UNMOUNT"}, {0x4000, "IN_Q_OVERFLOW"}, {0x8000, "IN_IGNORED"},
	{0x1000000, "IN_ONLYDIR"}, {0x2000000, "IN_DONT_FOLLOW"},
	{0x4000000, "IN_EXCL_UNLINK"}, {0x10000000, "IN_MASK_CREATE"},
	{0x20000000, "IN_MASK_ADD"}, {0x40000000, "IN_ISDIR"}, {0x80000000, "IN_ONESHOT"},
}

// poll and epoll events from <asm-generic/poll.h> and <linux/eventpoll.h>.
var pollEvents = []flag{
	{0x1, "POLLIN"}, {0x2, "POLLPRI"}, {0x4, "POLLOUT"}, {0x8, "POLLERR"},
	{0x10, "POLLHUP"}, {0x20, "POLLNVAL"}, {0x40, "POLLRDNORM"},
	{0x80, "POLLRDBAND"}, {0x100, "POLLWRNORM"}, {0x200, "POLLWRBAND"},
	{0x400, "POLLMSG"}, {0x1000, "POLLREMOVE"}, {0x2000, "POLLRDHUP"},
}

var epollEvents = []flag{
	{0x1, "EPOLLIN"}, {0x2, "EPOLLPRI"}, {0x4, "EPOLLOUT"}, {0x8, "EPOLLERR"},
	{0x10, "EPOLLHUP"}, {0x20, "EPOLLNVAL"}, {0x40, "EPOLLRDNORM"},
	{0x80, "EPOLLRDBAND"}, {0x100, "EPOLLWRNORM"}, {0x200, "EPOLLWRBAND"},
	{0x400, "EPOLLMSG"}, {0x2000, "EPOLLRDHUP"}, {1 << 28, "EPOLLEXCLUSIVE"},
	{1 << 29, "EPOLLWAKEUP"}, {1 << 30, "EPOLLONESHOT"}, {1 << 31, "EPOLLET"},
}

var epollOps = map[int64]string{1: "EPOLL_CTL_ADD", 2: "EPOLL_CTL_DEL", 3: "EPOLL_CTL_MOD"}

// Clocks from <linux/time.h>.
var clocks = map[int64]string{
	0: "CLOCK_REALTIME", 1: "CLOCK_MONOTONIC", 2: "CLOCK_PROCESS_CPUTIME_ID",
	3: "CLOCK_THREAD_CPUTIME_ID", 4: "CLOCK_MONOTONIC_RAW", 5: "CLOCK_REALTIME_COARSE",
	6: "CLOCK_MONOTONIC_COARSE", 7: "CLOCK_BOOTTIME", 8: "CLOCK_REALTIME_ALARM",
	9: "CLOCK_BOOTTIME_ALARM", 11: "CLOCK_TAI",
}

// Interval timers from <linux/time.h>.
var itimers = map[int64]string{0: "ITIMER_REAL", 1: "ITIMER_VIRTUAL", 2: "ITIMER_PROF"}

// Wait options and id types from <linux/wait.h>.
var waitOpts = []flag{
	{1, "WNOHANG"}, {2, "WSTOPPED"}, {4, "WEXITED"}, {8, "WCONTINUED"},
	{0x01000000, "WNOWAIT"}, {0x20000000, "__WNOTHREAD"}, {0x40000000, "__WALL"},
	{0x80000000, "__WCLONE"},
}

// wait4 spells WSTOPPED as WUNTRACED.
var wait4Opts = append([]flag{{2, "WUNTRACED"}}, waitOpts...)

var idTypes = map[int64]string{0: "P_ALL", 1: "P_PID", 2: "P_PGID", 3: "P_PIDFD"}

// Resource limits from <asm-generic/resource.h>.
var rlimits = map[int64]string{
	0: "RLIMIT_CPU", 1: "RLIMIT_FSIZE", 2: "RLIMIT_DATA", 3: "RLIMIT_STACK",
	4: "RLIMIT_CORE", 5: "RLIMIT_RSS", 6: "RLIMIT_NPROC", 7: "RLIMIT_NOFILE",
	8: "RLIMIT_MEMLOCK", 9: "RLIMIT_AS", 10: "RLIMIT_LOCKS", 11: "RLIMIT_SIGPENDING",
	12: "RLIMIT_MSGQUEUE", 13: "RLIMIT_NICE", 14: "RLIMIT_RTPRIO", 15: "RLIMIT_RTTIME",
}

// getrusage's who from <linux/resource.h>.
var rusageWho = map[int64]string{0: "RUSAGE_SELF", -1: "RUSAGE_CHILDREN", 1: "RUSAGE_THREAD"}

// getpriority's which from <linux/resource.h>.
var prioWhich = map[int64]string{0: "PRIO_PROCESS", 1: "PRIO_PGRP", 2: "PRIO_USER"}

// Scheduling policies from <linux/sched.h>.
var schedPolicies = map[int64]string{
	0: "SCHED_OTHER", 1: "SCHED_FIFO", 2: "SCHED_RR", 3: "SCHED_BATCH",
	5: "SCHED_IDLE", 6: "SCHED_DEADLINE", 7: "SCHED_EXT",
}

// membarrier commands from <linux/membarrier.h>.
var membarrierCmds = map[int64]string{
	0: "MEMBARRIER_CMD_QUERY", 1: "MEMBARRIER_CMD_GLOBAL",
	2: "MEMBARRIER_CMD_GLOBAL_EXPEDITED", 4: "MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED",
	8: "MEMBARRIER_CMD_PRIVATE_EXPEDITED", 16: "MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED",
	32:  "MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE",
	64:  "MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE",
	128: "MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ",
	256: "MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ",
	512: "MEMBARRIER_CMD_GET_REGISTRATIONS",
}

// posix_fadvise advice from <linux/fadvise.h>.
var fadvise = map[int64]string{
	0: "POSIX_FADV_NORMAL", 1: "POSIX_FADV_RANDOM", 2: "POSIX_FADV_SEQUENTIAL",
	3: "POSIX_FADV_WILLNEED", 4: "POSIX_FADV_DONTNEED", 5: "POSIX_FADV_NOREUSE",
}

// seccomp operations from <linux/seccomp.h>.
var seccompOps = map[int64]string{
	0: "SECCOMP_SET_MODE_STRICT", 1: "SECCOMP_SET_MODE_FILTER",
	2: "SECCOMP_GET_ACTION_AVAIL", 3: "SECCOMP_GET_NOTIF_SIZES",
}

// Mount flags from <linux/mount.h>.
var mountFlags = []flag{
	{1, "MS_RDONLY"}, {2, "MS_NOSUID"}, {4, "MS_NODEV"}, {8, "MS_NOEXEC"},
	{16, "MS_SYNCHRONOUS"}, {32, "MS_REMOUNT"}, {64, "MS_MANDLOCK"},
	{128, "MS_DIRSYNC"}, {256, "MS_NOSYMFOLLOW"}, {1024, "MS_NOATIME"},
	{2048, "MS_NODIRATIME"}, {4096, "MS_BIND"}, {8192, "MS_MOVE"},
	{16384, "MS_REC"}, {32768, "MS_SILENT"}, {1 << 16, "MS_POSIXACL"},
	{1 << 17, "MS_UNBINDABLE"}, {1 << 18, "MS_PRIVATE"}, {1 << 19, "MS_SLAVE"},
	{1 << 20, "MS_SHARED"}, {1 << 21, "MS_RELATIME"}, {1 << 22, "MS_KERNMOUNT"},
	{1 << 23, "MS_I_VERSION"}, {1 << 24, "MS_STRICTATIME"}, {1 << 25, "MS_LAZYTIME"},
}

// ptrace requests from <linux/ptrace.h> and <asm/ptrace-abi.h>.
var ptraceReqs = map[int64]string{
	0: "PTRACE_TRACEME", 1: "PTRACE_PEEKTEXT", 2: "PTRACE_PEEKDATA", 3: "PTRACE_PEEKUSER",
	4: "PTRACE_POKETEXT", 5: "PTRACE_POKEDATA", 6: "PTRACE_POKEUSER", 7: "PTRACE_CONT",
	8: "PTRACE_KILL", 9: "PTRACE_SINGLESTEP", 12: "PTRACE_GETREGS", 13: "PTRACE_SETREGS",
	14: "PTRACE_GETFPREGS", 15: "PTRACE_SETFPREGS", 16: "PTRACE_ATTACH", 17: "PTRACE_DETACH",
	18: "PTRACE_GETFPXREGS", 19: "PTRACE_SETFPXREGS", 24: "PTRACE_SYSCALL",
	30: "PTRACE_ARCH_PRCTL", 31: "PTRACE_SYSEMU", 32: "PTRACE_SYSEMU_SINGLESTEP",
	0x4200: "PTRACE_SETOPTIONS", 0x4201: "PTRACE_GETEVENTMSG", 0x4202: "PTRACE_GETSIGINFO",
	0x4203: "PTRACE_SETSIGINFO", 0x4204: "PTRACE_GETREGSET", 0x4205: "PTRACE_SETREGSET",
	0x4206: "PTRACE_SEIZE", 0x4207: "PTRACE_INTERRUPT", 0x4208: "PTRACE_LISTEN",
	0x4209: "PTRACE_PEEKSIGINFO", 0x420a: "PTRACE_GETSIGMASK", 0x420b: "PTRACE_SETSIGMASK",
	0x420c: "PTRACE_SECCOMP_GET_FILTER", 0x420d: "PTRACE_SECCOMP_GET_METADATA",
	0x420e: "PTRACE_GET_SYSCALL_INFO", 0x420f: "PTRACE_GET_RSEQ_CONFIGURATION",
	0x4210: "PTRACE_SET_SYSCALL_USER_DISPATCH_CONFIG",
	0x4211: "PTRACE_GET_SYSCALL_USER_DISPATCH_CONFIG",
}
