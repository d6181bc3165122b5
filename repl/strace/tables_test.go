package strace

import (
	"encoding/binary"
	"sort"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore/abi"
)

func TestErrno(t *testing.T) {
	tests := []struct {
		n          int
		name, text string
	}{
		{1, "EPERM", "Operation not permitted"},
		{2, "ENOENT", "No such file or directory"},
		{11, "EAGAIN", "Resource temporarily unavailable"},
		{35, "EDEADLK", "Resource deadlock avoided"},
		{95, "EOPNOTSUPP", "Operation not supported"},
		{110, "ETIMEDOUT", "Connection timed out"},
		{133, "EHWPOISON", "Memory page has hardware error"},
		{512, "ERESTARTSYS", "To be restarted if SA_RESTART is set"},
		{513, "ERESTARTNOINTR", "To be restarted"},
		{514, "ERESTARTNOHAND", "To be restarted if no handler"},
		{516, "ERESTART_RESTARTBLOCK", "Interrupted by signal"},
		{41, "", "Unknown error 41"},
		{0, "", "Unknown error 0"},
		{-3, "", "Unknown error -3"},
		{4095, "", "Unknown error 4095"},
	}
	for _, tc := range tests {
		name, text := Errno(tc.n)
		if name != tc.name || text != tc.text {
			t.Errorf("Errno(%d) = %q, %q, want %q, %q", tc.n, name, text, tc.name, tc.text)
		}
	}
	// Every value from 1 to 133 but the two Linux leaves unused has a name.
	for n := 1; n <= 133; n++ {
		name, _ := Errno(n)
		if (name == "") != (n == 41 || n == 58) {
			t.Errorf("Errno(%d) name %q", n, name)
		}
	}
	if e := abi.ENOENT; errnos[e].name != "ENOENT" {
		t.Errorf("abi.ENOENT = %d names %q", e, errnos[e].name)
	}
}

