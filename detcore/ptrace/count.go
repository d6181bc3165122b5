package ptrace

import (
	"encoding/binary"
	"unsafe"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/sys/unix"
)

// Count mode (detcore/count.go) with PTRACE_SYSCALL.
//
// A thread resumed with ResumeCount runs under PTRACE_SYSCALL: the kernel
// stops it at the entry and the exit of every syscall. At an entry the
// tracer runs hermit's seccomp program on the call (the kernel runs it
// later: seccomp comes after the entry stop). A call the filter lets
// through is reported as StopUntraced, before it runs; any other is
// resumed at once, and the kernel's seccomp stop that follows goes to the
// engine as in any run. Exits are the tracer's own: it resumes them with
// PTRACE_SYSCALL, so a counted call costs two stops and an intercepted
// one three. (PTRACE_SYSEMU would save the exit stop, but it skips the
// call it stops at, which must then be made again: three stops for every
// counted call.)
//
// ResumeCountStep is a single step, except at a syscall instruction: that
// one runs under PTRACE_SYSCALL, to its entry, and the step ends after
// the call (the next resume from the entry, ResumeCountStep again, single
// steps it).

// emuState is the count-mode state of one thread.
type emuState struct {
	// count: resumed with ResumeCount or ResumeCountStep, the thread's
	// syscall stops are the tracer's to classify.
	count bool
}

// syscallInfo is struct ptrace_syscall_info (PTRACE_GET_SYSCALL_INFO) for
// an entry stop.
type syscallInfo struct {
	Op   uint8
	_    [3]uint8
	Arch uint32
	IP   uint64
	SP   uint64
	Nr   uint64
	Args [6]uint64
	_    [2]uint32
}

func getSyscallInfo(tid int, info *syscallInfo) error {
	return ptraceRaw(unix.PTRACE_GET_SYSCALL_INFO, tid, unsafe.Sizeof(*info), uintptr(unsafe.Pointer(info)))
}

// Resume implements detcore.Tracer.Resume.
func (t *Tracer) Resume(tid int, mode detcore.ResumeMode, sig int) error {
	req := unix.PTRACE_CONT
	switch mode {
	case detcore.ResumeSyscall:
		req = unix.PTRACE_SYSCALL
	case detcore.ResumeStep:
		req = unix.PTRACE_SINGLESTEP
	case detcore.ResumeCount:
		req = unix.PTRACE_SYSCALL
	case detcore.ResumeCountStep:
		req = unix.PTRACE_SINGLESTEP
		if t.atSyscallInsn(tid) {
			req = unix.PTRACE_SYSCALL
		}
	}
	counting := mode == detcore.ResumeCount || mode == detcore.ResumeCountStep
	if s := t.emus[tid]; s != nil {
		s.count = counting
	} else if counting {
		t.emus[tid] = &emuState{count: true}
	}
	return gone(ptraceRaw(req, tid, 0, uintptr(sig)))
}

// atSyscallInsn reports whether tid's next instruction is a syscall.
func (t *Tracer) atSyscallInsn(tid int) bool {
	var r abi.Regs
	var insn [2]byte
	if getRegs(tid, &r) != nil || t.ReadMem(tid, r.Rip, insn[:]) != nil {
		return false
	}
	return insn == [2]byte{0x0f, 0x05}
}

// syscallStop classifies a SIGTRAP|0x80 stop of tid. It returns the stop to
// report, or ok false when the tracer handled the stop itself and the
// thread runs on.
func (t *Tracer) syscallStop(tid int, st detcore.Stop) (detcore.Stop, bool, error) {
	st.Kind = detcore.StopSyscallExit
	if s := t.emus[tid]; s == nil || !s.count {
		return st, true, nil
	}
	var info syscallInfo
	if err := getSyscallInfo(tid, &info); err != nil {
		return st, true, gone(err)
	}
	if info.Op == unix.PTRACE_SYSCALL_INFO_ENTRY && filterAction(t.filter, &info) == unix.SECCOMP_RET_ALLOW {
		st.Kind, st.Msg = detcore.StopUntraced, info.Nr
		return st, true, nil
	}
	// An exit, or the entry of a call the kernel's filter decides on (its
	// seccomp stop comes next): on, still counting.
	return st, false, gone(ptraceRaw(unix.PTRACE_SYSCALL, tid, 0, 0))
}

// filterAction runs the classic BPF program prog, as seccomp would, on a
// call, and returns its action (SECCOMP_RET_TRACE for anything it cannot
// run: the kernel then decides). It knows the instructions buildFilter
// emits.
func filterAction(prog []unix.SockFilter, info *syscallInfo) uint32 {
	var data [64]byte
	binary.LittleEndian.PutUint32(data[offNr:], uint32(info.Nr))
	binary.LittleEndian.PutUint32(data[offArch:], info.Arch)
	binary.LittleEndian.PutUint64(data[8:], info.IP)
	for i, a := range info.Args {
		binary.LittleEndian.PutUint64(data[offArgs+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		f := prog[pc]
		switch f.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if f.K+4 > uint32(len(data)) {
				return unix.SECCOMP_RET_TRACE
			}
			acc = binary.LittleEndian.Uint32(data[f.K:])
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(f.K)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			pc += branch(acc == f.K, f)
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			pc += branch(acc >= f.K, f)
		case unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K:
			pc += branch(acc > f.K, f)
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			pc += branch(acc&f.K != 0, f)
		case unix.BPF_RET | unix.BPF_K:
			return f.K
		default:
			return unix.SECCOMP_RET_TRACE
		}
	}
	return unix.SECCOMP_RET_TRACE
}

func branch(cond bool, f unix.SockFilter) int {
	if cond {
		return int(f.Jt)
	}
	return int(f.Jf)
}
