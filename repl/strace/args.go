package strace

// kind says how to show one syscall argument. Kinds named Out... are
// written by the kernel and decoded only after a successful return (see
// Options.Out); until then they print as pointers. Kinds that need a
// length take it from the next argument unless they say otherwise.
type kind uint8

const (
	kHex             kind = iota // 0x1f, or 0
	kInt                         // a C int, in decimal
	kUint                        // an unsigned long (a size), in decimal
	kLong                        // a signed long (an offset), in decimal
	kUint32                      // an unsigned int, in decimal
	kPtr                         // NULL or 0x7ffd...
	kFd                          // a descriptor: an int
	kAtFd                        // a directory descriptor: AT_FDCWD or an int
	kPath                        // a NUL-terminated path, shown whole
	kStr                         // a NUL-terminated string, abbreviated
	kBuf                         // bytes, length in the next argument, abbreviated
	kOutBuf                      // bytes written by the call: length is the result
	kOutBufHex                   // OutBuf, every byte as \xNN (getrandom)
	kOutStr                      // a NUL-terminated string written by the call
	kMode                        // permission bits in octal: 0644
	kOpenFlags                   // O_RDONLY|O_CLOEXEC
	kOpenMode                    // open's mode: shown only with O_CREAT or O_TMPFILE in the previous argument
	kFileFlags                   // O_* flags without an access mode (pipe2, dup3)
	kMmapProt                    // PROT_READ|PROT_WRITE
	kMmapFlags                   // MAP_PRIVATE|MAP_ANONYMOUS
	kMremapFlags                 // MREMAP_MAYMOVE
	kMremapAddr                  // mremap's new address: shown only with MREMAP_FIXED
	kMadvise                     // MADV_DONTNEED
	kMsyncFlags                  // MS_SYNC
	kMlockallFlags               // MCL_CURRENT
	kMlock2Flags                 // MLOCK_ONFAULT
	kSignal                      // SIGTERM
	kSigHow                      // SIG_BLOCK
	kSigset                      // [INT TERM], size in the next argument
	kOutSigset                   // Sigset written by the call
	kSigmask                     // Sigset, size in argument 3 (rt_sigprocmask)
	kOutSigmask                  // kSigmask written by the call
	kSigaction                   // {sa_handler=..., ...}
	kOutSigaction                // Sigaction written by the call
	kStack                       // stack_t
	kOutStack                    // stack_t written by the call
	kWhence                      // SEEK_SET
	kSockDomain                  // AF_INET
	kSockType                    // SOCK_STREAM|SOCK_CLOEXEC
	kSockProto                   // IPPROTO_TCP, by the domain in argument 0
	kSockFlags                   // SOCK_CLOEXEC|SOCK_NONBLOCK
	kSockLevel                   // SOL_SOCKET
	kSockOpt                     // SO_REUSEADDR, by the level in the previous argument
	kSockOptVal                  // setsockopt's value: [1] for an int, length next
	kOutSockOptVal               // getsockopt's value, length pointer next
	kSockAddr                    // {sa_family=AF_INET, ...}, length next
	kOutSockAddr                 // SockAddr written by the call, length pointer next
	kOutLen                      // an int written by the call: [16]
	kMsgFlags                    // MSG_NOSIGNAL
	kShutdownHow                 // SHUT_WR
	kMsghdr                      // struct msghdr for sendmsg
	kOutMsghdr                   // struct msghdr for recvmsg
	kPollFds                     // [{fd=3, events=POLLIN}], count next
	kTimespec                    // {tv_sec=1, tv_nsec=0}
	kOutTimespec                 // Timespec written by the call
	kTimeval                     // {tv_sec=1, tv_usec=0}
	kOutTimeval                  // Timeval written by the call
	kItimerspec                  // {it_interval=..., it_value=...}
	kOutItimerspec               // Itimerspec written by the call
	kItimerval                   // struct itimerval
	kOutItimerval                // Itimerval written by the call
	kUtimes                      // utimensat's [{...}, {...}]
	kClock                       // CLOCK_MONOTONIC
	kTimerFlags                  // TIMER_ABSTIME
	kItimerWhich                 // ITIMER_REAL
	kAtFlags                     // AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH
	kAccessAtFlags               // AT_EACCESS
	kStatxFlags                  // AT_STATX_SYNC_AS_STAT|...
	kStatxMask                   // STATX_BASIC_STATS
	kAccessMode                  // R_OK|W_OK, or F_OK
	kOutStat                     // {st_mode=S_IFREG|0644, st_size=3010, ...}
	kOutStatx                    // {stx_mask=..., ...}
	kIovec                       // [{iov_base="...", iov_len=5}], count next
	kOutIovec                    // Iovec filled by the call: the result says how much
	kArgv                        // ["/bin/cat", "file"]
	kEnvp                        // 0x7ffd... /* 30 vars */
	kWaitOpts                    // WNOHANG|__WALL (waitid)
	kWait4Opts                   // WNOHANG|WUNTRACED (wait4)
	kOutWaitStatus               // [{WIFEXITED(s) && WEXITSTATUS(s) == 0}]
	kIdType                      // P_PID
	kRlimitRes                   // RLIMIT_NOFILE
	kRlimit                      // {rlim_cur=1024, rlim_max=RLIM64_INFINITY}
	kOutRlimit                   // Rlimit written by the call
	kRusageWho                   // RUSAGE_SELF
	kOutRusage                   // {ru_utime=..., ru_stime=..., ...}
	kOutUtsname                  // {sysname="Linux", nodename="...", ...}
	kOutSysinfo                  // {uptime=..., ...}
	kOutFdPair                   // [3, 4]
	kOutInt                      // [N]
	kInInt                       // [N] read at entry (sendfile's offset)
	kOutCPUSet                   // [0 1 2 3], size in the previous argument
	kCPUSet                      // [0 1 2 3], size in the previous argument
	kOutDirents                  // 0x... /* 10 entries */
	kCloneFlags                  // CLONE_NEWNS|... without an exit signal
	kGrndFlags                   // GRND_NONBLOCK
	kEfdFlags                    // EFD_CLOEXEC
	kTfdFlags                    // TFD_CLOEXEC
	kTfdSetFlags                 // TFD_TIMER_ABSTIME
	kSfdFlags                    // SFD_CLOEXEC
	kInFlags                     // IN_CLOEXEC
	kInotifyMask                 // IN_MODIFY|IN_CREATE
	kEpollFlags                  // EPOLL_CLOEXEC
	kEpollOp                     // EPOLL_CTL_ADD
	kEpollEvent                  // {events=EPOLLIN, data={u32=3, u64=3}}
	kOutEpollEvents              // EpollEvent array written by the call: the result says how many
	kFdSet                       // [3 4], nfds in argument 0
	kOutFdSet                    // FdSet after the call
	kRenameFlags                 // RENAME_NOREPLACE
	kFlockOp                     // LOCK_EX|LOCK_NB
	kMemfdFlags                  // MFD_CLOEXEC
	kPidfdFlags                  // PIDFD_NONBLOCK
	kMembarrierCmd               // MEMBARRIER_CMD_QUERY
	kFadvise                     // POSIX_FADV_SEQUENTIAL
	kFallocMode                  // FALLOC_FL_KEEP_SIZE
	kPrioWhich                   // PRIO_PROCESS
	kSchedPolicy                 // SCHED_OTHER
	kPtraceReq                   // PTRACE_CONT
	kMountFlags                  // MS_BIND|MS_REC
	kUmountFlags                 // MNT_DETACH
	kCloseRangeFlags             // CLOSE_RANGE_CLOEXEC
	kOpenHow                     // {flags=O_RDONLY, resolve=0}, size next
	kSeccompOp                   // SECCOMP_SET_MODE_FILTER
	kXattrFlags                  // XATTR_CREATE
	kSpliceFlags                 // SPLICE_F_MOVE
	kUringEnterFlags             // IORING_ENTER_GETEVENTS
	kDevT                        // makedev(0x1, 0x3)
	kMknodMode                   // S_IFCHR|0600
	kOutPathLen                  // getcwd's buffer: a path of result bytes
	kOutLoff                     // an off_t updated by the call: [N]
	kNumKinds
)