func TestFormatResult(t *testing.T) {
	tests := []struct {
		c    Call
		want string
	}{
		{Call{Nr: abi.SYS_READ}, "?"},
		{Call{Nr: abi.SYS_READ, Done: true, Result: 5}, "5"},
		{Call{Nr: abi.SYS_READ, Done: true, Result: -4}, "-1 EINTR (Interrupted system call)"},
		{Call{Nr: abi.SYS_NANOSLEEP, Done: true, Result: -516}, "? ERESTART_RESTARTBLOCK (Interrupted by signal)"},
		{Call{Nr: abi.SYS_READ, Done: true, Result: -515}, "-1 ENOIOCTLCMD (No ioctl command)"},
		{Call{Nr: abi.SYS_READ, Done: true, Result: -41}, "-1 ERRNO_41 (Unknown error 41)"},
		{Call{Nr: abi.SYS_READ, Done: true, Result: -5000}, "-5000"},
		{Call{Nr: abi.SYS_MMAP, Done: true, Result: 0x7f0000000000}, "0x7f0000000000"},
		{Call{Nr: abi.SYS_MMAP, Done: true, Result: -12}, "-1 ENOMEM (Cannot allocate memory)"},
		{Call{Nr: abi.SYS_EXIT_GROUP, Done: true}, "?"},
		{Call{Nr: abi.SYS_FCNTL, Args: [6]uint64{3, 1}, Done: true, Result: 1}, "0x1 (flags FD_CLOEXEC)"},
		{Call{Nr: abi.SYS_RT_SIGTIMEDWAIT, Done: true, Result: 17}, "17 (SIGCHLD)"},
		{Call{Nr: 5000, Done: true, Result: 7}, "7"},
		{Call{Nr: -1, Done: true, Result: -1}, "-1 EPERM (Operation not permitted)"},
	}
	for _, tc := range tests {
		if got := FormatResult(tc.c); got != tc.want {
			t.Errorf("FormatResult(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestSignal(t *testing.T) {
	tests := map[int]string{
		1: "SIGHUP", 9: "SIGKILL", 11: "SIGSEGV", 17: "SIGCHLD", 31: "SIGSYS",
		32: "SIGRTMIN", 35: "SIGRTMIN+3", 63: "SIGRTMIN+31", 64: "SIGRTMAX",
		0: "signal 0", 65: "signal 65", 99: "signal 99", -1: "signal -1",
	}
	keys := make([]int, 0, len(tests))
	for k := range tests {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, n := range keys {
		if got := Signal(n); got != tests[n] {
			t.Errorf("Signal(%d) = %q, want %q", n, got, tests[n])
		}
	}
	for n := 1; n <= 64; n++ {
		if strings.HasPrefix(Signal(n), "signal ") {
			t.Errorf("Signal(%d) has no name", n)
		}
	}
	if got := sigsetString(0); got != "[]" {
		t.Errorf("empty set %s", got)
	}
	if got := sigsetString(^uint64(0)); got != "~[]" {
		t.Errorf("full set %s", got)
	}
}

func siginfo(signo, errno, code int32, words ...uint64) []byte {
	b := make([]byte, 128)
	binary.LittleEndian.PutUint32(b, uint32(signo))
	binary.LittleEndian.PutUint32(b[4:], uint32(errno))
	binary.LittleEndian.PutUint32(b[8:], uint32(code))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[16+8*i:], w)
	}
	return b
}

func TestFormatSiginfo(t *testing.T) {
	tests := []struct {
		si   []byte
		want string
	}{
		{siginfo(11, 0, 1, 0), "--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=0x0} ---"},
		{siginfo(11, 0, 2, 0x401000), "--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_ACCERR, si_addr=0x401000} ---"},
		{siginfo(11, 0, 0x80, 0), "--- SIGSEGV {si_signo=SIGSEGV, si_code=SI_KERNEL, si_addr=0x0} ---"},
		{siginfo(15, 0, 0, 1234), "--- SIGTERM {si_signo=SIGTERM, si_code=SI_USER, si_pid=1234, si_uid=0} ---"},
		{siginfo(6, 0, -6, 1000|5<<32), "--- SIGABRT {si_signo=SIGABRT, si_code=SI_TKILL, si_pid=1000, si_uid=5} ---"},
		{siginfo(17, 0, 1, 42, 3, 1, 250), "--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=42, si_uid=0, si_status=3, si_utime=1 /* 0.01 s */, si_stime=250 /* 2.50 s */} ---"},
		{siginfo(17, 0, 2, 42, 9, 0, 0), "--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_KILLED, si_pid=42, si_uid=0, si_status=SIGKILL, si_utime=0, si_stime=0} ---"},
		{siginfo(5, 0, 4, 0x401234), "--- SIGTRAP {si_signo=SIGTRAP, si_code=TRAP_HWBKPT, si_addr=0x401234} ---"},
		{siginfo(8, 0, 1, 0x401000), "--- SIGFPE {si_signo=SIGFPE, si_code=FPE_INTDIV, si_addr=0x401000} ---"},
		{siginfo(31, 1, 1, 0x401000, 39|0xc000003e<<32), "--- SIGSYS {si_signo=SIGSYS, si_code=SYS_SECCOMP, si_errno=EPERM, si_call_addr=0x401000, si_syscall=__NR_getpid, si_arch=AUDIT_ARCH_X86_64} ---"},
		{siginfo(14, 0, 0x80), "--- SIGALRM {si_signo=SIGALRM, si_code=SI_KERNEL} ---"},
		{siginfo(34, 0, -1, 7, 99), "--- SIGRTMIN+2 {si_signo=SIGRTMIN+2, si_code=SI_QUEUE, si_pid=7, si_uid=0, si_int=99, si_ptr=0x63} ---"},
		{nil, "--- signal 0 {si_signo=signal 0, si_code=SI_USER, si_pid=0, si_uid=0} ---"},
		{[]byte{11, 0, 0, 0}, "--- SIGSEGV {si_signo=SIGSEGV, si_code=SI_USER, si_pid=0, si_uid=0} ---"},
	}
	for _, tc := range tests {
		if got := FormatSiginfo(tc.si); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

func TestSyscallNumber(t *testing.T) {
	tests := []struct {
		name string
		nr   int
		ok   bool
	}{
		{"read", abi.SYS_READ, true},
		{"openat", abi.SYS_OPENAT, true},
		{"open", abi.SYS_OPEN, true},
		{"stat", abi.SYS_STAT, true},
		{"fstatat", abi.SYS_NEWFSTATAT, true},
		{"pread", abi.SYS_PREAD64, true},
		{"sigaction", abi.SYS_RT_SIGACTION, true},
		{"SYS_WRITE", abi.SYS_WRITE, true},
		{"__NR_exit_group", abi.SYS_EXIT_GROUP, true},
		{" Clone3 ", abi.SYS_CLONE3, true},
		{"syscall_999", 999, true},
		{"syscall_", 0, false},
		{"syscall_12x", 0, false},
		{"nosuchcall", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		nr, ok := SyscallNumber(tc.name)
		if nr != tc.nr || ok != tc.ok {
			t.Errorf("SyscallNumber(%q) = %d, %v, want %d, %v", tc.name, nr, ok, tc.nr, tc.ok)
		}
	}
	names := SyscallNames()
	if !sort.StringsAreSorted(names) || len(names) < 360 {
		t.Fatalf("SyscallNames: %d names, sorted %v", len(names), sort.StringsAreSorted(names))
	}
	for _, n := range names {
		nr, ok := SyscallNumber(n)
		if !ok || abi.SyscallName(nr) != n {
			t.Errorf("SyscallNumber(%q) = %d, %v", n, nr, ok)
		}
	}
	for alias, nr := range aliases {
		if strings.HasPrefix(abi.SyscallName(nr), "syscall_") {
			t.Errorf("alias %q names no syscall (%d)", alias, nr)
		}
	}
}

// TestTable walks the syscall table.
func TestTable(t *testing.T) {
	table, duplicates := tables()
	if len(duplicates) != 0 {
		t.Errorf("syscalls in more than one table: %v", duplicates)
	}
	used := make(map[kind]bool)
	typed := 0
	for nr, d := range table {
		n := abi.SyscallName(nr)
		if strings.HasPrefix(n, "syscall_") {
			t.Errorf("table entry %d has no name", nr)
		}
		if len(d.args) > 6 {
			t.Errorf("%s: %d arguments", n, len(d.args))
		}
		if d.fn != nil && d.args != nil {
			t.Errorf("%s: both a function and kinds", n)
		}
		for _, k := range d.args {
			used[k] = true
			if k >= kNumKinds {
				t.Errorf("%s: bad kind %d", n, k)
			}
		}
		if d.fn != nil || len(d.args) > 0 {
			typed++
		}
	}
	t.Logf("%d syscalls in the table, %d with typed arguments", len(table), typed)
	if len(table) < 200 {
		t.Errorf("only %d syscalls decoded", len(table))
	}
	// Every kind is used somewhere (the ones only custom formatters or
	// struct decoders reach are listed).
	for k := kind(0); k < kNumKinds; k++ {
		if !used[k] && k != kStr && k != kOutStr && k != kInInt && k != kOutFdSet && k != kOutTimeval && k != kHex {
			t.Errorf("kind %d unused", k)
		}
	}
}

// TestDeterministic formats every table entry twice, with memory that
// reads as a pattern, and wants the same text.
func TestDeterministic(t *testing.T) {
	m := newImage()
	m.put(make([]byte, 8192))
	for i := range m.data {
		m.data[i] = byte(i*7) | 1
	}
	table := syscallTable()
	nrs := make([]int, 0, len(table))
	for nr := range table {
		nrs = append(nrs, nr)
	}
	sort.Ints(nrs)
	for _, nr := range nrs {
		c := Call{Nr: nr, Args: [6]uint64{imageBase, imageBase + 64, 16, imageBase + 512, 24, imageBase + 1024}, Done: true, Result: 16}
		a := Format(c, m.mem, Options{Out: true})
		b := Format(c, m.mem, Options{Out: true})
		if a != b {
			t.Errorf("%s:\n%s\n%s", abi.SyscallName(nr), a, b)
		}
	}
}
