package strace

import (
	"strconv"
	"strings"
)

// Calls whose later arguments depend on an earlier one.

// fcntlArgs formats fcntl(fd, cmd, arg): arg's meaning, and whether it is
// shown at all, depends on cmd.
func fcntlArgs(f *fmtr) []string {
	fd, cmd, arg := f.a(0), int64(int32(f.a(1))), f.a(2)
	out := []string{itoa(int64(int32(fd))), enum(cmd, fcntlCmds)}
	switch cmd {
	case 1, 3, 9, 11, 1025, 1032, 1034, 1035, 1037: // F_GET*: no argument
	case 0, 1030, 8, 10, 1031: // F_DUPFD, F_DUPFD_CLOEXEC, F_SETOWN, F_SETSIG, F_SETPIPE_SZ
		out = append(out, itoa(int64(int32(arg))))
	case 2: // F_SETFD
		out = append(out, flags(arg, fdFlags, "0"))
	case 4: // F_SETFL
		out = append(out, openFlagsString(arg&0xffffffff))
	case 5, 6, 7, 36, 37, 38: // F_GETLK, F_SETLK, F_SETLKW, F_OFD_*
		out = append(out, f.nullOr(arg, f.flock))
	case 1024: // F_SETLEASE
		out = append(out, enum(int64(int32(arg)), leaseTypes))
	case 1026: // F_NOTIFY
		out = append(out, flags(arg, notifyFlags, "0"))
	case 1033: // F_ADD_SEALS
		out = append(out, flags(arg, sealFlags, "0"))
	default:
		out = append(out, hex(arg))
	}
	return out
}

// fcntlResult adds the decoded flags to F_GETFD's and F_GETFL's results:
// "0x1 (flags FD_CLOEXEC)".
func fcntlResult(c Call) string {
	r := uint64(c.Result)
	switch int32(c.Args[1]) {
	case 1:
		return hex(r) + " (flags " + flags(r, fdFlags, "0") + ")"
	case 3:
		return hex(r) + " (flags " + openFlagsString(r&0xffffffff) + ")"
	case 1034:
		return hex(r) + " (seals " + flags(r, sealFlags, "0") + ")"
	case 1025:
		return enum(c.Result, leaseTypes)
	}
	return itoa(c.Result)
}

// ioctl requests from <asm-generic/ioctls.h>, <linux/fs.h> and
// <linux/sockios.h>.
var ioctlReqs = map[int64]string{
	0x5401: "TCGETS", 0x5402: "TCSETS", 0x5403: "TCSETSW", 0x5404: "TCSETSF",
	0x5405: "TCGETA", 0x5406: "TCSETA", 0x5407: "TCSETAW", 0x5408: "TCSETAF",
	0x5409: "TCSBRK", 0x540A: "TCXONC", 0x540B: "TCFLSH", 0x540C: "TIOCEXCL",
	0x540D: "TIOCNXCL", 0x540E: "TIOCSCTTY", 0x540F: "TIOCGPGRP", 0x5410: "TIOCSPGRP",
	0x5411: "TIOCOUTQ", 0x5412: "TIOCSTI", 0x5413: "TIOCGWINSZ", 0x5414: "TIOCSWINSZ",
	0x5415: "TIOCMGET", 0x5416: "TIOCMBIS", 0x5417: "TIOCMBIC", 0x5418: "TIOCMSET",
	0x541B: "FIONREAD", 0x541C: "TIOCLINUX", 0x541D: "TIOCCONS", 0x5420: "TIOCPKT",
	0x5421: "FIONBIO", 0x5422: "TIOCNOTTY", 0x5423: "TIOCSETD", 0x5424: "TIOCGETD",
	0x5425: "TCSBRKP", 0x5427: "TIOCSBRK", 0x5428: "TIOCCBRK", 0x5429: "TIOCGSID",
	0x802c542a: "TCGETS2", 0x402c542b: "TCSETS2", 0x402c542c: "TCSETSW2",
	0x402c542d: "TCSETSF2", 0x80045430: "TIOCGPTN", 0x40045431: "TIOCSPTLCK",
	0x80045432: "TIOCGDEV", 0x40045436: "TIOCSIG", 0x5437: "TIOCVHANGUP",
	0x80045438: "TIOCGPKT", 0x80045439: "TIOCGPTLCK", 0x80045440: "TIOCGEXCL",
	0x5441: "TIOCGPTPEER", 0x5450: "FIONCLEX", 0x5451: "FIOCLEX", 0x5452: "FIOASYNC",
	0x5460:     "FIOQSIZE",
	0x40049409: "FICLONE", 0x4020940d: "FICLONERANGE", 0x80086601: "FS_IOC_GETFLAGS",
	0x40086602: "FS_IOC_SETFLAGS", 0x80081272: "BLKGETSIZE64", 0x1260: "BLKGETSIZE",
	0x8912: "SIOCGIFCONF", 0x8913: "SIOCGIFFLAGS", 0x8914: "SIOCSIFFLAGS",
	0x8927: "SIOCGIFHWADDR", 0x8933: "SIOCGIFINDEX", 0x8921: "SIOCGIFMTU",
	0x8915: "SIOCGIFADDR", 0x8910: "SIOCGIFNAME",
}

