package ptrace

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/sys/unix"
)

// Raw ptrace calls: RawSyscall skips the Go scheduler hooks of Syscall
// (ptrace-costs.md). wait4, which blocks until the guest stops, goes
// through Syscall: a goroutine blocked in RawSyscall holds its P, and a
// garbage collection's stop-the-world then waits for it, stalling the
// watchdog, which alone can stop a guest that spins without syscalls: a
// deadlock seen under load. Measured with 200,000 intercepted
// sched_yield calls, pinned: 3.87 s either way.

// ptraceRaw makes a ptrace request whose data is a number (a signal, a
// word, options); ptracePtr one whose data points to memory.
func ptraceRaw(req int, tid int, addr, data uintptr) error {
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(tid), addr, data, 0, 0)
	if e != 0 {
		return &ptraceError{req: req, data: data, errno: e}
	}
	return nil
}

// ptracePtr makes a ptrace request whose data points to memory of
// hermit's. The pointer becomes a number only in the syscall's own
// argument list, as unsafe.Pointer's rule 4 requires: converted in a
// caller (getRegs passing uintptr(unsafe.Pointer(r)) to ptraceRaw), a
// stack that grew in between (a function's prologue) moved the variable,
// and the kernel read or wrote its old copy. GETREGS and
// PTRACE_GET_SYSCALL_INFO then came back as zeros, now and then: a
// syscall entry taken for an exit, whose call PTRACE_SYSEMU had skipped
// went back to the guest with ENOSYS; registers of zeros set back (EIO).
func ptracePtr(req int, tid int, addr uintptr, data unsafe.Pointer) error {
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(tid), addr, uintptr(data), 0, 0)
	if e != 0 {
		return &ptraceError{req: req, errno: e}
	}
	return nil
}

// ptraceError names the request that failed: a fatal "input/output
// error" said nothing of which of hermit's stops or resumes it was.
type ptraceError struct {
	req   int
	data  uintptr
	errno unix.Errno
}

var ptraceNames = map[int]string{
	unix.PTRACE_CONT: "PTRACE_CONT", unix.PTRACE_SYSCALL: "PTRACE_SYSCALL", unix.PTRACE_SYSEMU: "PTRACE_SYSEMU",
	unix.PTRACE_SINGLESTEP: "PTRACE_SINGLESTEP", unix.PTRACE_GETREGS: "PTRACE_GETREGS", unix.PTRACE_SETREGS: "PTRACE_SETREGS",
	unix.PTRACE_GETREGSET: "PTRACE_GETREGSET", unix.PTRACE_SETREGSET: "PTRACE_SETREGSET", unix.PTRACE_LISTEN: "PTRACE_LISTEN",
	unix.PTRACE_INTERRUPT: "PTRACE_INTERRUPT", unix.PTRACE_GETSIGINFO: "PTRACE_GETSIGINFO", unix.PTRACE_SETSIGINFO: "PTRACE_SETSIGINFO",
	unix.PTRACE_GETSIGMASK: "PTRACE_GETSIGMASK", unix.PTRACE_SETSIGMASK: "PTRACE_SETSIGMASK", unix.PTRACE_GETEVENTMSG: "PTRACE_GETEVENTMSG",
	unix.PTRACE_GET_SYSCALL_INFO: "PTRACE_GET_SYSCALL_INFO", unix.PTRACE_POKEUSR: "PTRACE_POKEUSR", unix.PTRACE_PEEKUSR: "PTRACE_PEEKUSR",
}

func (e *ptraceError) Error() string {
	name, ok := ptraceNames[e.req]
	if !ok {
		name = fmt.Sprintf("ptrace request %#x", e.req)
	}
	switch e.req {
	case unix.PTRACE_CONT, unix.PTRACE_SYSCALL, unix.PTRACE_SYSEMU, unix.PTRACE_SINGLESTEP, unix.PTRACE_LISTEN:
		return fmt.Sprintf("%s (signal %d): %v", name, e.data, e.errno)
	}
	return fmt.Sprintf("%s: %v", name, e.errno)
}

func (e *ptraceError) Unwrap() error { return e.errno }

// pokeMem writes b (at most 16 bytes) at addr in stopped thread tid's
// memory a word at a time (PTRACE_PEEKDATA, PTRACE_POKEDATA), which,
// unlike process_vm_writev, writes pages the guest cannot (its code: an
// int3): two or three calls where opening /proc/TID/mem took a file's
// worth.
func pokeMem(tid int, addr uint64, b []byte) error {
	for len(b) > 0 {
		base := addr &^ 7
		var word [8]byte
		if err := ptracePtr(unix.PTRACE_PEEKDATA, tid, uintptr(base), unsafe.Pointer(&word[0])); err != nil {
			return err
		}
		n := copy(word[addr-base:], b)
		if err := ptraceRaw(unix.PTRACE_POKEDATA, tid, uintptr(base), uintptr(*(*uint64)(unsafe.Pointer(&word[0])))); err != nil {
			return err
		}
		addr, b = addr+uint64(n), b[n:]
	}
	return nil
}

