package detcore

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
)

// /proc/PID/maps and the map lines of /proc/PID/smaps name each mapped
// file by device and inode: the host's inode numbers, and minors of
// filesystems without a device (tmpfs, overlay: the private /tmp) that the
// kernel hands out machine-wide. They are shown as stat shows them (the
// virtual numbers of files.go), so a program that matches its mappings
// against stat, or checksums what it reads there, sees the same thing on
// every run.
var procMapsPath = regexp.MustCompile(`^/proc/(\d+|self|thread-self)(/task/\d+)?/(maps|smaps)$`)

// mapsPathColumn is where the kernel starts a mapping's path (the pad of
// show_map_vma on 64-bit).
const mapsPathColumn = 73

// normalizeMaps rewrites the device and inode of every map line of b.
func (fs *fileState) normalizeMaps(b []byte) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		out = append(out, fs.mapsLine(l)...)
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