// ioctlReqString names an ioctl request, or decodes its _IOC fields
// (<asm-generic/ioctl.h>).
func ioctlReqString(req uint64) string {
	req &= 0xffffffff
	if n, ok := ioctlReqs[int64(req)]; ok {
		return n
	}
	dir := req >> 30
	if dir == 0 {
		return hex(req)
	}
	dirs := [...]string{"_IOC_NONE", "_IOC_WRITE", "_IOC_READ", "_IOC_READ|_IOC_WRITE"}
	return "_IOC(" + dirs[dir] + ", 0x" + strconv.FormatUint(req>>8&0xff, 16) +
		", 0x" + strconv.FormatUint(req&0xff, 16) + ", 0x" + strconv.FormatUint(req>>16&0x3fff, 16) + ")"
}

func ioctlArgs(f *fmtr) []string {
	fd, req, arg := f.a(0), f.a(1)&0xffffffff, f.a(2)
	out := []string{itoa(int64(int32(fd))), ioctlReqString(req)}
	switch req {
	case 0x540C, 0x540D, 0x540E, 0x5422, 0x5450, 0x5451, 0x5437, 0x5427, 0x5428:
		// No argument (TIOCSCTTY's is rarely set).
		if req == 0x540E && arg != 0 {
			out = append(out, itoa(int64(int32(arg))))
		}
	case 0x5401, 0x5405: // TCGETS, TCGETA
		out = append(out, f.outOr(arg, func() string { return f.termios(arg) }))
	case 0x5402, 0x5403, 0x5404:
		out = append(out, f.nullOr(arg, f.termios))
	case 0x5413: // TIOCGWINSZ
		out = append(out, f.outOr(arg, func() string { return f.winsize(arg) }))
	case 0x5414: // TIOCSWINSZ
		out = append(out, f.nullOr(arg, f.winsize))
	case 0x541B, 0x540F, 0x5411, 0x5429, 0x80045430, 0x5424: // FIONREAD, TIOCGPGRP ... out ints
		out = append(out, f.outOr(arg, func() string { return f.intAt(arg) }))
	case 0x5421, 0x5410, 0x5452, 0x40045431, 0x5423: // FIONBIO, TIOCSPGRP ... in ints
		out = append(out, f.nullOr(arg, f.intAt))
	case 0x5409, 0x540A, 0x540B, 0x5425: // TCSBRK, TCXONC, TCFLSH, TCSBRKP
		out = append(out, itoa(int64(int32(arg))))
	case 0x40049409: // FICLONE
		out = append(out, itoa(int64(int32(arg))))
	default:
		out = append(out, hex(arg))
	}
	return out
}

// termios formats a struct termios (<asm-generic/termbits.h>) briefly, as
// strace does: {B38400 opost isig icanon echo ...}.
func (f *fmtr) termios(addr uint64) string {
	b, ok := f.read(addr, 36)
	if !ok {
		return ptr(addr)
	}
	oflag, cflag, lflag := le32(b[4:]), le32(b[8:]), le32(b[12:])
	bit := func(set bool, name string) string {
		if set {
			return name
		}
		return "-" + name
	}
	return "{" + baud(cflag&0o10017) + " " + bit(oflag&1 != 0, "opost") + " " + bit(lflag&1 != 0, "isig") +
		" " + bit(lflag&2 != 0, "icanon") + " " + bit(lflag&0o10 != 0, "echo") + " ...}"
}

