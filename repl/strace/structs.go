package strace

import (
	"strconv"
	"strings"
)

// Struct decoders. Layouts are x86-64's, from the headers each cites.
// Each returns the pointer in hex (or NULL) when the memory is unreadable.

// timespec formats a struct timespec (<linux/time_types.h>).
func (f *fmtr) timespec(addr uint64) string {
	b, ok := f.read(addr, 16)
	if !ok {
		return ptr(addr)
	}
	return timespecString(b)
}

// UTIME_NOW and UTIME_OMIT from <linux/stat.h>.
const (
	utimeNow  = 1<<30 - 1
	utimeOmit = 1<<30 - 2
)

func timespecString(b []byte) string {
	ns := int64(le64(b[8:]))
	nsS := itoa(ns)
	switch ns {
	case utimeNow:
		nsS = "UTIME_NOW"
	case utimeOmit:
		nsS = "UTIME_OMIT"
	}
	return "{tv_sec=" + itoa(int64(le64(b))) + ", tv_nsec=" + nsS + "}"
}

// timeval formats a struct timeval (<linux/time.h>).
func (f *fmtr) timeval(addr uint64) string {
	b, ok := f.read(addr, 16)
	if !ok {
		return ptr(addr)
	}
	return timevalString(b)
}

func timevalString(b []byte) string {
	return "{tv_sec=" + itoa(int64(le64(b))) + ", tv_usec=" + itoa(int64(le64(b[8:]))) + "}"
}

// itimerspec formats a struct itimerspec (<linux/time_types.h>).
func (f *fmtr) itimerspec(addr uint64) string {
	b, ok := f.read(addr, 32)
	if !ok {
		return ptr(addr)
	}
	return "{it_interval=" + timespecString(b) + ", it_value=" + timespecString(b[16:]) + "}"
}

// itimerval formats a struct itimerval (<linux/time.h>).
func (f *fmtr) itimerval(addr uint64) string {
	b, ok := f.read(addr, 32)
	if !ok {
		return ptr(addr)
	}
	return "{it_interval=" + timevalString(b) + ", it_value=" + timevalString(b[16:]) + "}"
}

// timespec2 formats utimensat's times[2].
func (f *fmtr) timespec2(addr uint64) string {
	b, ok := f.read(addr, 32)
	if !ok {
		return ptr(addr)
	}
	return "[" + timespecString(b) + ", " + timespecString(b[16:]) + "]"
}

