package detcore

import (
	"bytes"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// The guest's view of the machine and of randomness: every value here is a
// constant or comes from the seeded generator, never from the host.

// DefaultCPUs is how many CPUs the guest is told it has (sched_getaffinity,
// /proc, /sys) unless Config.CPUs says otherwise: one, the CPU it runs on,
// as rr and Meta's Hermit tell theirs. Programs that start a thread per
// CPU (sort, Go's GOMAXPROCS, thread pools) would otherwise run several
// that take turns on one, each wait between them a switch.
const DefaultCPUs = 1

// MaxCPUs bounds Config.CPUs: the affinity mask is one word.
const MaxCPUs = 64

// cpus returns how many CPUs the guest is told it has.
func (e *Engine) cpus() int {
	if e.cfg.CPUs > 0 {
		return e.cfg.CPUs
	}
	return DefaultCPUs
}

// uname(2) fields, each a 65-byte NUL-padded string in struct utsname.
var unameFields = [6]string{"Linux", "hermit", "6.1.0-hermit", "#1 SMP PREEMPT_DYNAMIC hermit", "x86_64", "(none)"}

// GuestMemory is the RAM sysinfo(2) reports.
const GuestMemory = 4 << 30

// rand returns the next value of t's generator, a splitmix64 stream seeded
// by the run's seed and the thread's guest tid.
func (t *thread) rand() uint64 {
	t.rng += 0x9e3779b97f4a7c15
	return splitmix64(t.rng)
}

// fillRandom writes n pseudo-random bytes from t's generator at addr.
func (e *Engine) fillRandom(t *thread, addr uint64, n uint64) bool {
	const chunk = 4096
	buf := make([]byte, min(n, chunk))
	for done := uint64(0); done < n; {
		m := min(n-done, chunk)
		for i := uint64(0); i < m; i += 8 {
			var w [8]byte
			putLE64(w[:], t.rand())
			copy(buf[i:m], w[:])
		}
		if e.t.WriteMem(t.tid, addr+done, buf[:m]) != nil {
			return false
		}
		done += m
	}
	return true
}

// fillZero writes up to n zero bytes to t's memory at addr, and returns
// how many it wrote before the first address it could not write.
func (e *Engine) fillZero(t *thread, addr uint64, n uint64) uint64 {
	const chunk, page = 1 << 16, 4096
	buf := make([]byte, min(n, chunk))
	done, size := uint64(0), uint64(chunk)
	for done < n {
		// Chunks end at page boundaries; after a fault, a page at a
		// time, up to the first page that cannot be written.
		m := min(n-done, size-(addr+done)%page)
		if e.t.WriteMem(t.tid, addr+done, buf[:m]) != nil {
			if size == page {
				break
			}
			size = page
			continue
		}
		done += m
	}
	return done
}

func sysGetrandom(e *Engine, t *thread) {
	n := t.regs.Rsi
	if n > 1<<25-1 {
		n = 1<<25 - 1
	}
	if !e.fillRandom(t, t.regs.Rdi, n) {
		t.emulate(-abi.EFAULT)
		return
	}
	t.emulate(int64(n))
}

func sysUname(e *Engine, t *thread) {
	var b [6 * 65]byte
	for i, f := range unameFields {
		if n, ok := e.names[i]; ok {
			f = n
		}
		copy(b[i*65:], f)
	}
	e.reply(t, t.regs.Rdi, b[:], 0)
}

// sysSetname lets sethostname and setdomainname run, in the guest's own
// UTS namespace, and has uname show the name once the kernel took it.
func sysSetname(e *Engine, t *thread) {
	addr, n := t.regs.Rdi, t.regs.Rsi
	if n > 64 {
		return // EINVAL, the kernel's
	}
	name := make([]byte, n)
	if e.t.ReadMem(t.tid, addr, name) != nil {
		return // EFAULT, the kernel's
	}
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	field := 1
	if t.nr == abi.SYS_SETDOMAINNAME {
		field = 5
	}
	t.act = actExitStop
	t.onExit = func(e *Engine, t *thread) {
		if t.regs.Rax != 0 {
			return
		}
		if e.names == nil {
			e.names = map[int]string{}
		}
		e.names[field] = string(name)
	}
}

// sysSysinfo fills struct sysinfo: uptime, loads, memory and process count.
func sysSysinfo(e *Engine, t *thread) {
	var b [112]byte
	now, _ := e.now(clockMonotonic)
	putLE64(b[0:], uint64(now/1e9)) // uptime
	putLE64(b[32:], GuestMemory)    // totalram
	putLE64(b[40:], GuestMemory/2)  // freeram
	b[80] = byte(len(e.procs))      // procs (u16)
	b[81] = byte(len(e.procs) >> 8) //
	b[104] = 1                      // mem_unit (u32)
	e.reply(t, t.regs.Rdi, b[:], 0)
}

// sysGetcpu says every thread runs on CPU 0 of node 0.
func sysGetcpu(e *Engine, t *thread) {
	var zero [4]byte
	for _, p := range []uint64{t.regs.Rdi, t.regs.Rsi} {
		if p != 0 && e.t.WriteMem(t.tid, p, zero[:]) != nil {
			t.emulate(-abi.EFAULT)
			return
		}
	}
	t.emulate(0)
}

// sysSchedGetaffinity reports the guest's CPUs (Config.CPUs), whatever the
// host has.
func sysSchedGetaffinity(e *Engine, t *thread) {
	u := e.affinityOf(t)
	switch {
	case u == nil:
		t.emulate(-abi.ESRCH)
		return
	case t.regs.Rsi < 8 || t.regs.Rsi%8 != 0:
		t.emulate(-abi.EINVAL)
		return
	}
	mask := abi.CPUMask(e.cpus())
	if u.affinity != 0 {
		mask &= u.affinity
	}
	var b [8]byte
	putLE64(b[:], mask)
	e.reply(t, t.regs.Rdx, b[:], 8)
}

// sysSchedSetaffinity keeps the mask for the thread it names (its
// threads run on hermit's one CPU whatever it says), which must hold one
// of the guest's CPUs.
func sysSchedSetaffinity(e *Engine, t *thread) {
	u := e.affinityOf(t)
	if u == nil {
		t.emulate(-abi.ESRCH)
		return
	}
	var b [8]byte
	n := min(t.regs.Rsi, 8)
	if e.t.ReadMem(t.tid, t.regs.Rdx, b[:n]) != nil {
		t.emulate(-abi.EFAULT)
		return
	}
	mask := le64(b[:]) & abi.CPUMask(e.cpus())
	if mask == 0 {
		t.emulate(-abi.EINVAL)
		return
	}
	u.affinity = mask
	t.emulate(0)
}

// affinityOf finds the thread a sched_*affinity call names (0: the
// caller), or nil.
func (e *Engine) affinityOf(t *thread) *thread {
	if pid := int32(t.regs.Rdi); pid != 0 {
		return e.threadByVtid(int(pid))
	}
	return t
}

// RUSAGE_CHILDREN and RUSAGE_THREAD from <linux/resource.h>.
const (
	rusageChildren = -1
	rusageThread   = 1
)

// sysGetrusage reports the CPU time (cputime.go) as user time for the process or
// thread, and nothing for children: struct rusage is two timevals and 14
// longs.
func sysGetrusage(e *Engine, t *thread) {
	var b [144]byte
	if who := int32(t.regs.Rdi); who != rusageChildren {
		cpu := t.proc.cpuTime()
		if who == rusageThread {
			cpu = t.cpu
		}
		putLE64(b[0:], uint64(cpu/1e9))
		putLE64(b[8:], uint64(cpu%1e9/1000))
		putLE64(b[32:], 1024) // ru_maxrss, KiB
	}
	e.reply(t, t.regs.Rsi, b[:], 0)
}

// clockTicks is USER_HZ, the unit of times(2).
const clockTicks = 100

// sysTimes fills struct tms (user time: the process's CPU time,
// cputime.go) and returns the ticks since boot.
func sysTimes(e *Engine, t *thread) {
	now, _ := e.now(clockMonotonic)
	if p := t.regs.Rdi; p != 0 {
		var b [32]byte
		putLE64(b[0:], uint64(t.proc.cpuTime()*clockTicks/1e9))
		if e.t.WriteMem(t.tid, p, b[:]) != nil {
			t.emulate(-abi.EFAULT)
			return
		}
	}
	t.emulate(now * clockTicks / 1e9)
}
