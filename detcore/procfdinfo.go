package detcore

import (
	"bytes"
	"strconv"
)

// /proc/PID/fdinfo/N tells a descriptor's host inode ("ino:") and the
// host-wide id of its mount ("mnt_id:", which a mount of hermit's, the
// private /tmp, makes another on every run). The inode reads as the
// virtual one fstat gives; the mount id as 0 (mountinfo's are renumbered,
// but from the mounts a read of it lists, which this file does not have).
var procFdinfoPath = lazyRegexp(`^/proc/(\d+|self|thread-self)(/task/\d+)?/fdinfo/(\d+)$`)

// normalizeFdinfo rewrites b, fdinfo of descriptor fd of the process pid
// names (as t's path named it).
func (e *Engine) normalizeFdinfo(t *thread, pid string, fd int, b []byte) []byte {
	ino := []byte(nil)
	if owner := e.procOwner(t, pid); owner != nil {
		if ft, ok := fileTracer(e); ok {
			if st, _, err := ft.Statx(owner.tid, StatReq{Dirfd: fd, Flags: atEmptyPath, Mask: statxType | statxIno}); err == nil {
				ino = strconv.AppendUint(nil, e.files().vino(st.id(true)), 10)
			}
		}
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i, l := range lines {
		key, _, ok := bytes.Cut(l, []byte(":\t"))
		if !ok {
			continue
		}
		switch string(key) {
		case "ino":
			if ino == nil {
				ino = []byte("0")
			}
			lines[i] = append(append([]byte("ino:\t"), ino...), '\n')
		case "mnt_id":
			lines[i] = []byte("mnt_id:\t0\n")
		}
	}
	return bytes.Join(lines, nil)
}

// procOwner returns a thread of the process pid names (self, or a
// guest pid), or nil.
func (e *Engine) procOwner(t *thread, pid string) *thread {
	if isSelf(pid, t) {
		return t
	}
	v, err := strconv.Atoi(pid)
	if err != nil {
		return nil
	}
	for _, p := range e.procsWhere(func(p *process) bool { return p.vpid == v }) {
		if len(p.threads) > 0 {
			return p.threads[0]
		}
	}
	return nil
}