// Baud rates from <asm-generic/termbits.h>.
var bauds = map[int64]string{
	0: "B0", 1: "B50", 2: "B75", 3: "B110", 4: "B134", 5: "B150", 6: "B200",
	7: "B300", 8: "B600", 9: "B1200", 10: "B1800", 11: "B2400", 12: "B4800",
	13: "B9600", 14: "B19200", 15: "B38400", 0o10000: "BOTHER", 0o10001: "B57600",
	0o10002: "B115200", 0o10003: "B230400", 0o10004: "B460800", 0o10005: "B500000",
	0o10006: "B576000", 0o10007: "B921600", 0o10010: "B1000000", 0o10011: "B1152000",
	0o10012: "B1500000", 0o10013: "B2000000", 0o10014: "B2500000", 0o10015: "B3000000",
	0o10016: "B3500000", 0o10017: "B4000000",
}

func baud(v uint32) string { return enum(int64(v), bauds) }

// winsize formats a struct winsize.
func (f *fmtr) winsize(addr uint64) string {
	b, ok := f.read(addr, 8)
	if !ok {
		return ptr(addr)
	}
	return "{ws_row=" + utoa(uint64(le16(b))) + ", ws_col=" + utoa(uint64(le16(b[2:]))) +
		", ws_xpixel=" + utoa(uint64(le16(b[4:]))) + ", ws_ypixel=" + utoa(uint64(le16(b[6:]))) + "}"
}

// prctl options from <linux/prctl.h>.
var prctlOpts = map[int64]string{
	1: "PR_SET_PDEATHSIG", 2: "PR_GET_PDEATHSIG", 3: "PR_GET_DUMPABLE", 4: "PR_SET_DUMPABLE",
	5: "PR_GET_UNALIGN", 6: "PR_SET_UNALIGN", 7: "PR_GET_KEEPCAPS", 8: "PR_SET_KEEPCAPS",
	9: "PR_GET_FPEMU", 10: "PR_SET_FPEMU", 11: "PR_GET_FPEXC", 12: "PR_SET_FPEXC",
	13: "PR_GET_TIMING", 14: "PR_SET_TIMING", 15: "PR_SET_NAME", 16: "PR_GET_NAME",
	19: "PR_GET_ENDIAN", 20: "PR_SET_ENDIAN", 21: "PR_GET_SECCOMP", 22: "PR_SET_SECCOMP",
	23: "PR_CAPBSET_READ", 24: "PR_CAPBSET_DROP", 25: "PR_GET_TSC", 26: "PR_SET_TSC",
	27: "PR_GET_SECUREBITS", 28: "PR_SET_SECUREBITS", 29: "PR_SET_TIMERSLACK",
	30: "PR_GET_TIMERSLACK", 31: "PR_TASK_PERF_EVENTS_DISABLE",
	32: "PR_TASK_PERF_EVENTS_ENABLE", 33: "PR_MCE_KILL", 34: "PR_MCE_KILL_GET",
	35: "PR_SET_MM", 36: "PR_SET_CHILD_SUBREAPER", 37: "PR_GET_CHILD_SUBREAPER",
	38: "PR_SET_NO_NEW_PRIVS", 39: "PR_GET_NO_NEW_PRIVS", 40: "PR_GET_TID_ADDRESS",
	41: "PR_SET_THP_DISABLE", 42: "PR_GET_THP_DISABLE", 45: "PR_SET_FP_MODE",
	46: "PR_GET_FP_MODE", 47: "PR_CAP_AMBIENT", 52: "PR_GET_SPECULATION_CTRL",
	53: "PR_SET_SPECULATION_CTRL", 55: "PR_SET_TAGGED_ADDR_CTRL",
	56: "PR_GET_TAGGED_ADDR_CTRL", 57: "PR_SET_IO_FLUSHER", 58: "PR_GET_IO_FLUSHER",
	59: "PR_SET_SYSCALL_USER_DISPATCH", 62: "PR_SCHED_CORE", 65: "PR_SET_MDWE",
	66: "PR_GET_MDWE", 0x59616d61: "PR_SET_PTRACER", 0x53564d41: "PR_SET_VMA",
}

