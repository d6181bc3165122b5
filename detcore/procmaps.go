package detcore

import (
	"bytes"
	"fmt"
	"strconv"
)

// /proc/PID/maps and the map lines of /proc/PID/smaps name each mapped
// file by device and inode: the host's inode numbers, and minors of
// filesystems without a device (tmpfs, overlay: the private /tmp) that the
// kernel hands out machine-wide. They are shown as stat shows them (the
// virtual numbers of files.go), so a program that matches its mappings
// against stat, or checksums what it reads there, sees the same thing on
// every run. smaps' and smaps_rollup's counters of resident pages (Rss,
// Pss, Shared_Clean, ...) depend on the page cache, fault-around and the
// host's other processes that share the pages: each is shown as 0 kB,
// smaps_rollup's Rss, Pss and Anonymous as /proc/PID/status shows VmRSS
// and RssAnon (statusFixed). statm's resident and shared pages are
// status's too.
var procMapsPath = lazyRegexp(`^/proc/(\d+|self|thread-self)(/task/\d+)?/(maps|smaps|smaps_rollup)$`)

var procStatmPath = lazyRegexp(`^/proc/(\d+|self|thread-self)(/task/\d+)?/statm$`)

// smapsKept are the counters of smaps that tell the mapping, not which
// of its pages are resident.
var smapsKept = map[string]bool{"Size": true, "KernelPageSize": true, "MMUPageSize": true}

// rollupFixed gives smaps_rollup's counters that are not 0 kB.
var rollupFixed = map[string]string{"Rss": statusFixed["VmRSS"], "Pss": statusFixed["VmRSS"], "Pss_Anon": statusFixed["RssAnon"],
	"Pss_File": statusFixed["RssFile"], "Anonymous": statusFixed["RssAnon"], "Referenced": statusFixed["VmRSS"]}

// smapsCounter rewrites a counter line of smaps ("Rss:  12 kB"), or of
// smaps_rollup with rollup set.
func smapsCounter(l []byte, rollup bool) []byte {
	k, v, ok := bytes.Cut(l, []byte(":"))
	if !ok || smapsKept[string(k)] || !bytes.HasSuffix(bytes.TrimSpace(v), []byte(" kB")) {
		return l
	}
	val := "0 kB"
	if f, is := rollupFixed[string(k)]; is && rollup {
		val = f
	}
	return fmt.Appendf(nil, "%-16s%8s kB\n", string(k)+":", val[:len(val)-3])
}

// normalizeStatm gives statm's resident and shared pages (its second and
// third fields) as status's VmRSS and RssFile.
func normalizeStatm(b []byte) []byte {
	f := bytes.Fields(b)
	if len(f) < 3 {
		return b
	}
	f[1], f[2] = []byte(pagesOf(statusFixed["VmRSS"])), []byte(pagesOf(statusFixed["RssFile"]))
	return append(bytes.Join(f, []byte(" ")), '\n')
}

// pagesOf turns "1024 kB" into pages of 4 KiB.
func pagesOf(kb string) string {
	n, _ := strconv.Atoi(string(bytes.Fields([]byte(kb))[0]))
	return strconv.Itoa(n / 4)
}

// mapsPathColumn is where the kernel starts a mapping's path (the pad of
// show_map_vma on 64-bit).
const mapsPathColumn = 73

// normalizeMaps rewrites the device and inode of every map line of b,
// and the counters of resident pages (rollup: b is smaps_rollup).
func (fs *fileState) normalizeMaps(b []byte, rollup bool) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		m := fs.mapsLine(l)
		if len(m) == len(l) && bytes.Equal(m, l) {
			m = smapsCounter(l, rollup)
		}
		out = append(out, m...)
	}
	return out
}

// mapsLine rewrites one line of maps or smaps; lines that are not map
// lines (smaps' counters) are kept.
func (fs *fileState) mapsLine(l []byte) []byte {
	f := bytes.Fields(l)
	if len(f) < 5 || len(f[1]) != 4 || bytes.IndexByte(f[0], '-') < 0 {
		return l
	}
	majS, minS, ok := bytes.Cut(f[3], []byte(":"))
	maj, err1 := strconv.ParseUint(string(majS), 16, 32)
	minor, err2 := strconv.ParseUint(string(minS), 16, 32)
	ino, err3 := strconv.ParseUint(string(f[4]), 10, 64)
	if !ok || err1 != nil || err2 != nil || err3 != nil {
		return l
	}
	vmin, vino := uint32(minor), uint64(0)
	if ino != 0 {
		vino = fs.vino(FileID{Dev: maj<<32 | minor, Ino: ino})
	}
	if maj == 0 && (ino != 0 || minor != 0) {
		vmin = fs.vdevMinor(uint32(minor))
	}
	out := fmt.Appendf(nil, "%s %s %s %02x:%02x %d ", f[0], f[1], f[2], maj, vmin, vino)
	// The path is what follows the inode, spaces inside it kept.
	path := bytes.TrimRight(afterFields(l, 5), "\n")
	if len(path) > 0 {
		for len(out) < mapsPathColumn {
			out = append(out, ' ')
		}
		out = append(out, path...)
	}
	if bytes.HasSuffix(l, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// afterFields returns what follows the first n space-separated fields of
// l, the spaces after them skipped.
func afterFields(l []byte, n int) []byte {
	for ; n > 0; n-- {
		l = bytes.TrimLeft(l, " ")
		if i := bytes.IndexByte(l, ' '); i >= 0 {
			l = l[i:]
		} else {
			l = l[len(l):]
		}
	}
	return bytes.TrimLeft(l, " ")
}
