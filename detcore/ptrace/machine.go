package ptrace

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// machineFiles returns a file in memory that holds the files the launcher
// mounts over the host's so that the guest sees a machine of ncpu CPUs
// whatever the host has: /proc/cpuinfo (the host's first CPU, repeated,
// with fixed speeds; without RDRAND and RDSEED in its flags when
// hideRandom, as --virtualize-cpuid hides them from cpuid) and the CPU
// lists in /sys/devices/system/cpu and of the first NUMA node; and, with
// hosts, /etc/hosts with a line for that host name. Each file is a line
// "NAME SEC NSEC LEN" and its LEN bytes, NAME its path with '%' for '/'
// and SEC.NSEC the host file's modification time (stat of /etc/hosts,
// whose times pass through, --real-mtimes, is the same in every run).
// The launcher writes them on a tmpfs of its own namespace (machine.c):
// a run writes nothing to the host's disk, where making and removing a
// directory of files at every start cost more than the rest of the start
// on a filesystem full of recently removed inodes (ext4 without a
// journal skips those for a while, reading each one's inode).
func machineFiles(ncpu int, hosts string, hideRandom bool) (*os.File, error) {
	cpus := abi.CPUList(ncpu) + "\n"
	files := map[string]string{
		"/sys/devices/system/cpu/online":   cpus,
		"/sys/devices/system/cpu/possible": cpus,
		"/sys/devices/system/cpu/present":  cpus,
	}
	if _, err := os.Stat(nodeCPUs + "list"); err == nil {
		files[nodeCPUs+"list"] = cpus
		files[nodeCPUs+"map"] = cpuMap(ncpu) + "\n"
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		files["/proc/cpuinfo"] = cpuinfo(string(b), ncpu, hideRandom)
	}
	if hosts != "" {
		if b, err := os.ReadFile("/etc/hosts"); err == nil && !hostsNames(string(b), hosts) {
			files["/etc/hosts"] = string(b) + hostsLine(string(b), hosts)
		}
	}
	var b bytes.Buffer
	for _, path := range slices.Sorted(maps.Keys(files)) {
		var mtime unix.Timespec
		if fi, err := os.Stat(path); err == nil {
			mtime = unix.NsecToTimespec(fi.ModTime().UnixNano())
		}
		fmt.Fprintf(&b, "%s %d %d %d\n%s", strings.ReplaceAll(path, "/", "%"), mtime.Sec, mtime.Nsec, len(files[path]), files[path])
	}
	return memFile("hermit-machine", b.Bytes())
}

// memFile returns a file in memory (memfd) named name that holds data.
func memFile(name string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// nodeCPUs begins the files that list the first NUMA node's CPUs
// (cpulist, cpumap: lscpu shows them).
const nodeCPUs = "/sys/devices/system/node/node0/cpu"

// cpuMap is the kernel's bitmap of CPUs 0 to ncpu-1 (cpumap files): hex
// digits for ncpu bits, in groups of 8 separated by commas.
func cpuMap(ncpu int) string {
	digits := make([]byte, (ncpu+3)/4)
	for i := range digits {
		bits := min(ncpu-4*(len(digits)-1-i), 4)
		digits[i] = "0137f"[bits]
	}
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%8 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(d)
	}
	return b.String()
}

var (
	cpuinfoNumbered = regexp.MustCompile(`(?m)^(processor|core id|apicid|initial apicid)(\s*): \d+$`)
	cpuinfoFixed    = map[string]string{"cpu MHz": "3000.000", "bogomips": "6000.00", "cpu cores": "", "siblings": ""}
)

// cpuinfo builds /proc/cpuinfo for ncpu CPUs from the host's first CPU,
// without the rdrand and rdseed flags if hideRandom.
func cpuinfo(host string, ncpu int, hideRandom bool) string {
	first, _, _ := strings.Cut(host, "\n\n")
	var lines []string
	for _, l := range strings.Split(first, "\n") {
		k, _, _ := strings.Cut(l, ":")
		k = strings.TrimSpace(k)
		if v, ok := cpuinfoFixed[k]; ok {
			if v == "" {
				v = fmt.Sprint(ncpu)
			}
			l = fmt.Sprintf("%s\t: %s", k, v)
		}
		if k == "flags" && hideRandom {
			l = strings.ReplaceAll(strings.ReplaceAll(l+" ", " rdrand ", " "), " rdseed ", " ")
			l = strings.TrimSuffix(l, " ")
		}
		lines = append(lines, l)
	}
	block := strings.Join(lines, "\n")
	var b strings.Builder
	for i := 0; i < ncpu; i++ {
		b.WriteString(cpuinfoNumbered.ReplaceAllString(block, fmt.Sprintf("${1}${2}: %d", i)))
		b.WriteString("\n\n")
	}
	return b.String()
}

// hostsNames reports whether hosts file content maps name.
func hostsNames(content, name string) bool {
	for _, l := range strings.Split(content, "\n") {
		l, _, _ = strings.Cut(l, "#")
		f := strings.Fields(l)
		for i := 1; i < len(f); i++ {
			if f[i] == name {
				return true
			}
		}
	}
	return false
}

// hostsLine is the line that gives the guest's hostname an address, as
// Debian's installer gives the machine's own name: 127.0.1.1.
func hostsLine(content, name string) string {
	line := "127.0.1.1\t" + name + "\n"
	if content != "" && !strings.HasSuffix(content, "\n") {
		line = "\n" + line
	}
	return line
}
