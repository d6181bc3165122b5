package strace

import (
	"encoding/binary"
	"testing"
)

// TestKinds formats one argument of each kind.
func TestKinds(t *testing.T) {
	m := newImage()
	str := m.str("a\tb\"c\\d\x01" + "7\xff")
	long := m.put([]byte("0123456789abcdefghijklmnopqrstuvwxyz\x00"))
	four := m.u32s(42)
	ts := m.u64s(3, 7)
	tv := m.u64s(4, 9)
	its := m.u64s(0, 0, 1, 0)
	sa := m.u64s(0, 0, 0, 0)
	stk := m.u64s(0x7f0000008000, 2, 8192)
	sig := m.u64s(0)
	rl := m.u64s(100, 200)
	tms := m.u64s(1, utimeNow, 2, utimeOmit)
	how := m.u64s(0o100|0o2, 0o600, 4)
	st := make([]byte, 256)
	binary.LittleEndian.PutUint32(st, 0x7ff)
	binary.LittleEndian.PutUint16(st[28:], 0o40755)
	binary.LittleEndian.PutUint64(st[40:], 4096)
	stx := m.put(st)
	ru := m.put(make([]byte, 144))
	si := make([]byte, 112)
	si[0] = 9
	binary.LittleEndian.PutUint16(si[80:], 300)
	binary.LittleEndian.PutUint32(si[104:], 1)
	sip := m.put(si)
	nl := m.put([]byte{16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	abstract := m.put([]byte("\x01\x00\x00abc"))
	mh := m.put(make([]byte, 56))
	mhIov := m.u64s(m.put([]byte("hi")), 2)
	binary.LittleEndian.PutUint64(m.data[mh-imageBase+16:], mhIov)
	binary.LittleEndian.PutUint64(m.data[mh-imageBase+24:], 1)

	tests := []struct {
		name string
		k    kind
		args [6]uint64
		i    int
		res  int64 // result; the call is done with Options.Out
		want string
	}{
		{"hex", kHex, [6]uint64{0x1f}, 0, 0, "0x1f"},
		{"hex0", kHex, [6]uint64{}, 0, 0, "0"},
		{"int", kInt, [6]uint64{0xffffffff}, 0, 0, "-1"},
		{"uint", kUint, [6]uint64{1 << 40}, 0, 0, "1099511627776"},
		{"long", kLong, [6]uint64{^uint64(0)}, 0, 0, "-1"},
		{"ptr", kPtr, [6]uint64{0}, 0, 0, "NULL"},
		{"ptr2", kPtr, [6]uint64{0xabc}, 0, 0, "0xabc"},
		{"fd", kFd, [6]uint64{3}, 0, 0, "3"},
		{"atfd", kAtFd, [6]uint64{0xffffff9c}, 0, 0, "AT_FDCWD"},
		{"atfd-int", kAtFd, [6]uint64{5}, 0, 0, "5"},
		{"path", kPath, [6]uint64{long}, 0, 0, `"0123456789abcdefghijklmnopqrstuvwxyz"`},
		{"str-escapes", kStr, [6]uint64{str}, 0, 0, `"a\tb\"c\\d\0017\377"`},
		{"str-trunc", kStr, [6]uint64{long}, 0, 0, `"0123456789abcdefghijklmnopqrstuv"...`},
		{"str-null", kStr, [6]uint64{0}, 0, 0, "NULL"},
		{"buf", kBuf, [6]uint64{long, 3}, 0, 0, `"012"`},
		{"buf-unmapped", kBuf, [6]uint64{0x10, 3}, 0, 0, "0x10"},
		{"buf-giant", kBuf, [6]uint64{long, 1 << 62}, 0, 0, `"0123456789abcdefghijklmnopqrstuv"...`},
		{"outbuf", kOutBuf, [6]uint64{long, 100}, 0, 2, `"01"`},
		{"outbuf-failed", kOutBuf, [6]uint64{long, 100}, 0, -5, h(long)},
		{"mode", kMode, [6]uint64{0o644}, 0, 0, "0644"},
		{"mode-suid", kMode, [6]uint64{0o4755}, 0, 0, "S_ISUID|0755"},
		{"mode0", kMode, [6]uint64{0}, 0, 0, "000"},
		{"mknod", kMknodMode, [6]uint64{0o20600}, 0, 0, "S_IFCHR|0600"},
		{"openflags", kOpenFlags, [6]uint64{0o2000000 | 0o4000 | 0o200000}, 0, 0, "O_RDONLY|O_NONBLOCK|O_DIRECTORY|O_CLOEXEC"},
		{"openflags-sync", kOpenFlags, [6]uint64{0o4010001}, 0, 0, "O_WRONLY|O_SYNC"},
		{"openflags-tmpfile", kOpenFlags, [6]uint64{0o20200002}, 0, 0, "O_RDWR|O_TMPFILE"},
		{"openflags-unknown", kOpenFlags, [6]uint64{0o40000000}, 0, 0, "O_RDONLY|0x800000"},
		{"openmode-omitted", kOpenMode, [6]uint64{0, 0o644}, 1, 0, ""},
		{"fileflags", kFileFlags, [6]uint64{0o2004000}, 0, 0, "O_NONBLOCK|O_CLOEXEC"},
		{"prot", kMmapProt, [6]uint64{7}, 0, 0, "PROT_READ|PROT_WRITE|PROT_EXEC"},
		{"prot0", kMmapProt, [6]uint64{0}, 0, 0, "PROT_NONE"},
		{"mmapflags", kMmapFlags, [6]uint64{0x20022}, 0, 0, "MAP_PRIVATE|MAP_ANONYMOUS|MAP_STACK"},
		{"mmapflags-huge", kMmapFlags, [6]uint64{0x40022 | 21<<26}, 0, 0, "MAP_PRIVATE|MAP_ANONYMOUS|MAP_HUGETLB|MAP_HUGE_2MB"},
		{"mmapflags-uninit", kMmapFlags, [6]uint64{0x4000022}, 0, 0, "MAP_PRIVATE|MAP_ANONYMOUS|MAP_UNINITIALIZED"},
		{"mmapflags-shared", kMmapFlags, [6]uint64{1}, 0, 0, "MAP_SHARED"},
		{"mremap-addr", kMremapAddr, [6]uint64{3, 0x5000}, 1, 0, "0x5000"},
		{"madvise", kMadvise, [6]uint64{14}, 0, 0, "MADV_HUGEPAGE"},
		{"madvise-unknown", kMadvise, [6]uint64{77}, 0, 0, "77"},
		{"signal", kSignal, [6]uint64{11}, 0, 0, "SIGSEGV"},
		{"signal-rt", kSignal, [6]uint64{35}, 0, 0, "SIGRTMIN+3"},
		{"signal-bad", kSignal, [6]uint64{200}, 0, 0, "200"},
		{"sighow", kSigHow, [6]uint64{2}, 0, 0, "SIG_SETMASK"},
		{"sigset-empty", kSigset, [6]uint64{sig, 8}, 0, 0, "[]"},
		{"sigset-size", kSigset, [6]uint64{sig, 200}, 0, 0, h(sig)},
		{"sigaction-dfl", kSigaction, [6]uint64{sa}, 0, 0, "{sa_handler=SIG_DFL, sa_mask=[], sa_flags=0}"},
		{"stack", kStack, [6]uint64{stk}, 0, 0, "{ss_sp=0x7f0000008000, ss_flags=SS_DISABLE, ss_size=8192}"},
		{"whence", kWhence, [6]uint64{1}, 0, 0, "SEEK_CUR"},
		{"domain", kSockDomain, [6]uint64{16}, 0, 0, "AF_NETLINK"},
		{"socktype", kSockType, [6]uint64{2 | 0o4000}, 0, 0, "SOCK_DGRAM|SOCK_NONBLOCK"},
		{"sockproto-netlink", kSockProto, [6]uint64{16, 3, 0}, 2, 0, "NETLINK_ROUTE"},
		{"socklevel", kSockLevel, [6]uint64{6}, 0, 0, "SOL_TCP"},
		{"sockopt-tcp", kSockOpt, [6]uint64{3, 6, 1}, 2, 0, "TCP_NODELAY"},
		{"sockaddr-netlink", kSockAddr, [6]uint64{nl, 12}, 0, 0, "{sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}"},
		{"sockaddr-abstract", kSockAddr, [6]uint64{abstract, 6}, 0, 0, `{sa_family=AF_UNIX, sun_path=@"abc"}`},
		{"msgflags", kMsgFlags, [6]uint64{0x40 | 0x4000}, 0, 0, "MSG_DONTWAIT|MSG_NOSIGNAL"},
		{"shutdown", kShutdownHow, [6]uint64{1}, 0, 0, "SHUT_WR"},
		{"msghdr", kMsghdr, [6]uint64{mh}, 0, 0, `{msg_name=NULL, msg_namelen=0, msg_iov=[{iov_base="hi", iov_len=2}], msg_iovlen=1, msg_controllen=0, msg_flags=0}`},
		{"pollfds-empty", kPollFds, [6]uint64{four, 0}, 0, 0, "[]"},
		{"pollfds-giant-unmapped", kPollFds, [6]uint64{0x20, 1 << 31}, 0, 0, "0x20"},
		{"timespec", kTimespec, [6]uint64{ts}, 0, 0, "{tv_sec=3, tv_nsec=7}"},
		{"timespec-bad", kTimespec, [6]uint64{0x20}, 0, 0, "0x20"},
		{"timeval", kTimeval, [6]uint64{tv}, 0, 0, "{tv_sec=4, tv_usec=9}"},
		{"itimerspec", kItimerspec, [6]uint64{its}, 0, 0, "{it_interval={tv_sec=0, tv_nsec=0}, it_value={tv_sec=1, tv_nsec=0}}"},
		{"utimes", kUtimes, [6]uint64{tms}, 0, 0, "[{tv_sec=1, tv_nsec=UTIME_NOW}, {tv_sec=2, tv_nsec=UTIME_OMIT}]"},
		{"clock", kClock, [6]uint64{7}, 0, 0, "CLOCK_BOOTTIME"},
		{"clock-cpu", kClock, [6]uint64{0xfffffffe}, 0, 0, "-2"},
		{"atflags", kAtFlags, [6]uint64{0x1100}, 0, 0, "AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH"},
		{"statxflags", kStatxFlags, [6]uint64{0x100}, 0, 0, "AT_STATX_SYNC_AS_STAT|AT_SYMLINK_NOFOLLOW"},
		{"statxflags0", kStatxFlags, [6]uint64{0}, 0, 0, "AT_STATX_SYNC_AS_STAT"},
		{"statxmask", kStatxMask, [6]uint64{0x7ff | 0x1000}, 0, 0, "STATX_BASIC_STATS|STATX_MNT_ID"},
		{"statx", kOutStatx, [6]uint64{stx}, 0, 0, "{stx_mask=STATX_BASIC_STATS, stx_attributes=0, stx_mode=S_IFDIR|0755, stx_size=4096, ...}"},
		{"access", kAccessMode, [6]uint64{6}, 0, 0, "R_OK|W_OK"},
		{"waitopts", kWaitOpts, [6]uint64{5}, 0, 0, "WNOHANG|WEXITED"},
		{"idtype", kIdType, [6]uint64{1}, 0, 0, "P_PID"},
		{"rlimitres", kRlimitRes, [6]uint64{9}, 0, 0, "RLIMIT_AS"},
		{"rlimit", kRlimit, [6]uint64{rl}, 0, 0, "{rlim_cur=100, rlim_max=200}"},
		{"rusagewho", kRusageWho, [6]uint64{0xffffffff}, 0, 0, "RUSAGE_CHILDREN"},
		{"rusage", kOutRusage, [6]uint64{ru}, 0, 0, "{ru_utime={tv_sec=0, tv_usec=0}, ru_stime={tv_sec=0, tv_usec=0}, ...}"},
		{"sysinfo", kOutSysinfo, [6]uint64{sip}, 0, 0, "{uptime=9, loads=[0, 0, 0], totalram=0, freeram=0, sharedram=0, bufferram=0, totalswap=0, freeswap=0, procs=300, totalhigh=0, freehigh=0, mem_unit=1}"},
		{"outint", kOutInt, [6]uint64{four}, 0, 0, "[42]"},
		{"outint-entry", kOutInt, [6]uint64{four}, 0, -1, h(four)},
		{"cloneflags", kCloneFlags, [6]uint64{0x20000000 | 0x20000}, 0, 0, "CLONE_NEWNS|CLONE_NEWPID"},
		{"grnd", kGrndFlags, [6]uint64{3}, 0, 0, "GRND_NONBLOCK|GRND_RANDOM"},
		{"tfd", kTfdFlags, [6]uint64{0o2000000}, 0, 0, "TFD_CLOEXEC"},
		{"sfd", kSfdFlags, [6]uint64{0o4000}, 0, 0, "SFD_NONBLOCK"},
		{"inflags", kInFlags, [6]uint64{0o2000000}, 0, 0, "IN_CLOEXEC"},
		{"inmask", kInotifyMask, [6]uint64{0x102}, 0, 0, "IN_MODIFY|IN_CREATE"},
		{"epollflags", kEpollFlags, [6]uint64{0o2000000}, 0, 0, "EPOLL_CLOEXEC"},
		{"epollop", kEpollOp, [6]uint64{3}, 0, 0, "EPOLL_CTL_MOD"},
		{"rename", kRenameFlags, [6]uint64{1}, 0, 0, "RENAME_NOREPLACE"},
		{"flock", kFlockOp, [6]uint64{6}, 0, 0, "LOCK_EX|LOCK_NB"},
		{"membarrier", kMembarrierCmd, [6]uint64{16}, 0, 0, "MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED"},
		{"fadvise", kFadvise, [6]uint64{2}, 0, 0, "POSIX_FADV_SEQUENTIAL"},
		{"prio", kPrioWhich, [6]uint64{0}, 0, 0, "PRIO_PROCESS"},
		{"sched", kSchedPolicy, [6]uint64{2}, 0, 0, "SCHED_RR"},
		{"ptrace", kPtraceReq, [6]uint64{0x4206}, 0, 0, "PTRACE_SEIZE"},
		{"mount", kMountFlags, [6]uint64{4096 | 16384}, 0, 0, "MS_BIND|MS_REC"},
		{"openhow", kOpenHow, [6]uint64{how, 24}, 0, 0, "{flags=O_RDWR|O_CREAT, mode=0600, resolve=RESOLVE_NO_SYMLINKS}"},
		{"dev", kDevT, [6]uint64{0x103}, 0, 0, "makedev(0x1, 0x3)"},
		{"fdset-null", kFdSet, [6]uint64{3, 0}, 1, 0, "NULL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Call{Nr: 0, Args: tc.args, Done: true, Result: tc.res}
			f := newFmtr(c, m.mem, Options{Out: true})
			got, keep := f.arg(tc.i, tc.k)
			if !keep {
				got = ""
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	tests := []struct {
		in   string
		more bool
		want string
	}{
		{"", false, `""`},
		{"\x00", false, `"\0"`},
		{"\x001", false, `"\0001"`},
		{"\x008", false, `"\08"`},
		{"\r\v\f", false, `"\r\v\f"`},
		{"\x7f\x80", true, `"\177\200"...`},
		{"héllo", false, `"h\303\251llo"`},
	}
	for _, tc := range tests {
		if got := quote([]byte(tc.in), tc.more, false); got != tc.want {
			t.Errorf("quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