// a returns argument j, or 0 past the sixth.
func (f *fmtr) a(j int) uint64 {
	if j < 0 || j >= len(f.c.Args) {
		return 0
	}
	return f.c.Args[j]
}

// outPtr shows an out-argument that cannot be decoded yet.
func (f *fmtr) outOr(addr uint64, decode func() string) string {
	if addr == 0 {
		return "NULL"
	}
	if !f.out() {
		return ptr(addr)
	}
	return decode()
}

// arg formats argument i as kind k; keep is false for an argument that
// strace leaves out (open's mode without O_CREAT).
func (f *fmtr) arg(i int, k kind) (s string, keep bool) {
	v := f.a(i)
	next := f.a(i + 1)
	i32 := int64(int32(v))
	switch k {
	case kHex:
		return hex(v), true
	case kInt, kFd:
		return itoa(i32), true
	case kUint:
		return utoa(v), true
	case kLong:
		return itoa(int64(v)), true
	case kUint32:
		return utoa(v & 0xffffffff), true
	case kPtr:
		return ptr(v), true
	case kAtFd:
		if i32 == -100 {
			return "AT_FDCWD", true
		}
		return itoa(i32), true
	case kPath:
		return f.path(v), true
	case kStr:
		return f.str(v, f.max), true
	case kBuf:
		return f.buf(v, next, false), true
	case kOutBuf, kOutBufHex:
		return f.outOr(v, func() string { return f.buf(v, uint64(f.result()), k == kOutBufHex) }), true
	case kOutStr:
		return f.outOr(v, func() string { return f.str(v, f.max) }), true
	case kOutPathLen:
		return f.outOr(v, func() string { return f.path(v) }), true
	case kMode:
		return modeString(v&0xffffffff, false), true
	case kMknodMode:
		return modeString(v&0xffffffff, true), true
	case kOpenFlags:
		return openFlagsString(v & 0xffffffff), true
	case kOpenMode:
		if f.a(i-1)&(oCreat|oTmpfile) == 0 {
			return "", false
		}
		return modeString(v&0xffffffff, false), true
	case kFileFlags:
		return flags(v, openFlags, "0"), true
	case kMmapProt:
		return flags(v, mmapProt, "PROT_NONE"), true
	case kMmapFlags:
		return mmapFlagsString(v), true
	case kMremapFlags:
		return flags(v, mremapFlags, "0"), true
	case kMremapAddr:
		if f.a(i-1)&2 == 0 {
			return "", false
		}
		return ptr(v), true
	case kMadvise:
		return enum(i32, madvise), true
	case kMsyncFlags:
		return flags(v, msyncFlags, "0"), true
	case kMlockallFlags:
		return flags(v, mlockallFlags, "0"), true
	case kMlock2Flags:
		return flags(v, mlock2Flags, "0"), true
	case kSignal:
		return sigArg(v), true
	case kSigHow:
		return enum(i32, sigHows), true
	case kSigset:
		return f.sigset(v, next), true
	case kOutSigset:
		return f.outOr(v, func() string { return f.sigset(v, next) }), true
	case kSigmask:
		return f.sigset(v, f.a(3)), true
	case kOutSigmask:
		return f.outOr(v, func() string { return f.sigset(v, f.a(3)) }), true
	case kSigaction:
		return f.nullOr(v, f.sigaction), true
	case kOutSigaction:
		return f.outOr(v, func() string { return f.sigaction(v) }), true
	case kStack:
		return f.nullOr(v, f.stack), true
	case kOutStack:
		return f.outOr(v, func() string { return f.stack(v) }), true
	case kWhence:
		return enum(i32, whences), true
	case kSockDomain:
		return enum(i32, sockDomains), true
	case kSockType:
		return sockTypeString(v), true
	case kSockProto:
		return sockProtoString(f.a(0), v), true
	case kSockFlags:
		return flags(v, sockFlags, "0"), true
	case kSockLevel:
		return enum(i32, sockLevels), true
	case kSockOpt:
		return sockOptString(f.a(i-1), v), true
	case kSockOptVal:
		if next == 4 {
			return f.nullOr(v, f.intAt), true
		}
		return f.buf(v, next, false), true
	case kOutSockOptVal:
		return f.outOr(v, func() string {
			n, ok := f.u32(next)
			if !ok {
				return ptr(v)
			}
			if n == 4 {
				return f.intAt(v)
			}
			return f.buf(v, uint64(n), false)
		}), true
	case kSockAddr:
		return f.sockaddr(v, next&0xffffffff), true
	case kOutSockAddr:
		return f.outOr(v, func() string {
			n, ok := f.u32(next)
			if !ok {
				return ptr(v)
			}
			return f.sockaddr(v, uint64(n))
		}), true
	case kOutLen:
		// A value-result length: strace shows it even when the call failed.
		return f.nullOr(v, f.intAt), true
	case kOutInt:
		return f.outOr(v, func() string { return f.intAt(v) }), true
	case kInInt:
		return f.nullOr(v, f.intAt), true
	case kOutLoff:
		return f.nullOr(v, func(a uint64) string { return f.u64At(a, false) }), true
	case kMsgFlags:
		return flags(v&0xffffffff, msgFlags, "0"), true
	case kShutdownHow:
		return enum(i32, shutdownHows), true
	case kMsghdr:
		return f.msghdr(v, -1), true
	case kOutMsghdr:
		return f.outOr(v, func() string { return f.msghdr(v, f.c.Result) }), true
	case kPollFds:
		return f.pollfds(v, next&0xffffffff, false), true
	case kTimespec:
		return f.nullOr(v, f.timespec), true
	case kOutTimespec:
		return f.outOr(v, func() string { return f.timespec(v) }), true
	case kTimeval:
		return f.nullOr(v, f.timeval), true
	case kOutTimeval:
		return f.outOr(v, func() string { return f.timeval(v) }), true
	case kItimerspec:
		return f.nullOr(v, f.itimerspec), true
	case kOutItimerspec:
		return f.outOr(v, func() string { return f.itimerspec(v) }), true
	case kItimerval:
		return f.nullOr(v, f.itimerval), true
	case kOutItimerval:
		return f.outOr(v, func() string { return f.itimerval(v) }), true
	case kUtimes:
		return f.nullOr(v, f.timespec2), true
	case kClock:
		return enum(i32, clocks), true
	case kTimerFlags:
		return flags(v, timerFlags, "0"), true
	case kItimerWhich:
		return enum(i32, itimers), true
	case kAtFlags:
		return flags(v&0xffffffff, atFlags, "0"), true
	case kAccessAtFlags:
		return flags(v&0xffffffff, accessAtFlags, "0"), true
	case kStatxFlags:
		return statxFlagsString(v & 0xffffffff), true
	case kStatxMask:
		return flags(v&0xffffffff, statxMask, "0"), true
	case kAccessMode:
		return flags(v&0xffffffff, accessModes, "F_OK"), true
	case kOutStat:
		return f.outOr(v, func() string { return f.stat(v) }), true
	case kOutStatx:
		return f.outOr(v, func() string { return f.statx(v) }), true
	case kIovec:
		return f.iovec(v, next, -1), true
	case kOutIovec:
		return f.outOr(v, func() string { return f.iovec(v, next, f.c.Result) }), true
	case kArgv:
		return f.strArray(v), true
	case kEnvp:
		return f.envp(v), true
	case kWaitOpts:
		return flags(v&0xffffffff, waitOpts, "0"), true
	case kWait4Opts:
		return flags(v&0xffffffff, wait4Opts, "0"), true
	case kOutWaitStatus:
		return f.outOr(v, func() string {
			s, ok := f.u32(v)
			if !ok {
				return ptr(v)
			}
			return waitStatus(s)
		}), true
	case kIdType:
		return enum(i32, idTypes), true
	case kRlimitRes:
		return enum(i32, rlimits), true
	case kRlimit:
		return f.nullOr(v, f.rlimit), true
	case kOutRlimit:
		return f.outOr(v, func() string { return f.rlimit(v) }), true
	case kRusageWho:
		return enum(i32, rusageWho), true
	case kOutRusage:
		return f.outOr(v, func() string { return f.rusage(v) }), true
	case kOutUtsname:
		return f.outOr(v, func() string { return f.utsname(v) }), true
	case kOutSysinfo:
		return f.outOr(v, func() string { return f.sysinfo(v) }), true
	case kOutFdPair:
		return f.outOr(v, func() string { return f.intPair(v) }), true
	case kOutCPUSet:
		return f.outOr(v, func() string { return f.cpuset(v, uint64(f.result())) }), true
	case kCPUSet:
		return f.cpuset(v, f.a(i-1)), true
	case kOutDirents:
		return f.outOr(v, func() string { return f.dirents(v, f.result()) }), true
	case kCloneFlags:
		return flags(v, cloneFlags, "0"), true
	case kGrndFlags:
		return flags(v, grndFlags, "0"), true
	case kEfdFlags:
		return flags(v, efdFlags, "0"), true
	case kTfdFlags:
		return flags(v, tfdFlags, "0"), true
	case kTfdSetFlags:
		return flags(v, tfdSetFlags, "0"), true
	case kSfdFlags:
		return flags(v, sfdFlags, "0"), true
	case kInFlags:
		return flags(v, inFlags, "0"), true
	case kInotifyMask:
		return flags(v&0xffffffff, inotifyMask, "0"), true
	case kEpollFlags:
		return flags(v, epollFlags, "0"), true
	case kEpollOp:
		return enum(i32, epollOps), true
	case kEpollEvent:
		return f.nullOr(v, f.epollEvent), true
	case kOutEpollEvents:
		return f.outOr(v, func() string { return f.epollEvents(v, uint64(f.result())) }), true
	case kFdSet:
		return f.fdset(v, f.a(0)&0xffffffff), true
	case kOutFdSet:
		return f.outOr(v, func() string { return f.fdset(v, f.a(0)&0xffffffff) }), true
	case kRenameFlags:
		return flags(v&0xffffffff, renameFlags, "0"), true
	case kFlockOp:
		return flags(v&0xffffffff, flockOps, "0"), true
	case kMemfdFlags:
		return flags(v&0xffffffff, memfdFlags, "0"), true
	case kPidfdFlags:
		return flags(v&0xffffffff, pidfdFlags, "0"), true
	case kMembarrierCmd:
		return enum(i32, membarrierCmds), true
	case kFadvise:
		return enum(i32, fadvise), true
	case kFallocMode:
		return flags(v&0xffffffff, fallocModes, "0"), true
	case kPrioWhich:
		return enum(i32, prioWhich), true
	case kSchedPolicy:
		return enum(i32, schedPolicies), true
	case kPtraceReq:
		return enum(int64(v), ptraceReqs), true
	case kMountFlags:
		return flags(v, mountFlags, "0"), true
	case kUmountFlags:
		return flags(v, umountFlags, "0"), true
	case kCloseRangeFlags:
		return flags(v&0xffffffff, closeRange, "0"), true
	case kOpenHow:
		return f.nullOr(v, func(a uint64) string { return f.openHow(a, next) }), true
	case kSeccompOp:
		return enum(i32, seccompOps), true
	case kXattrFlags:
		return flags(v&0xffffffff, xattrFlags, "0"), true
	case kSpliceFlags:
		return flags(v&0xffffffff, spliceFlags, "0"), true
	case kUringEnterFlags:
		return flags(v&0xffffffff, uringEnter, "0"), true
	case kDevT:
		return makedev(v), true
	}
	return hex(v), true
}

// nullOr decodes a non-NULL pointer with decode.
func (f *fmtr) nullOr(addr uint64, decode func(uint64) string) string {
	if addr == 0 {
		return "NULL"
	}
	return decode(addr)
}
