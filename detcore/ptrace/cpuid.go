package ptrace

// #include <cpuid.h>
// static void hermit_cpuid(unsigned leaf, unsigned sub, unsigned *r) {
// 	__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
// }
import "C"

import (
	"fmt"
	"sync"

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

// enableCPUIDFaulting makes CPUID fault in the thread in, which is at an
// exec: the kernel clears the setting at every execve, so hermit makes the
// guest call arch_prctl(ARCH_SET_CPUID, 0) itself.
func enableCPUIDFaulting(in *injector) error {
	ret, err := in.call(unix.SYS_ARCH_PRCTL, archSetCPUID, 0)
	if err != nil {
		return err
	}
	if ret != 0 {
		return fmt.Errorf("arch_prctl(ARCH_SET_CPUID, 0): %v", unix.Errno(-ret))
	}
	return nil
}