func prctlArgs(f *fmtr) []string {
	opt := int64(int32(f.a(0)))
	out := []string{enum(opt, prctlOpts)}
	switch opt {
	case 3, 7, 9, 11, 13, 19, 21, 25, 27, 30, 31, 32, 34, 37, 39, 42, 46, 56, 58, 66:
		// PR_GET_* that take nothing (or only an out pointer, shown below).
		if opt == 37 || opt == 25 || opt == 11 || opt == 9 || opt == 19 {
			out = append(out, f.outOr(f.a(1), func() string { return f.intAt(f.a(1)) }))
		}
	case 2: // PR_GET_PDEATHSIG
		out = append(out, f.outOr(f.a(1), func() string {
			v, ok := f.u32(f.a(1))
			if !ok {
				return ptr(f.a(1))
			}
			return "[" + sigArg(uint64(v)) + "]"
		}))
	case 1: // PR_SET_PDEATHSIG
		out = append(out, sigArg(f.a(1)))
	case 15: // PR_SET_NAME
		out = append(out, f.str(f.a(1), 16))
	case 16: // PR_GET_NAME
		out = append(out, f.outOr(f.a(1), func() string { return f.str(f.a(1), 16) }))
	case 4, 8, 24, 23, 28, 29, 36, 41:
		out = append(out, utoa(f.a(1)))
	case 38: // PR_SET_NO_NEW_PRIVS
		out = append(out, utoa(f.a(1)), utoa(f.a(2)), utoa(f.a(3)), utoa(f.a(4)))
	case 22: // PR_SET_SECCOMP
		out = append(out, enum(int64(f.a(1)), map[int64]string{1: "SECCOMP_MODE_STRICT", 2: "SECCOMP_MODE_FILTER"}))
		if f.a(1) == 2 {
			out = append(out, ptr(f.a(2)))
		}
	case 0x59616d61: // PR_SET_PTRACER
		if int64(f.a(1)) == -1 {
			out = append(out, "PR_SET_PTRACER_ANY")
		} else {
			out = append(out, itoa(int64(f.a(1))))
		}
	case 0x53564d41: // PR_SET_VMA
		if f.a(1) == 0 {
			out = append(out, "PR_SET_VMA_ANON_NAME", ptr(f.a(2)), utoa(f.a(3)), f.str(f.a(4), 80))
		} else {
			out = append(out, hex(f.a(1)), hex(f.a(2)), hex(f.a(3)), hex(f.a(4)))
		}
	default:
		out = append(out, hex(f.a(1)), hex(f.a(2)), hex(f.a(3)), hex(f.a(4)))
	}
	return out
}

// arch_prctl codes from <asm/prctl.h>.
var archPrctlCodes = map[int64]string{
	0x1001: "ARCH_SET_GS", 0x1002: "ARCH_SET_FS", 0x1003: "ARCH_GET_FS",
	0x1004: "ARCH_GET_GS", 0x1011: "ARCH_GET_CPUID", 0x1012: "ARCH_SET_CPUID",
	0x1021: "ARCH_GET_XCOMP_SUPP", 0x1022: "ARCH_GET_XCOMP_PERM",
	0x1023: "ARCH_REQ_XCOMP_PERM", 0x1024: "ARCH_GET_XCOMP_GUEST_PERM",
	0x1025: "ARCH_REQ_XCOMP_GUEST_PERM", 0x2001: "ARCH_MAP_VDSO_X32",
	0x2002: "ARCH_MAP_VDSO_32", 0x2003: "ARCH_MAP_VDSO_64",
	0x4001: "ARCH_GET_UNTAG_MASK", 0x4002: "ARCH_ENABLE_TAGGED_ADDR",
	0x4003: "ARCH_GET_MAX_TAG_BITS", 0x4004: "ARCH_FORCE_TAGGED_SVA",
	0x5001: "ARCH_SHSTK_ENABLE", 0x5002: "ARCH_SHSTK_DISABLE", 0x5003: "ARCH_SHSTK_LOCK",
	0x5004: "ARCH_SHSTK_UNLOCK", 0x5005: "ARCH_SHSTK_STATUS",
}

func archPrctlArgs(f *fmtr) []string {
	code, arg := int64(int32(f.a(0))), f.a(1)
	out := []string{enumHex(uint64(code)&0xffffffff, archPrctlCodes)}
	switch code {
	case 0x1003, 0x1004, 0x1022, 0x1021, 0x1024, 0x4001, 0x5005: // out pointers
		out = append(out, f.outOr(arg, func() string { return f.u64At(arg, true) }))
	case 0x1011:
	case 0x1012, 0x1023, 0x1025:
		out = append(out, itoa(int64(arg)))
	default:
		out = append(out, hex(arg))
	}
	return out
}

