package detcore

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// /proc/PID/stat and /proc/PID/status (and their task/TID forms) report
// things no run controls: page faults, CPU times, context switches,
// resident memory (which the kernel's fault-around makes depend on the page
// cache), the CPU last run on, the CPUs allowed. Reads of them are answered
// with those fields fixed or in virtual time; the rest passes through.

// ProcTracer is implemented by tracers that can read the guest's /proc
// files from outside. Its methods are called from the Run goroutine.
type ProcTracer interface {
	// FdPath returns the path of descriptor fd of tid's process, as the
	// guest sees it.
	FdPath(tid, fd int) (string, error)
	// ReadFd returns the whole content of descriptor fd, read from offset
	// 0 without moving it, and the descriptor's current offset.
	ReadFd(tid, fd int) (content []byte, off int64, err error)
	// SeekFd sets the offset of descriptor fd.
	SeekFd(tid, fd int, off int64) error
}

// lazyRegexp compiles expr on first use: compiling every pattern at
// start would add to each run's start-up what most runs never use.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

var procStatPath = lazyRegexp(`^/proc/(\d+|self|thread-self)(/task/\d+)?/(stat|status)$`)

// /proc/PID/mountinfo numbers mounts with ids the kernel hands out
// host-wide (another namespace made meanwhile shifts them): they are
// renumbered in order of appearance.
var procMountinfoPath = lazyRegexp(`^/proc/(\d+|self|thread-self)(/task/\d+)?/mountinfo$`)

// /proc/PID/sched and /proc/PID/schedstat are the host scheduler's
// accounting: schedstat becomes the virtual run time, no wait and no
// slices; every value of sched becomes 0, its names kept.
var procSchedPath = lazyRegexp(`^/proc/(\d+|self|thread-self)(/task/\d+)?/(sched|schedstat)$`)

var schedValue = lazyRegexp(`(?m)^([a-zA-Z_.\[\]>-]+ +:) +\S+$`)

func (e *Engine) normalizeSched(name string, b []byte) []byte {
	if name == "schedstat" {
		return fmt.Appendf(nil, "%d 0 0\n", e.clock)
	}
	return schedValue().ReplaceAll(b, []byte("$1 0"))
}

