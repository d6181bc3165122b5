package strace

import "github.com/hermitdbg/hermit/detcore/abi"

// netTable covers sockets.
func netTable() map[int]sysc {
	return map[int]sysc{
		abi.SYS_SOCKET:      s(kSockDomain, kSockType, kSockProto),
		abi.SYS_SOCKETPAIR:  s(kSockDomain, kSockType, kSockProto, kOutFdPair),
		abi.SYS_CONNECT:     s(kFd, kSockAddr, kUint32),
		abi.SYS_BIND:        s(kFd, kSockAddr, kUint32),
		abi.SYS_LISTEN:      s(kFd, kInt),
		abi.SYS_ACCEPT:      s(kFd, kOutSockAddr, kOutLen),
		abi.SYS_ACCEPT4:     s(kFd, kOutSockAddr, kOutLen, kSockFlags),
		abi.SYS_GETSOCKNAME: s(kFd, kOutSockAddr, kOutLen),
		abi.SYS_GETPEERNAME: s(kFd, kOutSockAddr, kOutLen),
		abi.SYS_SENDTO:      s(kFd, kBuf, kUint, kMsgFlags, kSockAddr, kUint32),
		abi.SYS_RECVFROM:    s(kFd, kOutBuf, kUint, kMsgFlags, kOutSockAddr, kOutLen),
		abi.SYS_SENDMSG:     s(kFd, kMsghdr, kMsgFlags),
		abi.SYS_RECVMSG:     s(kFd, kOutMsghdr, kMsgFlags),
		abi.SYS_SENDMMSG:    s(kFd, kPtr, kUint32, kMsgFlags),
		abi.SYS_RECVMMSG:    s(kFd, kPtr, kUint32, kMsgFlags, kTimespec),
		abi.SYS_SHUTDOWN:    s(kFd, kShutdownHow),
		abi.SYS_SETSOCKOPT:  s(kFd, kSockLevel, kSockOpt, kSockOptVal, kUint32),
		abi.SYS_GETSOCKOPT:  s(kFd, kSockLevel, kSockOpt, kOutSockOptVal, kOutLen),
	}
}

// miscTable covers waiting for descriptors, time and the system.
func miscTable() map[int]sysc {
	return map[int]sysc{
		abi.SYS_POLL:            s(kPollFds, kUint32, kInt),
		abi.SYS_PPOLL:           s(kPollFds, kUint32, kTimespec, kSigset, kUint),
		abi.SYS_SELECT:          s(kInt, kFdSet, kFdSet, kFdSet, kTimeval),
		abi.SYS_PSELECT6:        s(kInt, kFdSet, kFdSet, kFdSet, kTimespec, kPtr),
		abi.SYS_EPOLL_CREATE:    s(kInt),
		abi.SYS_EPOLL_CREATE1:   s(kEpollFlags),
		abi.SYS_EPOLL_CTL:       s(kFd, kEpollOp, kFd, kEpollEvent),
		abi.SYS_EPOLL_WAIT:      s(kFd, kOutEpollEvents, kInt, kInt),
		abi.SYS_EPOLL_PWAIT:     s(kFd, kOutEpollEvents, kInt, kInt, kSigset, kUint),
		abi.SYS_EPOLL_PWAIT2:    s(kFd, kOutEpollEvents, kInt, kTimespec, kSigset, kUint),
		abi.SYS_NANOSLEEP:       s(kTimespec, kPtr),
		abi.SYS_CLOCK_NANOSLEEP: s(kClock, kTimerFlags, kTimespec, kPtr),
		abi.SYS_CLOCK_GETTIME:   s(kClock, kOutTimespec),
		abi.SYS_CLOCK_SETTIME:   s(kClock, kTimespec),
		abi.SYS_CLOCK_GETRES:    s(kClock, kOutTimespec),
		abi.SYS_GETTIMEOFDAY:    s(kOutTimeval, kPtr),
		abi.SYS_SETTIMEOFDAY:    s(kTimeval, kPtr),
		abi.SYS_TIME:            s(kOutLoff),
		abi.SYS_TIMER_CREATE:    s(kClock, kPtr, kPtr),
		abi.SYS_TIMER_SETTIME:   s(kInt, kTimerFlags, kItimerspec, kOutItimerspec),
		abi.SYS_TIMER_GETTIME:   s(kInt, kOutItimerspec),
		abi.SYS_TIMER_DELETE:    s(kInt),
		abi.SYS_UNAME:           s(kOutUtsname),
		abi.SYS_SYSINFO:         s(kOutSysinfo),
		abi.SYS_SETHOSTNAME:     s(kBuf, kUint),
		abi.SYS_SETDOMAINNAME:   s(kBuf, kUint),
		abi.SYS_BPF:             s(kInt, kPtr, kUint32),
		abi.SYS_PERF_EVENT_OPEN: s(kPtr, kInt, kInt, kFd, kHex),
	}
}
