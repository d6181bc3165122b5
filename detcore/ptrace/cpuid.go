package ptrace

// #include <cpuid.h>
// static void hermit_cpuid(unsigned leaf, unsigned sub, unsigned *r) {
// 	__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
// }
import "C"

import (
	"fmt"
	"sync"

	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/sys/unix"
)

func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32) {
	var r [4]C.unsigned
	C.hermit_cpuid(C.unsigned(leaf), C.unsigned(subleaf), &r[0])
	return uint32(r[0]), uint32(r[1]), uint32(r[2]), uint32(r[3])
}

// CPUID answers the guest's CPUID instruction: the host's values, less what
// would make a run depend on more than the program and its inputs: RDRAND
// and RDSEED are hidden (programs fall back to getrandom, which hermit
// serves), and the APIC ids, which name the CPU the instruction ran on,
// read 0.
func CPUID(leaf, subleaf uint32) [4]uint32 {
	key := [2]uint32{leaf, subleaf}
	cpuidMu.Lock()
	defer cpuidMu.Unlock()
	if v, ok := cpuidCache[key]; ok {
		return v
	}
	v := maskedCPUID(leaf, subleaf)
	cpuidCache[key] = v
	return v
}

// cpuidCache holds the answers given so far: a CPUID executed in a VM
// costs an exit to the hypervisor.
var (
	cpuidMu    sync.Mutex
	cpuidCache = map[[2]uint32][4]uint32{}
)

func maskedCPUID(leaf, subleaf uint32) [4]uint32 {
	a, b, c, d := cpuid(leaf, subleaf)
	switch leaf {
	case 1:
		b &^= 0xff << 24 // initial APIC id
		c &^= 1 << 30    // RDRAND
	case 7:
		if subleaf == 0 {
			b &^= 1 << 18 // RDSEED
		}
	case 0xb, 0x1f:
		d = 0 // x2APIC id
	case 0x8000001e:
		a = 0 // extended APIC id
	}
	return [4]uint32{a, b, c, d}
}

// enableCPUIDFaulting makes CPUID fault in thread tid, which must be
// stopped at an exec event: the kernel clears the setting at every execve,
// so hermit makes the guest call arch_prctl(ARCH_SET_CPUID, 0) itself,
// through the syscall instruction of a vDSO stub at insn.
func (t *Tracer) enableCPUIDFaulting(tid int, insn uint64) error {
	ret, err := t.injectSyscall(tid, insn, unix.SYS_ARCH_PRCTL, archSetCPUID, 0)
	if err != nil {
		return err
	}
	if ret != 0 {
		return fmt.Errorf("arch_prctl(ARCH_SET_CPUID, 0): %v", unix.Errno(-ret))
	}
	return nil
}

// injectSyscall makes thread tid, stopped at an exec event, execute
// syscall nr with args at the syscall instruction at insn, then restores
// its registers. It takes the thread through execve's own exit stop, then
// the injected call's entry and exit stops.
func (t *Tracer) injectSyscall(tid int, insn uint64, nr int, args ...uint64) (int64, error) {
	step := func() error {
		if err := ptraceRaw(unix.PTRACE_SYSCALL, tid, 0, 0); err != nil {
			return gone(err)
		}
		_, ws, err := wait4(tid, unix.WALL)
		if err != nil {
			return err
		}
		if !ws.Stopped() || int(ws.StopSignal()) != int(unix.SIGTRAP)|0x80 {
			return fmt.Errorf("injected syscall: unexpected stop %#x", int(ws))
		}
		return nil
	}
	// The exit of execve: from here the thread would return to the new
	// program, with these registers.
	if err := step(); err != nil {
		return 0, err
	}
	var saved, r abi.Regs
	if err := getRegs(tid, &saved); err != nil {
		return 0, gone(err)
	}
	r = saved
	r.Rip, r.Rax = insn, uint64(nr)
	for i, a := range args {
		r.SetArg(i, a)
	}
	if err := setRegs(tid, &r); err != nil {
		return 0, gone(err)
	}
	// The injected call's entry and exit.
	for i := 0; i < 2; i++ {
		if err := step(); err != nil {
			return 0, err
		}
	}
	if err := getRegs(tid, &r); err != nil {
		return 0, gone(err)
	}
	if r.OrigRax != uint64(nr) || r.Rip != insn+abi.SyscallInsnLen {
		return 0, fmt.Errorf("injected syscall: stopped in syscall %d at %#x", int64(r.OrigRax), r.Rip)
	}
	if err := setRegs(tid, &saved); err != nil {
		return 0, gone(err)
	}
	return int64(r.Rax), nil
}
