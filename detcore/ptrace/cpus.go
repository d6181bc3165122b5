package ptrace

import (
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A hermit pins its tracer and guest to one CPU, where a stop costs a
// tenth of what it costs across CPUs. Hermits running side by side on
// one CPU share it, and the kernel can starve a pinned thread there (a
// tracer and guest handing a CPU back and forth every few microseconds
// in one session kept a computing guest of another session to 2 ms of
// CPU in 2 s). So each pinned hermit claims its CPU, for as long as it
// lives, by binding an abstract Unix socket named after the CPU and a
// slot (hermit-cpu/N/S); FreeCPU finds the CPU with the fewest claims.
// The kernel drops a claim when its process ends, however it ends, and
// the names leave no file behind. Abstract names are per network
// namespace: hermits in other namespaces do not see each other's claims.

// maxSlots bounds the claims counted on one CPU.
const maxSlots = 64

var claims struct {
	sync.Mutex
	cpus map[int]bool // the CPUs this process has claimed
}

// claimSlot binds slot of cpu's name, and keeps the socket open for the
// life of the process; false if another process holds it.
func claimSlot(cpu, slot int) bool {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	if unix.Bind(fd, &unix.SockaddrUnix{Name: fmt.Sprintf("@hermit-cpu/%d/%d", cpu, slot)}) != nil {
		unix.Close(fd)
		return false
	}
	if claims.cpus == nil {
		claims.cpus = map[int]bool{}
	}
	claims.cpus[cpu] = true
	return true // fd stays open until the process exits
}

// ClaimCPU records that this process pins to cpu, so that other hermits'
// FreeCPU counts it; once per CPU.
func ClaimCPU(cpu int) {
	claims.Lock()
	defer claims.Unlock()
	if claims.cpus[cpu] {
		return
	}
	for slot := 0; slot < maxSlots && !claimSlot(cpu, slot); slot++ {
	}
}

// FreeCPU returns the lowest of the CPUs this process may run on that the
// fewest other hermits have claimed, and claims it: the lowest one, the
// same on every run, unless other hermits run at the same time. -1 if
// the kernel does not say which CPUs this process may use.
func FreeCPU() int {
	cpus := AllowedCPUs()
	if len(cpus) == 0 {
		return -1
	}
	claims.Lock()
	defer claims.Unlock()
	for _, c := range cpus {
		if claims.cpus[c] {
			return c
		}
	}
	for slot := 0; slot < maxSlots; slot++ {
		for _, c := range cpus {
			if claimSlot(c, slot) {
				return c
			}
		}
	}
	return cpus[0]
}

// AllowedCPUs lists the CPUs this process may run on, lowest first.
func AllowedCPUs() []int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// FirstCPU returns the lowest CPU this process may run on (in a cpuset
// the first of the set), or -1 if the kernel does not say.
func FirstCPU() int {
	if cpus := AllowedCPUs(); len(cpus) > 0 {
		return cpus[0]
	}
	return -1
}

// MayRunOn says whether this process may run on CPU n.
func MayRunOn(n int) bool {
	var set unix.CPUSet
	return n >= 0 && unix.SchedGetaffinity(0, &set) == nil && set.IsSet(n)
}

// CurrentCPU returns the CPU the calling thread runs on, a good place to
// pin a new run: the kernel just chose it.
func CurrentCPU() int {
	var cpu, node uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), uintptr(unsafe.Pointer(&node)), 0); e != 0 {
		return -1
	}
	return int(cpu)
}
