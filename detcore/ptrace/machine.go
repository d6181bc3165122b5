package ptrace

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// fixedLengthTempDir makes a new directory in the temporary directory
// whose name is prefix and 16 random hex digits: always as long, since the
// guest reads it, X'd out, in /proc/1/environ, and a name one digit longer
// (os.MkdirTemp's decimal ones) moved the launcher's stack.
func fixedLengthTempDir(prefix string) (string, error) {
	for {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("%s%016x", prefix, rand.Uint64()))
		err := os.Mkdir(dir, 0o700)
		if !os.IsExist(err) {
			return dir, err
		}
	}
}

// machineFiles writes, into a new directory, the files the launcher mounts
// over the host's so that the guest sees a machine of ncpu CPUs whatever
// the host has: /proc/cpuinfo (the host's first CPU, repeated, with fixed
// speeds; without RDRAND and RDSEED in its flags when hideRandom, as
// --virtualize-cpuid hides them from cpuid) and the CPU lists in
// /sys/devices/system/cpu and of the first NUMA node. The caller removes
// the directory once the launcher has mounted them.
func machineFiles(ncpu int, hosts string, hideRandom bool) (string, error) {
	removeAbandoned(os.TempDir(), time.Now().Add(-abandonedAfter))
	dir, err := fixedLengthTempDir(machinePrefix)
	if err != nil {
		return "", err
	}
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
	for path, content := range files {
		name := filepath.Join(dir, strings.ReplaceAll(path, "/", "%"))
		if err := os.WriteFile(name, []byte(content), 0o444); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
		// The host file's times, not the moment hermit started: stat of
		// /etc/hosts (whose times pass through, --real-mtimes) is the
		// same in every run.
		if fi, err := os.Stat(path); err == nil {
			_ = os.Chtimes(name, fi.ModTime(), fi.ModTime())
		}
	}
	return dir, nil
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

// machinePrefix begins the name of each machine-file directory.
const machinePrefix = "hermit-machine-"

// abandonedAfter is the age past which a machine-file directory is
// abandoned: the launcher removes its own within milliseconds of the
// start, but a hermit killed in between (SIGKILL from a test's or CI's
// timeout, as it started a run) leaves it behind.
const abandonedAfter = 10 * time.Minute

// removeAbandoned removes the machine-file directories in tmp that were
// last changed before cutoff.
func removeAbandoned(tmp string, cutoff time.Time) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, machinePrefix+"*"))
	for _, d := range dirs {
		if st, err := os.Lstat(d); err == nil && st.IsDir() && st.ModTime().Before(cutoff) {
			os.RemoveAll(d)
		}
	}
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
