// Package abi holds the pieces of the linux/amd64 kernel ABI that hermit's
// pure logic needs: syscall numbers and names, errno values, futex, clone,
// wait and signal constants, and the register layout. It imports nothing
// from the operating system, so traces can be decoded on any host.
package abi

import (
	"fmt"
	"sort"
	"strings"
)

// SyscallName returns the kernel's name for syscall nr, or "syscall_NNN".
func SyscallName(nr int) string {
	if n, ok := syscallNames[nr]; ok {
		return n
	}
	return fmt.Sprintf("syscall_%d", nr)
}

// SyscallNumber returns the number of the syscall called name.
func SyscallNumber(name string) (int, bool) {
	for nr, n := range syscallNames {
		if n == name {
			return nr, true
		}
	}
	return 0, false
}

// SyscallNames returns the names of nrs, sorted and comma-separated.
func SyscallNames(nrs []int) string {
	names := make([]string, 0, len(nrs))
	for _, nr := range nrs {
		names = append(names, SyscallName(nr))
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// Errno values from <asm-generic/errno-base.h> and <asm-generic/errno.h>.
const (
	EPERM     = 1
	ENOENT    = 2
	ESRCH     = 3
	EINTR     = 4
	EIO       = 5
	EBADF     = 9
	ECHILD    = 10
	EAGAIN    = 11
	ENOMEM    = 12
	EFAULT    = 14
	EINVAL    = 22
	ENOSYS    = 38
	ENOMSG    = 42
	ETIMEDOUT = 110
	EACCES    = 13
	EPIPE     = 32

	// ERESTARTSYS and ERESTARTNOHAND (<linux/errno.h>, kernel-internal):
	// a call a signal interrupted; the kernel restarts it if no handler
	// runs (and, for ERESTARTSYS, if the handler has SA_RESTART), else
	// it returns EINTR.
	ERESTARTSYS    = 512
	ERESTARTNOINTR = 513 // always restarted
	ERESTARTNOHAND = 514

	// ERESTART_RESTARTBLOCK (<linux/errno.h>, kernel-internal): a sleep
	// a signal interrupted, restarted by restart_syscall if no handler
	// runs, else EINTR.
	ERESTART_RESTARTBLOCK = 516
)

// Futex operations from <linux/futex.h>.
const (
	FUTEX_WAIT            = 0
	FUTEX_WAKE            = 1
	FUTEX_FD              = 2
	FUTEX_REQUEUE         = 3
	FUTEX_CMP_REQUEUE     = 4
	FUTEX_WAKE_OP         = 5
	FUTEX_LOCK_PI         = 6
	FUTEX_UNLOCK_PI       = 7
	FUTEX_TRYLOCK_PI      = 8
	FUTEX_WAIT_BITSET     = 9
	FUTEX_WAKE_BITSET     = 10
	FUTEX_WAIT_REQUEUE_PI = 11
	FUTEX_CMP_REQUEUE_PI  = 12
	FUTEX_LOCK_PI2        = 13

	FUTEX_PRIVATE_FLAG   = 128
	FUTEX_CLOCK_REALTIME = 256
	FUTEX_BITSET_ANY     = 0xffffffff

	// A robust futex word's bits (<linux/futex.h>).
	FUTEX_WAITERS    = 0x80000000
	FUTEX_OWNER_DIED = 0x40000000
	FUTEX_TID_MASK   = 0x3fffffff
)

// Clone flags from <linux/sched.h>.
const (
	CLONE_VM             = 0x00000100
	CLONE_FS             = 0x00000200
	CLONE_FILES          = 0x00000400
	CLONE_SIGHAND        = 0x00000800
	CLONE_VFORK          = 0x00004000
	CLONE_PARENT         = 0x00008000
	CLONE_THREAD         = 0x00010000
	CLONE_SETTLS         = 0x00080000
	CLONE_PARENT_SETTID  = 0x00100000
	CLONE_CHILD_CLEARTID = 0x00200000
	CLONE_CHILD_SETTID   = 0x01000000
)

// Wait options from <linux/wait.h>.
const (
	WNOHANG = 0x00000001
	WNOWAIT = 0x01000000
)

// Clock ids from <linux/time.h>.
const (
	CLOCK_REALTIME  = 0
	CLOCK_MONOTONIC = 1
	TIMER_ABSTIME   = 1
)

// Signal numbers from <asm/signal.h>.
const (
	SIGHUP   = 1
	SIGINT   = 2
	SIGQUIT  = 3
	SIGILL   = 4
	SIGTRAP  = 5
	SIGABRT  = 6
	SIGBUS   = 7
	SIGFPE   = 8
	SIGKILL  = 9
	SIGUSR1  = 10
	SIGSEGV  = 11
	SIGUSR2  = 12
	SIGPIPE  = 13
	SIGALRM  = 14
	SIGTERM  = 15
	SIGCHLD  = 17
	SIGCONT  = 18
	SIGSTOP  = 19
	SIGTSTP  = 20
	SIGTTIN  = 21
	SIGTTOU  = 22
	SIGURG   = 23
	SIGWINCH = 28
	SIGSYS   = 31
)

// Regs is the x86-64 user register set (struct user_regs_struct).
type Regs struct {
	R15, R14, R13, R12, Rbp, Rbx, R11, R10 uint64
	R9, R8, Rax, Rcx, Rdx, Rsi, Rdi        uint64
	OrigRax, Rip, Cs, Eflags, Rsp, Ss      uint64
	FsBase, GsBase, Ds, Es, Fs, Gs         uint64
}

// fields returns r's registers in struct user_regs_struct order.
func (r *Regs) fields() [27]*uint64 {
	return [27]*uint64{&r.R15, &r.R14, &r.R13, &r.R12, &r.Rbp, &r.Rbx, &r.R11, &r.R10,
		&r.R9, &r.R8, &r.Rax, &r.Rcx, &r.Rdx, &r.Rsi, &r.Rdi,
		&r.OrigRax, &r.Rip, &r.Cs, &r.Eflags, &r.Rsp, &r.Ss,
		&r.FsBase, &r.GsBase, &r.Ds, &r.Es, &r.Fs, &r.Gs}
}

// Bytes returns r as the kernel lays out struct user_regs_struct.
func (r *Regs) Bytes() []byte {
	b := make([]byte, 0, 27*8)
	for _, f := range r.fields() {
		v := *f
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
	}
	return b
}

// SetBytes sets r from b, a struct user_regs_struct (as many registers
// as b holds).
func (r *Regs) SetBytes(b []byte) {
	for i, f := range r.fields() {
		if len(b) < 8*(i+1) {
			return
		}
		var v uint64
		for j := 7; j >= 0; j-- {
			v = v<<8 | uint64(b[8*i+j])
		}
		*f = v
	}
}

// Arg returns syscall argument i (0-5) as the kernel reads it.
func (r *Regs) Arg(i int) uint64 {
	switch i {
	case 0:
		return r.Rdi
	case 1:
		return r.Rsi
	case 2:
		return r.Rdx
	case 3:
		return r.R10
	case 4:
		return r.R8
	case 5:
		return r.R9
	}
	panic("abi: syscall argument index out of range")
}

// SetArg sets syscall argument i (0-5).
func (r *Regs) SetArg(i int, v uint64) {
	switch i {
	case 0:
		r.Rdi = v
	case 1:
		r.Rsi = v
	case 2:
		r.Rdx = v
	case 3:
		r.R10 = v
	case 4:
		r.R8 = v
	case 5:
		r.R9 = v
	default:
		panic("abi: syscall argument index out of range")
	}
}

// SyscallInsnLen is the length of the `syscall` instruction (0f 05).
const SyscallInsnLen = 2

// Open flags and the current-directory descriptor (<fcntl.h>).
const (
	O_RDONLY    = 0
	O_WRONLY    = 0o1
	O_RDWR      = 0o2
	O_ACCMODE   = 0o3
	O_CREAT     = 0o100
	O_EXCL      = 0o200
	O_NOCTTY    = 0o400
	O_TRUNC     = 0o1000
	O_NONBLOCK  = 0o4000
	O_LARGEFILE = 0o100000
	O_CLOEXEC   = 0o2000000
	AT_FDCWD    = -100
	MaxPath     = 4096
)

// SetArgs sets all six syscall arguments.
func (r *Regs) SetArgs(a [6]uint64) {
	for i, v := range a {
		r.SetArg(i, v)
	}
}

// mmap flags (<linux/mman.h>).
const (
	MAP_FIXED           = 0x10
	MAP_FIXED_NOREPLACE = 0x100000
)

// CPUMask is the affinity mask of CPUs 0 to n-1 (n at most 64).
func CPUMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<n - 1
}

// CPUList is the kernel's list of CPUs 0 to n-1 (/sys/devices/system/cpu/
// online, Cpus_allowed_list): "0" for one, "0-3" for four.
func CPUList(n int) string {
	if n == 1 {
		return "0"
	}
	return fmt.Sprintf("0-%d", n-1)
}