// array formats n elements of size bytes at addr with one, at most
// maxArray of them, as [e, e, ...].
func (f *fmtr) array(addr, n uint64, size int, one func(b []byte) string) string {
	if addr == 0 {
		return "NULL"
	}
	if n == 0 {
		return "[]"
	}
	show, more := n, false
	if show > maxArray {
		show, more = maxArray, true
	}
	b, ok := f.read(addr, int(show)*size)
	if !ok {
		return ptr(addr)
	}
	parts := make([]string, 0, show+1)
	for i := 0; i < int(show); i++ {
		parts = append(parts, one(b[i*size:(i+1)*size]))
	}
	if more {
		parts = append(parts, "...")
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pollfds formats an array of struct pollfd (<asm-generic/poll.h>).
func (f *fmtr) pollfds(addr, n uint64, revents bool) string {
	return f.array(addr, n, 8, func(b []byte) string {
		s := "{fd=" + itoa(int64(int32(le32(b)))) + ", events=" + flags(uint64(le16(b[4:])), pollEvents, "0")
		if revents {
			s += ", revents=" + flags(uint64(le16(b[6:])), pollEvents, "0")
		}
		return s + "}"
	})
}

// iovec formats an array of struct iovec (<linux/uio.h>); data is how
// many bytes the buffers hold in all (the result of readv), or -1 for
// all of each.
func (f *fmtr) iovec(addr, n uint64, data int64) string {
	return f.array(addr, n, 16, func(b []byte) string {
		base, l := le64(b), le64(b[8:])
		show := l
		if data >= 0 {
			if uint64(data) < show {
				show = uint64(data)
			}
			data -= int64(show)
		}
		s := f.buf(base, show, false)
		return "{iov_base=" + s + ", iov_len=" + utoa(l) + "}"
	})
}

// stat formats a struct stat (<asm/stat.h>), abbreviated as strace does.
func (f *fmtr) stat(addr uint64) string {
	b, ok := f.read(addr, 144)
	if !ok {
		return ptr(addr)
	}
	mode := uint64(le32(b[24:]))
	s := "{st_mode=" + modeString(mode, true)
	if t := mode & 0o170000; t == 0o020000 || t == 0o060000 {
		s += ", st_rdev=" + makedev(le64(b[40:]))
	} else {
		s += ", st_size=" + itoa(int64(le64(b[48:])))
	}
	return s + ", ...}"
}

// makedev formats a dev_t as glibc encodes it.
func makedev(d uint64) string {
	major := d>>8&0xfff | d>>32&^0xfff
	minor := d&0xff | d>>12&^0xff
	return "makedev(" + hex(major) + ", " + hex(minor) + ")"
}

// statx formats a struct statx (<linux/stat.h>), abbreviated.
func (f *fmtr) statx(addr uint64) string {
	b, ok := f.read(addr, 256)
	if !ok {
		return ptr(addr)
	}
	return "{stx_mask=" + flags(uint64(le32(b)), statxMask, "0") +
		", stx_attributes=" + hex(le64(b[8:])) +
		", stx_mode=" + modeString(uint64(le16(b[28:])), true) +
		", stx_size=" + utoa(le64(b[40:])) + ", ...}"
}

// rlimit formats a struct rlimit64 (<linux/resource.h>).
func (f *fmtr) rlimit(addr uint64) string {
	b, ok := f.read(addr, 16)
	if !ok {
		return ptr(addr)
	}
	lim := func(v uint64) string {
		switch {
		case v == ^uint64(0):
			return "RLIM64_INFINITY"
		case v > 0 && v%1024 == 0:
			return utoa(v/1024) + "*1024"
		}
		return utoa(v)
	}
	return "{rlim_cur=" + lim(le64(b)) + ", rlim_max=" + lim(le64(b[8:])) + "}"
}

// rusage formats a struct rusage (<linux/resource.h>), abbreviated.
func (f *fmtr) rusage(addr uint64) string {
	b, ok := f.read(addr, 144)
	if !ok {
		return ptr(addr)
	}
	return "{ru_utime=" + timevalString(b) + ", ru_stime=" + timevalString(b[16:]) + ", ...}"
}

// utsname formats a struct new_utsname (<linux/utsname.h>), abbreviated.
func (f *fmtr) utsname(addr uint64) string {
	b, ok := f.read(addr, 6*65)
	if !ok {
		return ptr(addr)
	}
	field := func(i int) string {
		s := b[i*65 : (i+1)*65]
		if j := strings.IndexByte(string(s), 0); j >= 0 {
			s = s[:j]
		}
		return quote(s, false, false)
	}
	return "{sysname=" + field(0) + ", nodename=" + field(1) + ", ...}"
}

// sysinfo formats a struct sysinfo (<linux/sysinfo.h>).
func (f *fmtr) sysinfo(addr uint64) string {
	b, ok := f.read(addr, 112)
	if !ok {
		return ptr(addr)
	}
	u := func(off int) string { return utoa(le64(b[off:])) }
	return "{uptime=" + itoa(int64(le64(b))) + ", loads=[" + u(8) + ", " + u(16) + ", " + u(24) +
		"], totalram=" + u(32) + ", freeram=" + u(40) + ", sharedram=" + u(48) +
		", bufferram=" + u(56) + ", totalswap=" + u(64) + ", freeswap=" + u(72) +
		", procs=" + utoa(uint64(le16(b[80:]))) + ", totalhigh=" + u(88) +
		", freehigh=" + u(96) + ", mem_unit=" + utoa(uint64(le32(b[104:]))) + "}"
}

// sigset formats a sigset_t of size bytes (8 on x86-64).
func (f *fmtr) sigset(addr, size uint64) string {
	if addr == 0 {
		return "NULL"
	}
	if size == 0 || size > 128 {
		return ptr(addr)
	}
	n := size
	if n > 8 {
		n = 8
	}
	b, ok := f.read(addr, int(n))
	if !ok {
		return ptr(addr)
	}
	var m uint64
	for i := len(b) - 1; i >= 0; i-- {
		m = m<<8 | uint64(b[i])
	}
	return sigsetString(m)
}

// sigaction flags from <asm/signal.h> and <asm-generic/signal-defs.h>.
var saFlags = []flag{
	{0x1, "SA_NOCLDSTOP"}, {0x2, "SA_NOCLDWAIT"}, {0x4, "SA_SIGINFO"},
	{0x400, "SA_UNSUPPORTED"}, {0x800, "SA_EXPOSE_TAGBITS"},
	{0x04000000, "SA_RESTORER"}, {0x08000000, "SA_ONSTACK"}, {0x10000000, "SA_RESTART"},
	{0x40000000, "SA_NODEFER"}, {0x80000000, "SA_RESETHAND"},
}

// sigaction formats the kernel's struct sigaction: handler, flags,
// restorer, mask.
func (f *fmtr) sigaction(addr uint64) string {
	b, ok := f.read(addr, 32)
	if !ok {
		return ptr(addr)
	}
	h := le64(b)
	hs := ptr(h)
	switch h {
	case 0:
		hs = "SIG_DFL"
	case 1:
		hs = "SIG_IGN"
	case ^uint64(0):
		hs = "SIG_ERR"
	}
	fl := le64(b[8:])
	s := "{sa_handler=" + hs + ", sa_mask=" + sigsetString(le64(b[24:])) + ", sa_flags=" + flags(fl, saFlags, "0")
	if fl&0x04000000 != 0 {
		s += ", sa_restorer=" + ptr(le64(b[16:]))
	}
	return s + "}"
}

// sigaltstack flags from <asm-generic/signal-defs.h> and <linux/signal.h>.
var ssFlags = []flag{{1, "SS_ONSTACK"}, {2, "SS_DISABLE"}, {1 << 31, "SS_AUTODISARM"}}

// stack formats a stack_t (<asm/signal.h>).
func (f *fmtr) stack(addr uint64) string {
	b, ok := f.read(addr, 24)
	if !ok {
		return ptr(addr)
	}
	return "{ss_sp=" + ptr(le64(b)) + ", ss_flags=" + flags(uint64(le32(b[8:])), ssFlags, "0") +
		", ss_size=" + utoa(le64(b[16:])) + "}"
}

// epollEvents formats n packed struct epoll_event (<linux/eventpoll.h>).
func (f *fmtr) epollEvents(addr, n uint64) string {
	return f.array(addr, n, 12, epollEventString)
}

// epollEvent formats one struct epoll_event.
func (f *fmtr) epollEvent(addr uint64) string {
	b, ok := f.read(addr, 12)
	if !ok {
		return ptr(addr)
	}
	return epollEventString(b)
}

func epollEventString(b []byte) string {
	d := le64(b[4:])
	return "{events=" + flags(uint64(le32(b)), epollEvents, "0") +
		", data={u32=" + utoa(d&0xffffffff) + ", u64=" + utoa(d) + "}}"
}

// fdset formats an fd_set holding nfds descriptors as [0 3 4].
func (f *fmtr) fdset(addr uint64, nfds uint64) string {
	if addr == 0 {
		return "NULL"
	}
	if nfds > 1024*8 {
		return ptr(addr)
	}
	b, ok := f.read(addr, int((nfds+63)/64*8))
	if nfds == 0 {
		b, ok = nil, true
	}
	if !ok {
		return ptr(addr)
	}
	return "[" + bitList(b, int(nfds)) + "]"
}

// bitList lists the set bits among the first n of b as "0 3 4".
func bitList(b []byte, n int) string {
	var parts []string
	for i := 0; i < n && i/8 < len(b); i++ {
		if b[i/8]>>(i%8)&1 != 0 {
			if len(parts) == maxArray {
				parts = append(parts, "...")
				break
			}
			parts = append(parts, strconv.Itoa(i))
		}
	}
	return strings.Join(parts, " ")
}

// cpuset formats a CPU mask of size bytes as [0 1 2 3].
func (f *fmtr) cpuset(addr, size uint64) string {
	if addr == 0 {
		return "NULL"
	}
	if size > maxRead {
		size = maxRead
	}
	b, ok := f.read(addr, int(size))
	if !ok {
		return ptr(addr)
	}
	return "[" + bitList(b, len(b)*8) + "]"
}

// strArray formats a NULL-terminated array of strings (execve's argv).
func (f *fmtr) strArray(addr uint64) string {
	if addr == 0 {
		return "NULL"
	}
	var parts []string
	for i := uint64(0); ; i++ {
		p, ok := f.u64(addr + 8*i)
		if !ok {
			if i == 0 {
				return ptr(addr)
			}
			parts = append(parts, "...")
			break
		}
		if p == 0 {
			break
		}
		if i == maxArray {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, f.str(p, f.max))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// envp formats execve's envp as strace does by default: the pointer and
// a count, 0x7ffd... /* 30 vars */.
func (f *fmtr) envp(addr uint64) string {
	if addr == 0 {
		return "NULL"
	}
	n := 0
	for ; n < maxRead/8; n++ {
		p, ok := f.u64(addr + 8*uint64(n))
		if !ok {
			return ptr(addr)
		}
		if p == 0 {
			break
		}
	}
	vars := " vars */"
	if n == 1 {
		vars = " var */"
	}
	return ptr(addr) + " /* " + strconv.Itoa(n) + vars
}

// waitStatus formats an int wait status as the <sys/wait.h> macros that
// test it: [{WIFEXITED(s) && WEXITSTATUS(s) == 0}].
func waitStatus(s uint32) string {
	var w string
	sig := s & 0x7f
	switch {
	case sig == 0:
		w = "WIFEXITED(s) && WEXITSTATUS(s) == " + utoa(uint64(s>>8&0xff))
	case s&0xff == 0x7f:
		w = "WIFSTOPPED(s) && WSTOPSIG(s) == " + sigArg(uint64(s>>8&0xff))
		if ev := s >> 16; ev != 0 {
			w += " && s >> 16 == " + enum(int64(ev), ptraceEvents)
		}
	case s == 0xffff:
		w = "WIFCONTINUED(s)"
	default:
		w = "WIFSIGNALED(s) && WTERMSIG(s) == " + sigArg(uint64(sig))
		if s&0x80 != 0 {
			w += " && WCOREDUMP(s)"
		}
	}
	return "[{" + w + "}]"
}

// ptrace events from <linux/ptrace.h>.
var ptraceEvents = map[int64]string{
	1: "PTRACE_EVENT_FORK", 2: "PTRACE_EVENT_VFORK", 3: "PTRACE_EVENT_CLONE",
	4: "PTRACE_EVENT_EXEC", 5: "PTRACE_EVENT_VFORK_DONE", 6: "PTRACE_EVENT_EXIT",
	7: "PTRACE_EVENT_SECCOMP", 128: "PTRACE_EVENT_STOP",
}

// intPair formats two ints (pipe's and socketpair's fds) as [3, 4].
func (f *fmtr) intPair(addr uint64) string {
	b, ok := f.read(addr, 8)
	if !ok {
		return ptr(addr)
	}
	return "[" + itoa(int64(int32(le32(b)))) + ", " + itoa(int64(int32(le32(b[4:])))) + "]"
}

// intAt formats an int in memory as [N].
func (f *fmtr) intAt(addr uint64) string {
	v, ok := f.u32(addr)
	if !ok {
		return ptr(addr)
	}
	return "[" + itoa(int64(int32(v))) + "]"
}

// u64At formats a 64-bit value in memory as [N] or [0xN].
func (f *fmtr) u64At(addr uint64, inHex bool) string {
	v, ok := f.u64(addr)
	if !ok {
		return ptr(addr)
	}
	if inHex {
		return "[" + hex(v) + "]"
	}
	return "[" + itoa(int64(v)) + "]"
}

// dirents counts the linux_dirent64 records in the n bytes at addr and
// shows them as strace does by default: 0x55d0... /* 10 entries */.
func (f *fmtr) dirents(addr uint64, n int) string {
	b := f.readSome(addr, n)
	if len(b) < min(n, maxRead) {
		return ptr(addr)
	}
	count := 0
	for off := 0; off+19 <= len(b); count++ {
		reclen := int(le16(b[off+16:]))
		if reclen == 0 {
			break
		}
		off += reclen
	}
	more := ""
	if n > len(b) {
		more = "+"
	}
	entries := " entries */"
	if count == 1 && more == "" {
		entries = " entry */"
	}
	return ptr(addr) + " /* " + strconv.Itoa(count) + more + entries
}

// openHow formats a struct open_how (<linux/openat2.h>).
func (f *fmtr) openHow(addr, size uint64) string {
	if size < 24 {
		return ptr(addr)
	}
	b, ok := f.read(addr, 24)
	if !ok {
		return ptr(addr)
	}
	fl := le64(b)
	s := "{flags=" + openFlagsString(fl)
	if fl&(oCreat|oTmpfile) != 0 || le64(b[8:]) != 0 {
		s += ", mode=" + modeString(le64(b[8:]), false)
	}
	return s + ", resolve=" + flags(le64(b[16:]), resolveFlags, "0") + "}"
}

// flock formats a struct flock (<asm-generic/fcntl.h>).
func (f *fmtr) flock(addr uint64) string {
	b, ok := f.read(addr, 32)
	if !ok {
		return ptr(addr)
	}
	return "{l_type=" + enum(int64(int16(le16(b))), lockTypes) +
		", l_whence=" + enum(int64(int16(le16(b[2:]))), whences) +
		", l_start=" + itoa(int64(le64(b[8:]))) + ", l_len=" + itoa(int64(le64(b[16:]))) + "}"
}
