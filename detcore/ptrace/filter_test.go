package ptrace

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hermitdbg/hermit/detcore"
)

// runFilter runs prog as seccomp would (filterAction in count.go, which
// count mode uses to tell the calls the kernel lets through) on a call
// with arguments whose low halves are args.
func runFilter(t *testing.T, prog []unix.SockFilter, arch uint32, nr uint32, args ...uint32) uint32 {
	t.Helper()
	info := syscallInfo{Arch: arch, Nr: uint64(nr)}
	for i, a := range args {
		info.Args[i] = uint64(a) | 0xdead<<32
	}
	return filterAction(prog, &info)
}

// TestFilterLarge checks that every traced syscall, and only those, is
// sent to the tracer, also for sets whose subtrees exceed a conditional
// jump's 8-bit reach, and with duplicates.
func TestFilterLarge(t *testing.T) {
	for _, n := range []int{0, 1, 2, 79, 130, 300} {
		traced := map[int]bool{}
		var list []int
		for i := 0; len(traced) < n; i++ {
			nr := (i * 7) % 460
			traced[nr] = true
			list = append(list, nr, nr)
		}
		prog := buildFilter(list, nil)
		if len(prog) > 4096 {
			t.Fatalf("%d syscalls: %d instructions, over the kernel's limit", n, len(prog))
		}
		for nr := 0; nr < 470; nr++ {
			got := runFilter(t, prog, unix.AUDIT_ARCH_X86_64, uint32(nr), unix.CLONE_UNTRACED, unix.F_SETLKW)
			want := uint32(unix.SECCOMP_RET_ALLOW)
			if traced[nr] {
				want = unix.SECCOMP_RET_TRACE
			}
			if got != want {
				t.Fatalf("%d syscalls: syscall %d gets %#x, want %#x", n, nr, got, want)
			}
		}
	}
}

// TestFilterArgCondition: fcntl stops only for its waiting lock commands
// (F_SETLKW, F_OFD_SETLKW), and the syscalls around it are unaffected.
func TestFilterArgCondition(t *testing.T) {
	prog := buildFilter([]int{unix.SYS_FCNTL, unix.SYS_FLOCK, unix.SYS_READ}, nil)
	for _, c := range []struct {
		nr, cmd uint32
		want    uint32
	}{
		{unix.SYS_FCNTL, unix.F_SETLKW, unix.SECCOMP_RET_TRACE},
		{unix.SYS_FCNTL, unix.F_OFD_SETLKW, unix.SECCOMP_RET_TRACE},
		{unix.SYS_FCNTL, unix.F_SETLK, unix.SECCOMP_RET_ALLOW},
		{unix.SYS_FCNTL, unix.F_GETFL, unix.SECCOMP_RET_ALLOW},
		{unix.SYS_FLOCK, unix.F_GETFL, unix.SECCOMP_RET_TRACE},
		{unix.SYS_READ, 0, unix.SECCOMP_RET_TRACE},
		{unix.SYS_WRITE, unix.F_SETLKW, unix.SECCOMP_RET_ALLOW},
	} {
		if got := runFilter(t, prog, unix.AUDIT_ARCH_X86_64, c.nr, 3, c.cmd); got != c.want {
			t.Errorf("syscall %d with argument %d: %#x, want %#x", c.nr, c.cmd, got, c.want)
		}
	}
	// clone stops only with CLONE_UNTRACED among its flags.
	prog = buildFilter([]int{unix.SYS_CLONE, unix.SYS_FCNTL}, nil)
	for _, c := range []struct {
		flags, want uint32
	}{
		{unix.CLONE_VM | unix.CLONE_THREAD, unix.SECCOMP_RET_ALLOW},
		{unix.CLONE_UNTRACED | uint32(unix.SIGCHLD), unix.SECCOMP_RET_TRACE},
	} {
		if got := runFilter(t, prog, unix.AUDIT_ARCH_X86_64, unix.SYS_CLONE, c.flags); got != c.want {
			t.Errorf("clone(%#x): %#x, want %#x", c.flags, got, c.want)
		}
	}
	if got := runFilter(t, prog, unix.AUDIT_ARCH_X86_64, unix.SYS_FCNTL, 3, unix.F_GETFD); got != unix.SECCOMP_RET_ALLOW {
		t.Errorf("fcntl F_GETFD: %#x, want allow", got)
	}
}