// futexArgs formats futex(uaddr, op, val, timeout|val2, uaddr2, val3),
// showing only the arguments op uses.
func futexArgs(f *fmtr) []string {
	op := f.a(1)
	out := []string{ptr(f.a(0)), futexOpString(op)}
	val := utoa(f.a(2) & 0xffffffff)
	if int32(f.a(2)) < 0 {
		val = itoa(int64(int32(f.a(2))))
	}
	timeout := f.nullOr(f.a(3), f.timespec)
	val2 := utoa(f.a(3) & 0xffffffff)
	val3 := hex(f.a(5) & 0xffffffff)
	bitset := val3
	if f.a(5)&0xffffffff == futexBitsetAny {
		bitset = "FUTEX_BITSET_MATCH_ANY"
	}
	cmd := op & futexCmdMask
	if futexOpString(op) == hex(op) {
		cmd = 1 << 10 // unknown
	}
	switch cmd {
	case 0: // FUTEX_WAIT
		out = append(out, val, timeout)
	case 1, 2, 7: // FUTEX_WAKE, FUTEX_FD, FUTEX_UNLOCK_PI
		if cmd != 7 {
			out = append(out, val)
		}
	case 3: // FUTEX_REQUEUE
		out = append(out, val, val2, ptr(f.a(4)))
	case 4, 12: // FUTEX_CMP_REQUEUE, FUTEX_CMP_REQUEUE_PI
		out = append(out, val, val2, ptr(f.a(4)), val3)
	case 5: // FUTEX_WAKE_OP
		out = append(out, val, val2, ptr(f.a(4)), futexWakeOpString(f.a(5)))
	case 6, 13: // FUTEX_LOCK_PI, FUTEX_LOCK_PI2
		out = append(out, timeout)
	case 8: // FUTEX_TRYLOCK_PI
	case 9: // FUTEX_WAIT_BITSET
		out = append(out, val, timeout, bitset)
	case 10: // FUTEX_WAKE_BITSET
		out = append(out, val, bitset)
	case 11: // FUTEX_WAIT_REQUEUE_PI
		out = append(out, val, timeout, ptr(f.a(4)))
	default:
		out = append(out, hex(f.a(2)), hex(f.a(3)), hex(f.a(4)), hex(f.a(5)))
	}
	return out
}

const (
	cloneParentSettid  = 0x00100000
	cloneChildCleartid = 0x00200000
	cloneChildSettid   = 0x01000000
	cloneSettls        = 0x00080000
	clonePidfd         = 0x00001000
)

// cloneArgs formats x86-64's clone(flags, stack, parent_tid, child_tid,
// tls) with strace's names, showing the pointers the flags use.
func cloneArgs(f *fmtr) []string {
	fl := f.a(0)
	out := []string{"child_stack=" + ptr(f.a(1)), "flags=" + cloneFlagsSig(fl)}
	if fl&(cloneParentSettid|clonePidfd) != 0 {
		out = append(out, "parent_tid="+ptr(f.a(2)))
	}
	if fl&(cloneChildSettid|cloneChildCleartid) != 0 {
		out = append(out, "child_tidptr="+ptr(f.a(3)))
	}
	if fl&cloneSettls != 0 {
		out = append(out, "tls="+ptr(f.a(4)))
	}
	return out
}

// clone3Args formats clone3(struct clone_args *, size) (<linux/sched.h>).
func clone3Args(f *fmtr) []string {
	p, size := f.a(0), f.a(1)
	n := size
	if n > 88 {
		n = 88
	}
	b, ok := f.read(p, int(n))
	if !ok || n < 64 {
		return []string{ptr(p), utoa(size)}
	}
	u := func(off int) uint64 { return le64(b[off:]) }
	fl := u(0)
	fields := []string{"flags=" + flags(fl, cloneFlags, "0")}
	if fl&clonePidfd != 0 {
		fields = append(fields, "pidfd="+ptr(u(8)))
	}
	if fl&(cloneChildSettid|cloneChildCleartid) != 0 {
		fields = append(fields, "child_tid="+ptr(u(16)))
	}
	if fl&cloneParentSettid != 0 {
		fields = append(fields, "parent_tid="+ptr(u(24)))
	}
	fields = append(fields, "exit_signal="+sigArg(u(32)), "stack="+ptr(u(40)), "stack_size="+hex(u(48)))
	if fl&cloneSettls != 0 {
		fields = append(fields, "tls="+ptr(u(56)))
	}
	out := "{" + strings.Join(fields, ", ") + "}"
	if fl&cloneParentSettid != 0 && f.out() {
		// What the kernel wrote back, as strace shows it.
		if v, ok := f.u32(u(24)); ok {
			out += " => {parent_tid=[" + itoa(int64(int32(v))) + "]}"
		}
	}
	return []string{out, utoa(size)}
}
