package strace

import (
	"sort"
	"strings"
	"sync"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// retKind says how to show a successful result.
type retKind uint8

const (
	rInt    retKind = iota // decimal
	rHex                   // an address: 0x7f...
	rOct                   // umask's old mask: 022
	rNone                  // the call does not return: always "?"
	rFcntl                 // fcntl: flags for F_GETFD/F_GETFL
	rSignal                // a signal number: 17 (SIGCHLD)
)

// sysc describes one syscall: its arguments' kinds and its result, or a
// function for calls whose arguments depend on each other.
type sysc struct {
	args []kind
	ret  retKind
	fn   func(f *fmtr) []string
}

// s describes a call with arguments of kinds k and a decimal result.
func s(k ...kind) sysc { return sysc{args: k} }

// addr describes a call that returns an address.
func addr(k ...kind) sysc { return sysc{args: k, ret: rHex} }

// noReturn describes a call that never returns (exit, exit_group): its
// result is always "?".
func noReturn(k ...kind) sysc { return sysc{args: k, ret: rNone} }

// custom describes a call formatted by fn.
func custom(fn func(f *fmtr) []string, ret retKind) sysc { return sysc{fn: fn, ret: ret} }

// tables returns the syscall table keyed by number, merged from the
// per-area tables, and the numbers found in more than one (a test checks
// there are none). It is built on first use: most runs never decode a
// call, and building it at start would add to every run's start-up.
var tables = sync.OnceValues(func() (map[int]sysc, []int) {
	return merge(fileTable(), ioTable(), memTable(), procTable(), netTable(), miscTable())
})

func merge(parts ...map[int]sysc) (map[int]sysc, []int) {
	t := make(map[int]sysc)
	var dups []int
	for _, p := range parts {
		for nr, d := range p {
			if _, ok := t[nr]; ok {
				dups = append(dups, nr)
			}
			t[nr] = d
		}
	}
	sort.Ints(dups)
	return t, dups
}

// aliases maps names people type (and other architectures' or libc's
// names) to x86-64 syscalls.
var aliases = map[string]int{
	"fstatat":      abi.SYS_NEWFSTATAT,
	"fstatat64":    abi.SYS_NEWFSTATAT,
	"stat64":       abi.SYS_STAT,
	"lstat64":      abi.SYS_LSTAT,
	"fstat64":      abi.SYS_FSTAT,
	"pread":        abi.SYS_PREAD64,
	"pwrite":       abi.SYS_PWRITE64,
	"prlimit":      abi.SYS_PRLIMIT64,
	"sigaction":    abi.SYS_RT_SIGACTION,
	"signal":       abi.SYS_RT_SIGACTION,
	"sigprocmask":  abi.SYS_RT_SIGPROCMASK,
	"sigreturn":    abi.SYS_RT_SIGRETURN,
	"sigsuspend":   abi.SYS_RT_SIGSUSPEND,
	"sigpending":   abi.SYS_RT_SIGPENDING,
	"sigtimedwait": abi.SYS_RT_SIGTIMEDWAIT,
	"sigqueueinfo": abi.SYS_RT_SIGQUEUEINFO,
	"fadvise":      abi.SYS_FADVISE64,
	"umount":       abi.SYS_UMOUNT2,
	"mmap2":        abi.SYS_MMAP,
	"llseek":       abi.SYS_LSEEK,
	"_llseek":      abi.SYS_LSEEK,
	"wait":         abi.SYS_WAIT4,
	"waitpid":      abi.SYS_WAIT4,
	"getdents":     abi.SYS_GETDENTS,
	"ftruncate64":  abi.SYS_FTRUNCATE,
	"truncate64":   abi.SYS_TRUNCATE,
	"sendfile64":   abi.SYS_SENDFILE,
	"statfs64":     abi.SYS_STATFS,
	"fstatfs64":    abi.SYS_FSTATFS,
	"getrlimit64":  abi.SYS_PRLIMIT64,
	"eventfd":      abi.SYS_EVENTFD,
	"signalfd":     abi.SYS_SIGNALFD,
}

// SyscallNumber returns the number of the syscall called name, for
// `break syscall NAME`. It takes the kernel's names ("openat"), common
// aliases ("fstatat", "pread", "sigaction", "waitpid"), either with a
// "SYS_" or "__NR_" prefix and in any case, and "syscall_NNN".
func SyscallNumber(name string) (int, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimPrefix(n, "sys_")
	n = strings.TrimPrefix(n, "__nr_")
	if nr, ok := abi.SyscallNumber(n); ok {
		return nr, true
	}
	if nr, ok := aliases[n]; ok {
		return nr, true
	}
	if rest, ok := strings.CutPrefix(n, "syscall_"); ok && rest != "" && len(rest) <= 4 {
		nr := 0
		for _, c := range rest {
			if c < '0' || c > '9' {
				return 0, false
			}
			nr = nr*10 + int(c-'0')
		}
		return nr, true
	}
	return 0, false
}

// SyscallNames returns the kernel's names of all x86-64 syscalls, sorted,
// for tab completion.
func SyscallNames() []string {
	var names []string
	for nr := 0; nr < 1024; nr++ {
		if n := abi.SyscallName(nr); !strings.HasPrefix(n, "syscall_") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// syscallTable returns the syscall table keyed by number.
func syscallTable() map[int]sysc {
	t, _ := tables()
	return t
}