// normalizeMountinfo renumbers the mount and parent ids of mountinfo
// lines (a parent outside the list, the namespace's root's, becomes 1);
// anon gives the minor a filesystem without a device is shown with, the
// one stat shows.
func normalizeMountinfo(b []byte, anon func(minor uint32) uint32) []byte {
	ids := map[string]int{}
	id := func(s string, add bool) string {
		if n, ok := ids[s]; ok {
			return strconv.Itoa(n)
		}
		if !add {
			return "1"
		}
		ids[s] = len(ids) + 2
		return strconv.Itoa(ids[s])
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	for _, l := range lines {
		if f := bytes.Fields(l); len(f) > 1 {
			id(string(f[0]), true)
		}
	}
	// Filesystems without a device (proc, tmpfs, ...) get their minor
	// numbers from the host, in the order mounts happen machine-wide.
	var out []byte
	for _, l := range lines {
		f := bytes.SplitN(l, []byte(" "), 4)
		if len(f) < 4 {
			out = append(out, l...)
			continue
		}
		dev := string(f[2])
		if m, ok := strings.CutPrefix(dev, "0:"); ok {
			if n, err := strconv.ParseUint(m, 10, 32); err == nil {
				dev = "0:" + strconv.Itoa(int(anon(uint32(n))))
			}
		}
		out = fmt.Appendf(out, "%s %s %s %s", id(string(f[0]), false), id(string(f[1]), false), dev, f[3])
	}
	return out
}

// /proc/uptime, /proc/loadavg, /proc/stat and /proc/meminfo tell the
// host's uptime, load, CPU times, boot time and free memory: they are
// answered from the virtual clock (CLOCK_BOOTTIME, the epoch), the
// guest's own threads, and the machine sysinfo describes (Config.CPUs CPUs,
// GuestMemory of memory, half of it free).
var procGlobalPath = lazyRegexp(`^/proc/(uptime|loadavg|stat|meminfo)$`)

// Host statistics (interrupts, memory zones and slabs, disk, pressure and
// scheduler counters, open files and inodes, the entropy pool, locks)
// tell how the host runs: their numbers read 0, their layout kept.
// /proc/sys/kernel/random/uuid gives a new UUID made from the seed at each
// read, and boot_id one UUID for the run.
var procHostPath = lazyRegexp(`^/proc/(vmstat|interrupts|diskstats|softirqs|zoneinfo|slabinfo|timer_list|buddyinfo|pagetypeinfo|schedstat|vmallocinfo|locks|pressure/(?:cpu|io|memory|irq)|sys/fs/(?:file-nr|inode-nr|inode-state|dentry-state)|sys/kernel/random/(?:entropy_avail|uuid|boot_id))$`)

// hostDigits is a run of digits of a host statistics file, with the
// spaces or tabs before it, which pad it to the host's width.
var hostDigits = lazyRegexp(`[ \t]*[0-9]+`)

// zeroNumbers reads every run of digits of host as 0, with one of the
// blanks that padded it: widths and column alignment followed the host's
// numbers (buddyinfo's length changed from run to run).
func zeroNumbers(host []byte) []byte {
	return hostDigits().ReplaceAllFunc(host, func(m []byte) []byte {
		if m[0] == ' ' || m[0] == '\t' {
			return []byte{m[0], '0'}
		}
		return []byte("0")
	})
}

// procHost is the content of one of those files as read at offset off;
// host is the host's.
func (e *Engine) procHost(name string, host []byte, off int64) []byte {
	switch name {
	case "sys/kernel/random/uuid":
		if off == 0 || e.uuid == nil {
			e.uuids++
			e.uuid = uuidOf(e.cfg.Seed, e.uuids)
		}
		return e.uuid
	case "sys/kernel/random/boot_id":
		return uuidOf(e.cfg.Seed, 0)
	}
	return zeroNumbers(host)
}

// uuidOf is the nth version-4 UUID of seed's, as the kernel prints one.
func uuidOf(seed, n uint64) []byte {
	var b [16]byte
	putLE64(b[0:], splitmix64(seed^0x75756964<<32^n))
	putLE64(b[8:], splitmix64(seed+n*0x9e3779b97f4a7c15+0x75756964))
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Appendf(nil, "%x-%x-%x-%x-%x\n", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// procGlobal is the content of one of those files; host is the host's,
// whose layout /proc/meminfo keeps.
func (e *Engine) procGlobal(name string, host []byte) []byte {
	up, _ := e.now(clockBoottime)
	cs := up / 1e7 // centiseconds: the clock ticks of /proc (USER_HZ 100)
	ncpu := int64(e.cpus())
	switch name {
	case "uptime":
		idle := cs * ncpu
		return fmt.Appendf(nil, "%d.%02d %d.%02d\n", cs/100, cs%100, idle/100, idle%100)
	case "stat":
		var b []byte
		for i := int64(-1); i < ncpu; i++ {
			name := "cpu "
			if i >= 0 {
				name = "cpu" + strconv.FormatInt(i, 10)
			}
			mult := int64(1)
			if i < 0 {
				mult = ncpu
			}
			b = fmt.Appendf(b, "%s %d 0 0 %d 0 0 0 0 0 0\n", name, 0, cs*mult)
		}
		// The virtual machine booted MonotonicStart before the run's
		// epoch (the uptime then): the same second at every read.
		boot := (e.epoch() - MonotonicStart) / 1e9
		return fmt.Appendf(b, "intr 0\nctxt 0\nbtime %d\nprocesses %d\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n", boot, len(e.procs))
	case "meminfo":
		return virtualMeminfo(host)
	}
	last := 0
	for _, t := range e.ordered() {
		last = max(last, t.vtid)
	}
	return fmt.Appendf(nil, "0.00 0.00 0.00 1/%d %d\n", len(e.ordered()), last)
}

// virtualMeminfo keeps the host's /proc/meminfo lines, each with the
// virtual machine's value: GuestMemory in all, half of it free and
// available, nothing else used.
func virtualMeminfo(host []byte) []byte {
	total := uint64(GuestMemory) / 1024
	var b []byte
	for _, line := range bytes.SplitAfter(host, []byte("\n")) {
		key, _, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		v := uint64(0)
		switch string(key) {
		case "MemTotal":
			v = total
		case "MemFree", "MemAvailable":
			v = total / 2
		}
		unit := ""
		if bytes.HasSuffix(bytes.TrimSpace(line), []byte("kB")) {
			unit = " kB"
		}
		b = fmt.Appendf(b, "%-15s %8d%s\n", string(key)+":", v, unit)
	}
	return b
}

// readProc emulates a read of a /proc stat or status file; it reports
// false when fd is not one (the read then runs natively).
func (e *Engine) readProc(t *thread, fd int) bool {
	pt, ok := e.t.(ProcTracer)
	if !ok {
		return false
	}
	path, err := pt.FdPath(t.tid, fd)
	if err != nil {
		return false
	}
	m, g := procStatPath().FindStringSubmatch(path), procGlobalPath().FindStringSubmatch(path)
	mi := procMountinfoPath().MatchString(path)
	sc := procSchedPath().FindStringSubmatch(path)
	mp := procMapsPath().FindStringSubmatch(path)
	sm := procStatmPath().MatchString(path)
	h := procHostPath().FindStringSubmatch(path)
	ipc := procSysvipcPath().MatchString(path)
	fi := procFdinfoPath().FindStringSubmatch(path)
	if m == nil && g == nil && !mi && sc == nil && mp == nil && !sm && h == nil && !ipc && fi == nil {
		return false
	}
	content, off, err := pt.ReadFd(t.tid, fd)
	if err != nil {
		return false
	}
	switch {
	case fi != nil:
		n, _ := strconv.Atoi(fi[3])
		content = e.normalizeFdinfo(t, fi[1], n, content)
	case ipc:
		content = normalizeSysvipc(content, e.epoch())
	case h != nil:
		content = e.procHost(h[1], content, off)
	case sc != nil:
		content = e.normalizeSched(sc[3], content)
	case mp != nil:
		content = e.files().normalizeMaps(content, mp[3] == "smaps_rollup")
	case sm:
		content = normalizeStatm(content)
	case mi:
		content = normalizeMountinfo(content, e.files().vdevMinor)
	case g != nil:
		content = e.procGlobal(g[1], content)
	case m[3] == "stat":
		// Every other thread is stopped by hermit; natively the reader
		// runs and the others would most likely be asleep.
		content = e.normalizeStat(content, isSelf(m[1], t), e.statTimes(t, m[1], m[2]))
	default:
		content = normalizeStatus(content, isSelf(m[1], t), e.cpus())
	}
	n := 0
	if off < int64(len(content)) {
		n = min(len(content)-int(off), int(min(t.regs.Rdx, 1<<20)))
		if e.t.WriteMem(t.tid, t.regs.Rsi, content[off:int(off)+n]) != nil {
			t.emulate(-abi.EFAULT)
			return true
		}
	}
	if pt.SeekFd(t.tid, fd, off+int64(n)) != nil {
		return false
	}
	t.emulate(int64(n))
	return true
}

// isSelf says whether a /proc path's pid part names t's own process.
func isSelf(pid string, t *thread) bool {
	return pid == "self" || pid == "thread-self" || pid == strconv.Itoa(t.proc.vpid)
}

// Fields of /proc/PID/stat, counted from 1 (pid) as in proc(5), that
// hermit fixes.
var statFixed = map[int]bool{
	10: true, 11: true, 12: true, 13: true, // minflt, cminflt, majflt, cmajflt
	15: true, 16: true, 17: true, // stime, cutime, cstime
	24: true,                     // rss
	39: true,                     // processor
	42: true, 43: true, 44: true, // delayacct_blkio_ticks, guest_time, cguest_time
}

// statTimes are the times a /proc stat file tells of its process or
// thread, in virtual ns: its CPU time, and when the process was made.
type statTimes struct{ cpu, born int64 }

// statTimes returns the times of the process pid names (self, or a guest
// pid), or of its thread task (/task/TID), as t's path named them: those
// of the run, if the engine has no such process.
func (e *Engine) statTimes(t *thread, pid, task string) statTimes {
	owner := e.procOwner(t, pid)
	if owner == nil {
		return statTimes{cpu: e.clock}
	}
	p := owner.proc
	tm := statTimes{cpu: p.cpuTime(), born: p.born}
	if tid, err := strconv.Atoi(strings.TrimPrefix(task, "/task/")); err == nil {
		for _, th := range p.threads {
			if th.vtid == tid {
				tm.cpu = th.cpu
			}
		}
	}
	return tm
}

// normalizeStat rewrites /proc/PID/stat: user time and start time in
// virtual time, the other fields above 0.
func (e *Engine) normalizeStat(b []byte, self bool, tm statTimes) []byte {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return b
	}
	fields := bytes.Fields(b[i+1:])
	out := append([]byte(nil), b[:i+1]...)
	for j, f := range fields {
		n := j + 3 // fields[0] is field 3, state
		switch {
		case n == 3 && string(f) == "t": // tracing stop
			f = []byte(runState(self)[:1])
		case n == 14: // utime, in clock ticks: the virtual CPU time
			f = []byte(strconv.FormatInt(tm.cpu*clockTicks/1e9, 10))
		case n == 22: // starttime: when the process was made, since boot
			f = []byte(strconv.FormatInt((MonotonicStart+tm.born)*clockTicks/1e9, 10))
		case statFixed[n]:
			f = []byte("0")
		}
		out = append(out, ' ')
		out = append(out, f...)
	}
	return append(out, '\n')
}

// runState is the state a thread stopped by hermit shows.
func runState(self bool) string {
	if self {
		return "R (running)"
	}
	return "S (sleeping)"
}

// statusFixed gives the value of each /proc/PID/status line hermit fixes.
var statusFixed = map[string]string{
	"VmHWM":                      "1024 kB",
	"VmRSS":                      "1024 kB",
	"RssAnon":                    "512 kB",
	"RssFile":                    "512 kB",
	"RssShmem":                   "0 kB",
	"VmPTE":                      "64 kB",
	"voluntary_ctxt_switches":    "0",
	"nonvoluntary_ctxt_switches": "0",
}

// normalizeStatus fixes the volatile lines of /proc/PID/status, and says
// the process may run on the guest's ncpu CPUs.
func normalizeStatus(b []byte, self bool, ncpu int) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		fixed, is := statusFixed[string(k)]
		switch string(k) {
		case "Cpus_allowed":
			fixed, is = fmt.Sprintf("%x", abi.CPUMask(ncpu)), true
		case "Cpus_allowed_list":
			fixed, is = abi.CPUList(ncpu), true
		}
		if ok && is {
			line = []byte(string(k) + ":\t" + fixed + "\n")
		}
		if string(k) == "State" && bytes.HasPrefix(bytes.TrimSpace(v), []byte("t")) {
			line = []byte("State:\t" + runState(self) + "\n")
		}
		if string(k) == "SigQ" {
			// Signals queued for the user across the whole host, then
			// the limit: keep the limit only.
			if _, limit, ok := bytes.Cut(bytes.TrimSpace(v), []byte("/")); ok {
				line = []byte("SigQ:\t0/" + string(limit) + "\n")
			}
		}
		out = append(out, line...)
	}
	return out
}