// TestFilterMarked: open and openat stop only with detcore.OpenMarker in
// their flags, and mmap only of shared memory, unless they are traced
// anyway (hermit record's journal).
func TestFilterMarked(t *testing.T) {
	marked := detcore.ConditionalSyscalls()
	for _, c := range []struct {
		traced      []int
		nr, flags   uint32
		want        uint32
		description string
	}{
		{[]int{unix.SYS_READ}, unix.SYS_OPENAT, unix.O_RDONLY, unix.SECCOMP_RET_ALLOW, "openat"},
		{[]int{unix.SYS_READ}, unix.SYS_OPENAT, unix.O_RDONLY | detcore.OpenMarker, unix.SECCOMP_RET_TRACE, "marked openat"},
		{[]int{unix.SYS_READ}, unix.SYS_OPEN, unix.O_WRONLY | detcore.OpenMarker, unix.SECCOMP_RET_TRACE, "marked open"},
		{[]int{unix.SYS_READ, unix.SYS_OPENAT}, unix.SYS_OPENAT, unix.O_RDONLY, unix.SECCOMP_RET_TRACE, "openat traced anyway"},
		{[]int{unix.SYS_READ}, unix.SYS_READ, 0, unix.SECCOMP_RET_TRACE, "read"},
		{[]int{unix.SYS_READ}, unix.SYS_MMAP, unix.MAP_PRIVATE | unix.MAP_ANONYMOUS, unix.SECCOMP_RET_ALLOW, "private mmap"},
		{[]int{unix.SYS_READ}, unix.SYS_MMAP, unix.MAP_SHARED, unix.SECCOMP_RET_TRACE, "shared mmap"},
		{[]int{unix.SYS_READ}, unix.SYS_MMAP, unix.MAP_SHARED_VALIDATE, unix.SECCOMP_RET_TRACE, "MAP_SHARED_VALIDATE"},
		{[]int{unix.SYS_MMAP}, unix.SYS_MMAP, unix.MAP_PRIVATE, unix.SECCOMP_RET_TRACE, "mmap traced anyway"},
	} {
		prog := buildFilter(c.traced, marked)
		// open's flags are its second argument, openat's its third,
		// mmap's its fourth.
		args := []uint32{3, c.flags, c.flags}
		switch c.nr {
		case unix.SYS_OPEN:
			args = []uint32{3, c.flags}
		case unix.SYS_MMAP:
			args = []uint32{0, 4096, unix.PROT_READ, c.flags}
		}
		if got := runFilter(t, prog, unix.AUDIT_ARCH_X86_64, c.nr, args...); got != c.want {
			t.Errorf("%s: %#x, want %#x", c.description, got, c.want)
		}
	}
}

// TestFilterConstantForAllowed: a syscall the filter allows whatever its
// arguments is decided by the architecture and the number alone, as the
// kernel's seccomp cache (seccomp_is_const_allow) requires to allow it
// without running the program; one it traces looks at the instruction
// pointer, and from the fast-write page it runs. (The page came first,
// and the program ran on every call: getppid cost 2x native.)
func TestFilterConstantForAllowed(t *testing.T) {
	marked := detcore.ConditionalSyscalls()
	traced := []int{unix.SYS_READ, unix.SYS_WRITE, unix.SYS_OPENAT, unix.SYS_CLOCK_NANOSLEEP}
	prog := buildFilter(traced, marked)
	for _, nr := range []int{unix.SYS_GETPPID, unix.SYS_GETPID, unix.SYS_BRK, unix.SYS_MPROTECT} {
		if !constAllow(prog, uint32(nr)) {
			t.Errorf("syscall %d: the program reads more than its number to allow it", nr)
		}
	}
	if constAllow(prog, unix.SYS_READ) {
		t.Error("read, which is traced, is allowed by its number alone")
	}
	for _, c := range []struct {
		ip   uint64
		want uint32
	}{{0x401000, unix.SECCOMP_RET_TRACE}, {fioFast, unix.SECCOMP_RET_ALLOW}, {fioFast + 0xfff, unix.SECCOMP_RET_ALLOW}, {fioFast + 0x1000, unix.SECCOMP_RET_TRACE}} {
		info := syscallInfo{Arch: unix.AUDIT_ARCH_X86_64, Nr: unix.SYS_WRITE, IP: c.ip}
		if got := filterAction(prog, &info); got != c.want {
			t.Errorf("write from %#x: %#x, want %#x", c.ip, got, c.want)
		}
	}
}

// constAllow follows prog as the kernel's seccomp_is_const_allow does,
// knowing only the architecture (x86-64) and the number: true if it
// allows the call without loading anything else.
func constAllow(prog []unix.SockFilter, nr uint32) bool {
	action, ok := runProg(prog, func(off uint32) (uint32, bool) {
		switch off {
		case offNr:
			return nr, true
		case offArch:
			return unix.AUDIT_ARCH_X86_64, true
		}
		return 0, false
	})
	return ok && action == unix.SECCOMP_RET_ALLOW
}

// TestFilterInjected: the mmap, memfd_create and close that hermit's code
// makes in the guest at an exec (vc_map, marked with injectedMark in the
// high half of the fourth argument) pass without a stop; the same calls
// unmarked stop as before, and so does any other traced call that
// carries the mark.
func TestFilterInjected(t *testing.T) {
	traced := []int{unix.SYS_MEMFD_CREATE, unix.SYS_CLOSE, unix.SYS_OPENAT}
	prog := buildFilter(traced, detcore.ConditionalSyscalls())
	call := func(nr int, arg3 uint64) uint32 {
		info := syscallInfo{Arch: unix.AUDIT_ARCH_X86_64, Nr: uint64(nr)}
		info.Args[3] = arg3
		return filterAction(prog, &info)
	}
	const shared = unix.MAP_SHARED | unix.MAP_FIXED_NOREPLACE
	for _, c := range []struct {
		nr   int
		arg3 uint64
		want uint32
	}{
		{unix.SYS_MMAP, injectedMark<<32 | shared, unix.SECCOMP_RET_ALLOW},
		{unix.SYS_MEMFD_CREATE, injectedMark << 32, unix.SECCOMP_RET_ALLOW},
		{unix.SYS_CLOSE, injectedMark << 32, unix.SECCOMP_RET_ALLOW},
		{unix.SYS_MMAP, shared, unix.SECCOMP_RET_TRACE},
		{unix.SYS_MEMFD_CREATE, 0, unix.SECCOMP_RET_TRACE},
		{unix.SYS_CLOSE, 0x7fffdead << 32, unix.SECCOMP_RET_TRACE},
		{unix.SYS_OPENAT, injectedMark << 32, unix.SECCOMP_RET_TRACE},
	} {
		if got := call(c.nr, c.arg3); got != c.want {
			t.Errorf("syscall %d with argument 3 %#x: action %#x, want %#x", c.nr, c.arg3, got, c.want)
		}
	}
}
