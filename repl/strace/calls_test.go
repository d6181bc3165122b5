package strace

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore/abi"
)

func neg(e int) int64 { return int64(-e) }

// u is a negative int argument as a register holds it.
func u(v int64) uint64 { return uint64(v) }

func h(a uint64) string { return fmt.Sprintf("%#x", a) }

type callCase struct {
	name string
	c    Call
	opt  Options
	want string
}

// realCalls builds calls that glibc, Go and Python programs make, with the
// memory they point at.
func realCalls() (*image, []callCase) {
	m := newImage()
	out := Options{Out: true}
	passwd := m.str("/etc/passwd")
	nope := m.str("/nope")
	rootLine := "root:x:0:0:root:/root:/bin/bash\nbin:x:1:1::/:/usr/bin/nologin\n"
	rbuf := m.put([]byte(rootLine))
	hello := m.put([]byte("hello\n"))
	stat := make([]byte, 144)
	binary.LittleEndian.PutUint32(stat[24:], 0o100644)
	binary.LittleEndian.PutUint64(stat[48:], 3010)
	statp := m.put(stat)
	tty := make([]byte, 144)
	binary.LittleEndian.PutUint32(tty[24:], 0o20620)
	binary.LittleEndian.PutUint64(tty[40:], 0x8800)
	ttyp := m.put(tty)
	ts := m.u64s(1, 500000000)
	fds := m.u32s(3, 4)
	poll := m.put([]byte{3, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0})
	act := m.u64s(0x401000, 0x04000000|0x10000000|0x4, 0x7f0000001000, 1<<(2-1)|1<<(15-1))
	set := m.u64s(1<<(17-1) | 1<<(2-1))
	all := m.u64s(^uint64(0) &^ (1<<31 | 1<<32))
	iov1, iov2 := m.put([]byte("ab")), m.put([]byte("cde"))
	iov := m.u64s(iov1, 2, iov2, 3)
	bin, arg1 := m.str("/bin/cat"), m.str("file")
	argv := m.u64s(bin, arg1, 0)
	envp := m.u64s(arg1, arg1, 0)
	sin := m.put([]byte{2, 0, 0, 80, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	sun := m.put(append([]byte{1, 0}, "/run/x.sock\x00"...))
	sin6 := make([]byte, 28)
	sin6[0], sin6[2], sin6[3], sin6[23] = 10, 0x01, 0xbb, 1
	sin6p := m.put(sin6)
	sixteen := m.u32s(16)
	one := m.u32s(1)
	rlim := m.u64s(1024, 1<<20)
	rlimInf := m.u64s(8192*1024, ^uint64(0))
	uts := make([]byte, 6*65)
	copy(uts, "Linux")
	copy(uts[65:], "box")
	utsp := m.put(uts)
	winsz := m.put([]byte{24, 0, 80, 0, 0, 0, 0, 0})
	termios := m.u32s(0x500, 5, 0o277, 0o105073)
	status := m.u32s(3 << 8)
	killed := m.u32s(9)
	epev := m.put([]byte{1, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0})
	cpus := m.put([]byte{0x0f, 0, 0, 0, 0, 0, 0, 0})
	name := m.str("worker-1")
	fsbase := m.u64s(0x7f00deadbeef)
	clone3 := m.u64s(0x3d0f00, 0, 0x7f0000002000, 0x7f0000002000, 0, 0x7f0000100000, 0x100000, 0x7f0000003000, 0, 0, 0)
	dirents := m.put(append(append(make([]byte, 16), 24, 0), make([]byte, 6+24)...))
	binary.LittleEndian.PutUint16(m.data[dirents-imageBase+24+16:], 24)
	rnd := m.put([]byte{0x12, 0xab, 0x00, 0xff})
	elf := m.put([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00"))
	lock := m.put([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	cwd := m.str("/home/user")
	fdset := m.u64s(1<<3 | 1<<5)
	tv := m.u64s(5, 0)
	ptid := m.u32s(4)
	clone3b := m.u64s(0x100000, 0, 0, ptid, 17, 0, 0, 0)
	empty := m.str("")
	exe := m.str("/proc/self/exe")
	tail := m.put([]byte("/abc")) // unterminated: the last bytes mapped

	cases := []callCase{
		{"openat", Call{Nr: abi.SYS_OPENAT, Args: [6]uint64{u(-100), passwd, 0o2000000}, Done: true, Result: 3}, out,
			`openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3`},
		{"openat-creat", Call{Nr: abi.SYS_OPENAT, Args: [6]uint64{u(-100), passwd, 0o1101, 0o644}, Done: true, Result: 4}, out,
			`openat(AT_FDCWD, "/etc/passwd", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 4`},
		{"openat-enoent", Call{Nr: abi.SYS_OPENAT, Args: [6]uint64{u(-100), nope, 0}, Done: true, Result: neg(2)}, out,
			`openat(AT_FDCWD, "/nope", O_RDONLY) = -1 ENOENT (No such file or directory)`},
		{"open", Call{Nr: abi.SYS_OPEN, Args: [6]uint64{passwd, 0o202}, Done: true, Result: 5}, out,
			`open("/etc/passwd", O_RDWR|O_EXCL) = 5`},
		{"read", Call{Nr: abi.SYS_READ, Args: [6]uint64{3, rbuf, 4096}, Done: true, Result: 1024}, out,
			`read(3, "root:x:0:0:root:/root:/bin/bash\n"..., 4096) = 1024`},
		{"read-entry", Call{Nr: abi.SYS_READ, Args: [6]uint64{3, rbuf, 4096}}, out,
			"read(3, " + h(rbuf) + ", 4096) = ?"},
		{"read-nopending", Call{Nr: abi.SYS_READ, Args: [6]uint64{3, rbuf, 4096}}, Options{NoPending: true},
			"read(3, " + h(rbuf) + ", 4096)"},
		{"read-eof", Call{Nr: abi.SYS_READ, Args: [6]uint64{3, rbuf, 4096}, Done: true, Result: 0}, out,
			`read(3, "", 4096) = 0`},
		{"read-eintr", Call{Nr: abi.SYS_READ, Args: [6]uint64{0, rbuf, 10}, Done: true, Result: neg(512)}, out,
			"read(0, " + h(rbuf) + ", 10) = ? ERESTARTSYS (To be restarted if SA_RESTART is set)"},
		{"read-elf", Call{Nr: abi.SYS_READ, Args: [6]uint64{3, elf, 832}, Done: true, Result: 20}, out,
			`read(3, "\177ELF\2\1\1\0\0\0\0\0\0\0\0\0\3\0>\0", 832) = 20`},
		{"write", Call{Nr: abi.SYS_WRITE, Args: [6]uint64{1, hello, 6}, Done: true, Result: 6}, out,
			`write(1, "hello\n", 6) = 6`},
		{"write-max4", Call{Nr: abi.SYS_WRITE, Args: [6]uint64{1, hello, 6}, Done: true, Result: 6}, Options{MaxString: 4},
			`write(1, "hell"..., 6) = 6`},
		{"write-epipe", Call{Nr: abi.SYS_WRITE, Args: [6]uint64{1, hello, 6}, Done: true, Result: neg(32)}, out,
			`write(1, "hello\n", 6) = -1 EPIPE (Broken pipe)`},
		{"pread64", Call{Nr: abi.SYS_PREAD64, Args: [6]uint64{3, hello, 6, 100}, Done: true, Result: 6}, out,
			`pread64(3, "hello\n", 6, 100) = 6`},
		{"close", Call{Nr: abi.SYS_CLOSE, Args: [6]uint64{3}, Done: true}, out, `close(3) = 0`},
		{"close-ebadf", Call{Nr: abi.SYS_CLOSE, Args: [6]uint64{99}, Done: true, Result: neg(9)}, out,
			`close(99) = -1 EBADF (Bad file descriptor)`},
		{"newfstatat", Call{Nr: abi.SYS_NEWFSTATAT, Args: [6]uint64{u(-100), passwd, statp, 0}, Done: true}, out,
			`newfstatat(AT_FDCWD, "/etc/passwd", {st_mode=S_IFREG|0644, st_size=3010, ...}, 0) = 0`},
		{"fstat-empty-path", Call{Nr: abi.SYS_NEWFSTATAT, Args: [6]uint64{3, empty, statp, 0x1000}, Done: true}, out,
			`newfstatat(3, "", {st_mode=S_IFREG|0644, st_size=3010, ...}, AT_EMPTY_PATH) = 0`},
		{"fstat-tty", Call{Nr: abi.SYS_FSTAT, Args: [6]uint64{1, ttyp}, Done: true}, out,
			`fstat(1, {st_mode=S_IFCHR|0620, st_rdev=makedev(0x88, 0), ...}) = 0`},
		{"lseek", Call{Nr: abi.SYS_LSEEK, Args: [6]uint64{3, u(-10), 2}, Done: true, Result: 90}, out,
			`lseek(3, -10, SEEK_END) = 90`},
		{"mmap", Call{Nr: abi.SYS_MMAP, Args: [6]uint64{0, 8192, 3, 0x22, u(-1), 0}, Done: true, Result: 0x7ffff7fc0000}, out,
			`mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7fc0000`},
		{"mmap-file", Call{Nr: abi.SYS_MMAP, Args: [6]uint64{0x7f0000000000, 4096, 5, 0x812, 3, 0x1000}, Done: true, Result: 0x7f0000000000}, out,
			`mmap(0x7f0000000000, 4096, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x1000) = 0x7f0000000000`},
		{"mmap-enomem", Call{Nr: abi.SYS_MMAP, Args: [6]uint64{0, 1 << 40, 0, 0x22, u(-1), 0}, Done: true, Result: neg(12)}, out,
			`mmap(NULL, 1099511627776, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = -1 ENOMEM (Cannot allocate memory)`},
		{"mprotect", Call{Nr: abi.SYS_MPROTECT, Args: [6]uint64{0x7f0000000000, 4096, 1}, Done: true}, out,
			`mprotect(0x7f0000000000, 4096, PROT_READ) = 0`},
		{"brk", Call{Nr: abi.SYS_BRK, Done: true, Result: 0x555555559000}, out, `brk(NULL) = 0x555555559000`},
		{"futex-wait", Call{Nr: abi.SYS_FUTEX, Args: [6]uint64{0x7ffff7dd1990, 128, 3, 0}, Done: true}, out,
			`futex(0x7ffff7dd1990, FUTEX_WAIT_PRIVATE, 3, NULL) = 0`},
		{"futex-wake", Call{Nr: abi.SYS_FUTEX, Args: [6]uint64{0x7ffff7dd1990, 129, 1}, Done: true, Result: 1}, out,
			`futex(0x7ffff7dd1990, FUTEX_WAKE_PRIVATE, 1) = 1`},
		{"futex-bitset", Call{Nr: abi.SYS_FUTEX, Args: [6]uint64{0x7ffff7dd1990, 9 | 128 | 256, 0, ts, 0, 0xffffffff}, Done: true, Result: neg(110)}, out,
			`futex(0x7ffff7dd1990, FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME, 0, {tv_sec=1, tv_nsec=500000000}, FUTEX_BITSET_MATCH_ANY) = -1 ETIMEDOUT (Connection timed out)`},
		{"clone3", Call{Nr: abi.SYS_CLONE3, Args: [6]uint64{clone3, 88}, Done: true, Result: 4}, out,
			`clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, child_tid=0x7f0000002000, parent_tid=0x7f0000002000, exit_signal=0, stack=0x7f0000100000, stack_size=0x100000, tls=0x7f0000003000}, 88) = 4`},
		{"clone3-parent-tid", Call{Nr: abi.SYS_CLONE3, Args: [6]uint64{clone3b, 64}, Done: true, Result: 4}, out,
			"clone3({flags=CLONE_PARENT_SETTID, parent_tid=" + h(ptid) + ", exit_signal=SIGCHLD, stack=NULL, stack_size=0} => {parent_tid=[4]}, 64) = 4"},
		{"getpeername-enotconn", Call{Nr: abi.SYS_GETPEERNAME, Args: [6]uint64{3, sin, sixteen}, Done: true, Result: neg(107)}, out,
			"getpeername(3, " + h(sin) + ", [16]) = -1 ENOTCONN (Transport endpoint is not connected)"},
		{"clone", Call{Nr: abi.SYS_CLONE, Args: [6]uint64{0x1200000 | 17, 0, 0, 0x7f0000004000}, Done: true, Result: 1234}, out,
			`clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f0000004000) = 1234`},
		{"exit_group", Call{Nr: abi.SYS_EXIT_GROUP, Args: [6]uint64{3}}, out, `exit_group(3) = ?`},
		{"execve", Call{Nr: abi.SYS_EXECVE, Args: [6]uint64{bin, argv, envp}, Done: true}, out,
			`execve("/bin/cat", ["/bin/cat", "file"], ` + h(envp) + ` /* 2 vars */) = 0`},
		{"rt_sigaction", Call{Nr: abi.SYS_RT_SIGACTION, Args: [6]uint64{2, act, 0, 8}, Done: true}, out,
			`rt_sigaction(SIGINT, {sa_handler=0x401000, sa_mask=[INT TERM], sa_flags=SA_SIGINFO|SA_RESTORER|SA_RESTART, sa_restorer=0x7f0000001000}, NULL, 8) = 0`},
		{"rt_sigprocmask", Call{Nr: abi.SYS_RT_SIGPROCMASK, Args: [6]uint64{0, set, 0, 8}, Done: true}, out,
			`rt_sigprocmask(SIG_BLOCK, [INT CHLD], NULL, 8) = 0`},
		{"rt_sigprocmask-all", Call{Nr: abi.SYS_RT_SIGPROCMASK, Args: [6]uint64{2, all, set, 8}, Done: true}, out,
			`rt_sigprocmask(SIG_SETMASK, ~[RTMIN RTMIN+1], [INT CHLD], 8) = 0`},
		{"writev", Call{Nr: abi.SYS_WRITEV, Args: [6]uint64{1, iov, 2}, Done: true, Result: 5}, out,
			`writev(1, [{iov_base="ab", iov_len=2}, {iov_base="cde", iov_len=3}], 2) = 5`},
		{"readv-short", Call{Nr: abi.SYS_READV, Args: [6]uint64{0, iov, 2}, Done: true, Result: 3}, out,
			`readv(0, [{iov_base="ab", iov_len=2}, {iov_base="c", iov_len=3}], 2) = 3`},
		{"poll", Call{Nr: abi.SYS_POLL, Args: [6]uint64{poll, 2, u(-1)}, Done: true, Result: 1}, out,
			`poll([{fd=3, events=POLLIN}, {fd=4, events=POLLOUT}], 2, -1) = 1`},
		{"pipe2", Call{Nr: abi.SYS_PIPE2, Args: [6]uint64{fds, 0o2000000}, Done: true}, out,
			`pipe2([3, 4], O_CLOEXEC) = 0`},
		{"socket", Call{Nr: abi.SYS_SOCKET, Args: [6]uint64{2, 1 | 0o2000000, 6}, Done: true, Result: 5}, out,
			`socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_TCP) = 5`},
		{"connect", Call{Nr: abi.SYS_CONNECT, Args: [6]uint64{5, sin, 16}, Done: true, Result: neg(111)}, out,
			`connect(5, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 ECONNREFUSED (Connection refused)`},
		{"connect-unix", Call{Nr: abi.SYS_CONNECT, Args: [6]uint64{5, sun, 110}, Done: true, Result: neg(2)}, out,
			`connect(5, {sa_family=AF_UNIX, sun_path="/run/x.sock"}, 110) = -1 ENOENT (No such file or directory)`},
		{"bind6", Call{Nr: abi.SYS_BIND, Args: [6]uint64{5, sin6p, 28}, Done: true}, out,
			`bind(5, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0`},
		{"accept4", Call{Nr: abi.SYS_ACCEPT4, Args: [6]uint64{5, sin, sixteen, 0o2000000}, Done: true, Result: 6}, out,
			`accept4(5, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("127.0.0.1")}, [16], SOCK_CLOEXEC) = 6`},
		{"setsockopt", Call{Nr: abi.SYS_SETSOCKOPT, Args: [6]uint64{5, 1, 2, one, 4}, Done: true}, out,
			`setsockopt(5, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0`},
		{"sendto", Call{Nr: abi.SYS_SENDTO, Args: [6]uint64{5, hello, 6, 0x4000, 0, 0}, Done: true, Result: 6}, out,
			`sendto(5, "hello\n", 6, MSG_NOSIGNAL, NULL, 0) = 6`},
		{"recvfrom", Call{Nr: abi.SYS_RECVFROM, Args: [6]uint64{5, hello, 100, 0, 0, 0}, Done: true, Result: 5}, out,
			`recvfrom(5, "hello", 100, 0, NULL, NULL) = 5`},
		{"prlimit64", Call{Nr: abi.SYS_PRLIMIT64, Args: [6]uint64{0, 7, 0, rlim}, Done: true}, out,
			`prlimit64(0, RLIMIT_NOFILE, NULL, {rlim_cur=1*1024, rlim_max=1024*1024}) = 0`},
		{"getrlimit", Call{Nr: abi.SYS_GETRLIMIT, Args: [6]uint64{3, rlimInf}, Done: true}, out,
			`getrlimit(RLIMIT_STACK, {rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}) = 0`},
		{"uname", Call{Nr: abi.SYS_UNAME, Args: [6]uint64{utsp}, Done: true}, out,
			`uname({sysname="Linux", nodename="box", ...}) = 0`},
		{"ioctl-tcgets", Call{Nr: abi.SYS_IOCTL, Args: [6]uint64{1, 0x5401, termios}, Done: true}, out,
			`ioctl(1, TCGETS, {B38400 opost isig icanon echo ...}) = 0`},
		{"ioctl-enotty", Call{Nr: abi.SYS_IOCTL, Args: [6]uint64{3, 0x5401, termios}, Done: true, Result: neg(25)}, out,
			"ioctl(3, TCGETS, " + h(termios) + ") = -1 ENOTTY (Inappropriate ioctl for device)"},
		{"ioctl-winsz", Call{Nr: abi.SYS_IOCTL, Args: [6]uint64{1, 0x5413, winsz}, Done: true}, out,
			`ioctl(1, TIOCGWINSZ, {ws_row=24, ws_col=80, ws_xpixel=0, ws_ypixel=0}) = 0`},
		{"ioctl-fionread", Call{Nr: abi.SYS_IOCTL, Args: [6]uint64{0, 0x541B, sixteen}, Done: true}, out,
			`ioctl(0, FIONREAD, [16]) = 0`},
		{"ioctl-unknown", Call{Nr: abi.SYS_IOCTL, Args: [6]uint64{0, 0xc0045499, 0x1000}, Done: true, Result: neg(22)}, out,
			`ioctl(0, _IOC(_IOC_READ|_IOC_WRITE, 0x54, 0x99, 0x4), 0x1000) = -1 EINVAL (Invalid argument)`},
		{"fcntl-getfl", Call{Nr: abi.SYS_FCNTL, Args: [6]uint64{3, 3}, Done: true, Result: 0o100002}, out,
			`fcntl(3, F_GETFL) = 0x8002 (flags O_RDWR|O_LARGEFILE)`},
		{"fcntl-setfd", Call{Nr: abi.SYS_FCNTL, Args: [6]uint64{3, 2, 1}, Done: true}, out,
			`fcntl(3, F_SETFD, FD_CLOEXEC) = 0`},
		{"fcntl-dupfd", Call{Nr: abi.SYS_FCNTL, Args: [6]uint64{3, 1030, 10}, Done: true, Result: 10}, out,
			`fcntl(3, F_DUPFD_CLOEXEC, 10) = 10`},
		{"fcntl-setlk", Call{Nr: abi.SYS_FCNTL, Args: [6]uint64{3, 6, lock}, Done: true}, out,
			`fcntl(3, F_SETLK, {l_type=F_WRLCK, l_whence=SEEK_SET, l_start=0, l_len=0}) = 0`},
		{"wait4", Call{Nr: abi.SYS_WAIT4, Args: [6]uint64{u(-1), status, 0, 0}, Done: true, Result: 1234}, out,
			`wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 3}], 0, NULL) = 1234`},
		{"wait4-killed", Call{Nr: abi.SYS_WAIT4, Args: [6]uint64{1234, killed, 0x40000000, 0}, Done: true, Result: 1234}, out,
			`wait4(1234, [{WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL}], __WALL, NULL) = 1234`},
		{"kill", Call{Nr: abi.SYS_KILL, Args: [6]uint64{1234, 15}, Done: true}, out, `kill(1234, SIGTERM) = 0`},
		{"kill-0", Call{Nr: abi.SYS_KILL, Args: [6]uint64{1234, 0}, Done: true, Result: neg(3)}, out,
			`kill(1234, 0) = -1 ESRCH (No such process)`},
		{"tgkill", Call{Nr: abi.SYS_TGKILL, Args: [6]uint64{10, 11, 6}, Done: true}, out, `tgkill(10, 11, SIGABRT) = 0`},
		{"epoll_ctl", Call{Nr: abi.SYS_EPOLL_CTL, Args: [6]uint64{4, 1, 5, epev}, Done: true}, out,
			`epoll_ctl(4, EPOLL_CTL_ADD, 5, {events=EPOLLIN, data={u32=5, u64=5}}) = 0`},
		{"epoll_wait", Call{Nr: abi.SYS_EPOLL_WAIT, Args: [6]uint64{4, epev, 128, u(-1)}, Done: true, Result: 1}, out,
			`epoll_wait(4, [{events=EPOLLIN, data={u32=5, u64=5}}], 128, -1) = 1`},
		{"clock_gettime", Call{Nr: abi.SYS_CLOCK_GETTIME, Args: [6]uint64{1, ts}, Done: true}, out,
			`clock_gettime(CLOCK_MONOTONIC, {tv_sec=1, tv_nsec=500000000}) = 0`},
		{"nanosleep", Call{Nr: abi.SYS_NANOSLEEP, Args: [6]uint64{ts, 0}, Done: true}, out,
			`nanosleep({tv_sec=1, tv_nsec=500000000}, NULL) = 0`},
		{"clock_nanosleep", Call{Nr: abi.SYS_CLOCK_NANOSLEEP, Args: [6]uint64{0, 1, ts, 0}}, out,
			`clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, {tv_sec=1, tv_nsec=500000000}, NULL) = ?`},
		{"sched_getaffinity", Call{Nr: abi.SYS_SCHED_GETAFFINITY, Args: [6]uint64{0, 128, cpus}, Done: true, Result: 8}, out,
			`sched_getaffinity(0, 128, [0 1 2 3]) = 8`},
		{"prctl-set-name", Call{Nr: abi.SYS_PRCTL, Args: [6]uint64{15, name}, Done: true}, out,
			`prctl(PR_SET_NAME, "worker-1") = 0`},
		{"arch_prctl", Call{Nr: abi.SYS_ARCH_PRCTL, Args: [6]uint64{0x1002, 0x7ffff7d8a740}, Done: true}, out,
			`arch_prctl(ARCH_SET_FS, 0x7ffff7d8a740) = 0`},
		{"arch_prctl-get", Call{Nr: abi.SYS_ARCH_PRCTL, Args: [6]uint64{0x1003, fsbase}, Done: true}, out,
			`arch_prctl(ARCH_GET_FS, [0x7f00deadbeef]) = 0`},
		{"set_tid_address", Call{Nr: abi.SYS_SET_TID_ADDRESS, Args: [6]uint64{0x7ffff7d8aa10}, Done: true, Result: 4321}, out,
			`set_tid_address(0x7ffff7d8aa10) = 4321`},
		{"set_robust_list", Call{Nr: abi.SYS_SET_ROBUST_LIST, Args: [6]uint64{0x7ffff7d8aa20, 24}, Done: true}, out,
			`set_robust_list(0x7ffff7d8aa20, 24) = 0`},
		{"rseq", Call{Nr: abi.SYS_RSEQ, Args: [6]uint64{0x7ffff7d8b0e0, 0x20, 0, 0x53053053}, Done: true}, out,
			`rseq(0x7ffff7d8b0e0, 0x20, 0, 0x53053053) = 0`},
		{"getrandom", Call{Nr: abi.SYS_GETRANDOM, Args: [6]uint64{rnd, 4, 1}, Done: true, Result: 4}, out,
			`getrandom("\x12\xab\x00\xff", 4, GRND_NONBLOCK) = 4`},
		{"getdents64", Call{Nr: abi.SYS_GETDENTS64, Args: [6]uint64{3, dirents, 32768}, Done: true, Result: 48}, out,
			"getdents64(3, " + h(dirents) + " /* 2 entries */, 32768) = 48"},
		{"getcwd", Call{Nr: abi.SYS_GETCWD, Args: [6]uint64{cwd, 4096}, Done: true, Result: 11}, out,
			`getcwd("/home/user", 4096) = 11`},
		{"readlink", Call{Nr: abi.SYS_READLINK, Args: [6]uint64{exe, bin, 4095}, Done: true, Result: 8}, out,
			`readlink("/proc/self/exe", "/bin/cat", 4095) = 8`},
		{"access", Call{Nr: abi.SYS_ACCESS, Args: [6]uint64{passwd, 4}, Done: true}, out, `access("/etc/passwd", R_OK) = 0`},
		{"faccessat2", Call{Nr: abi.SYS_FACCESSAT2, Args: [6]uint64{u(-100), passwd, 0, 0x200}, Done: true}, out,
			`faccessat2(AT_FDCWD, "/etc/passwd", F_OK, AT_EACCESS) = 0`},
		{"mkdir", Call{Nr: abi.SYS_MKDIR, Args: [6]uint64{nope, 0o755}, Done: true, Result: neg(17)}, out,
			`mkdir("/nope", 0755) = -1 EEXIST (File exists)`},
		{"unlinkat", Call{Nr: abi.SYS_UNLINKAT, Args: [6]uint64{u(-100), nope, 0x200}, Done: true}, out,
			`unlinkat(AT_FDCWD, "/nope", AT_REMOVEDIR) = 0`},
		{"umask", Call{Nr: abi.SYS_UMASK, Args: [6]uint64{0o22}, Done: true, Result: 0o22}, out, `umask(022) = 022`},
		{"dup3", Call{Nr: abi.SYS_DUP3, Args: [6]uint64{3, 1, 0o2000000}, Done: true, Result: 1}, out,
			`dup3(3, 1, O_CLOEXEC) = 1`},
		{"getpid", Call{Nr: abi.SYS_GETPID, Done: true, Result: 77}, out, `getpid() = 77`},
		{"select", Call{Nr: abi.SYS_SELECT, Args: [6]uint64{6, fdset, 0, 0, tv}, Done: true, Result: 1}, out,
			`select(6, [3 5], NULL, NULL, {tv_sec=5, tv_usec=0}) = 1`},
		{"eventfd2", Call{Nr: abi.SYS_EVENTFD2, Args: [6]uint64{0, 0o2004000}, Done: true, Result: 7}, out,
			`eventfd2(0, EFD_NONBLOCK|EFD_CLOEXEC) = 7`},
		{"memfd_create", Call{Nr: abi.SYS_MEMFD_CREATE, Args: [6]uint64{name, 1}, Done: true, Result: 8}, out,
			`memfd_create("worker-1", MFD_CLOEXEC) = 8`},
		{"madvise", Call{Nr: abi.SYS_MADVISE, Args: [6]uint64{0x7f0000000000, 4096, 4}, Done: true}, out,
			`madvise(0x7f0000000000, 4096, MADV_DONTNEED) = 0`},
		{"unknown", Call{Nr: 999, Args: [6]uint64{1, 2}, Done: true, Result: neg(38)}, out,
			`syscall_999(0x1, 0x2, 0, 0, 0, 0) = -1 ENOSYS (Function not implemented)`},
		{"unreadable-path", Call{Nr: abi.SYS_OPENAT, Args: [6]uint64{u(-100), 0xdead0000, 0}, Done: true, Result: neg(14)}, out,
			`openat(AT_FDCWD, 0xdead0000, O_RDONLY) = -1 EFAULT (Bad address)`},
		{"path-at-end-of-memory", Call{Nr: abi.SYS_CHDIR, Args: [6]uint64{tail}, Done: true}, out,
			"chdir(" + h(tail) + ") = 0"},
	}
	return m, cases
}

func TestRealCalls(t *testing.T) {
	m, cases := realCalls()
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Format(tc.c, m.mem, tc.opt); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestFormatArgsAndResult(t *testing.T) {
	m, cases := realCalls()
	for _, tc := range cases {
		got := Format(tc.c, m.mem, tc.opt)
		args := FormatArgs(tc.c, m.mem, tc.opt)
		if !strings.Contains(got, "("+args+")") {
			t.Errorf("%s: FormatArgs %q not in %q", tc.name, args, got)
		}
		if res := FormatResult(tc.c); !tc.opt.NoPending && !strings.HasSuffix(got, " = "+res) {
			t.Errorf("%s: FormatResult %q not at the end of %q", tc.name, res, got)
		}
	}
}