// sudConfig is struct ptrace_sud_config (syscall user dispatch).
type sudConfig struct{ mode, selector, offset, length uint64 }

// ptraceSetSUD is PTRACE_SET_SYSCALL_USER_DISPATCH_CONFIG (Linux 6.4).
const ptraceSetSUD = 0x4210

// setSUD sets thread tid's syscall user dispatch, as its own prctl
// PR_SET_SYSCALL_USER_DISPATCH would.
func setSUD(tid int, c *sudConfig) error {
	return ptracePtr(ptraceSetSUD, tid, unsafe.Sizeof(*c), unsafe.Pointer(c))
}

func getRegs(tid int, r *abi.Regs) error {
	return ptracePtr(unix.PTRACE_GETREGS, tid, 0, unsafe.Pointer(r))
}

func setRegs(tid int, r *abi.Regs) error {
	return ptracePtr(unix.PTRACE_SETREGS, tid, 0, unsafe.Pointer(r))
}

func getEventMsg(tid int) (uint64, error) {
	var msg uint64
	err := ptracePtr(unix.PTRACE_GETEVENTMSG, tid, 0, unsafe.Pointer(&msg))
	return msg, err
}

// wait4 waits for any child or tracee (__WALL), retrying on EINTR. It
// releases its P while it blocks (see above).
func wait4(pid int, options int) (int, unix.WaitStatus, error) {
	var ws unix.WaitStatus
	for {
		r, _, e := unix.Syscall6(unix.SYS_WAIT4, uintptr(pid), uintptr(unsafe.Pointer(&ws)), uintptr(options), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, 0, e
		}
		return int(r), ws, nil
	}
}

// kernelSigaction is struct sigaction as the rt_sigaction syscall takes it.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

const saNoCldStop = 1 // SA_NOCLDSTOP, missing from x/sys/unix

// quietSIGCHLD adds SA_NOCLDSTOP to the Go runtime's SIGCHLD handler, so
// that a tracee stopping does not send the tracer a signal (~2 µs a stop).
// wait4 still reports every stop.
func quietSIGCHLD() error {
	var act kernelSigaction
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGCHLD), 0, uintptr(unsafe.Pointer(&act)), 8, 0, 0); e != 0 {
		return e
	}
	if act.handler == 0 || act.handler == 1 || act.flags&saNoCldStop != 0 {
		return nil
	}
	act.flags |= saNoCldStop
	if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGCHLD), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0); e != 0 {
		return e
	}
	return nil
}

// pipeSpace returns the free space of the pipe open as fd, or -1.
func pipeSpace(fd int) int {
	size, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		return -1
	}
	var unread int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCINQ, uintptr(unsafe.Pointer(&unread))); e != 0 {
		return -1
	}
	return size - int(unread)
}

func setTicks(fd int, n uint64) error {
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), tfdIocSetTicks, uintptr(unsafe.Pointer(&n))); e != 0 {
		return e
	}
	return nil
}

// Signal implements detcore.Tracer.Signal.
func (t *Tracer) Signal(pid, tid, sig int, info []byte) error {
	var e unix.Errno
	switch {
	case info == nil && tid == 0:
		_, _, e = unix.RawSyscall(unix.SYS_KILL, uintptr(pid), uintptr(sig), 0)
	case info == nil:
		_, _, e = unix.RawSyscall(unix.SYS_TGKILL, uintptr(pid), uintptr(tid), uintptr(sig))
	case tid == 0:
		_, _, e = unix.RawSyscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(sig), uintptr(unsafe.Pointer(&info[0])))
	default:
		_, _, e = unix.RawSyscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(pid), uintptr(tid), uintptr(sig), uintptr(unsafe.Pointer(&info[0])), 0, 0)
	}
	if e != 0 {
		return gone(e)
	}
	return nil
}

// arch_prctl codes from <asm/prctl.h>.
const (
	archGetCPUID = 0x1011
	archSetCPUID = 0x1012
)

// CPUIDFaulting reports whether this machine can make CPUID fault
// (ARCH_SET_CPUID), which hermit needs to virtualize CPUID. Most VMs and
// AMD CPUs cannot.
func CPUIDFaulting() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, _, e := unix.RawSyscall(unix.SYS_ARCH_PRCTL, archSetCPUID, 0, 0); e != 0 {
		return false
	}
	unix.RawSyscall(unix.SYS_ARCH_PRCTL, archSetCPUID, 1, 0)
	return true
}
