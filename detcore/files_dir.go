package detcore

import (
	"errors"
	"sort"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Directory reads. At a getdents call on a descriptor whose offset is 0
// the engine lists the whole directory through the tracer (which moves the
// shared offset), sorts it by name with "." and ".." first, and serves
// the listing from then on. Entry i's d_off is i+1, and after every call
// the descriptor's real offset is set to the index of the next entry, so
// that lseek(fd, 0, SEEK_CUR) and telldir agree with d_off, seekdir(d_off)
// lands where the guest expects, and a process sharing the open file
// description (after fork) continues where the other left off.
// rewinddir (offset 0) lists the directory again.

// dirKey names a guest directory descriptor.
type dirKey struct {
	p  *process
	fd int
}

// dirStream is the engine's side of a directory descriptor being read.
type dirStream struct {
	dir FileID
	// ents is the sorted listing; nil once it has been served to the end.
	ents []dirent
	n    int
	// idx is the next entry to serve; off is the real offset the
	// descriptor had after the last call.
	idx int
	off int64
}

// dirent is one served entry.
type dirent struct {
	name string
	typ  uint8
	ino  uint64
}

// sysGetdents handles getdents and getdents64.
func sysGetdents(e *Engine, t *thread) {
	ft, ok := fileTracer(e)
	if !ok {
		return
	}
	r := &t.regs
	fd, addr, count := int(int32(r.Rdi)), r.Rsi, uint32(r.Rdx)
	if fd < 0 {
		t.emulate(-abi.EBADF)
		return
	}
	d, err := ft.OpenDir(t.tid, fd)
	var en Errno
	if errors.As(err, &en) {
		t.emulate(-int64(en))
		return
	}
	if err != nil {
		return
	}
	defer d.Close()
	fs := e.files()
	ds, err := fs.stream(e, dirKey{t.proc, fd}, d)
	if errors.As(err, &en) {
		t.emulate(-int64(en))
		return
	}
	if err != nil {
		return
	}
	var b []byte
	next, ret := ds.idx, int64(0)
	if ds.idx < ds.n {
		b, next = encodeDirents(ds.ents, ds.idx, int(count), t.nr == abi.SYS_GETDENTS64)
		switch {
		case next == ds.idx:
			ret = -abi.EINVAL // the next entry does not fit
		case e.t.WriteMem(t.tid, addr, b) != nil:
			next, ret = ds.idx, -abi.EFAULT
		default:
			ret = int64(len(b))
		}
	}
	// Leave the descriptor's offset at the next entry, whatever listing
	// the directory moved it to.
	ds.idx, ds.off = next, int64(next)
	if d.SetOffset(ds.off) != nil {
		if off, err := d.Offset(); err == nil {
			ds.off = off
		}
	}
	if next >= ds.n {
		ds.ents = nil
	}
	t.emulate(ret)
}

// stream returns the listing and position for directory descriptor k,
// listing the directory when the guest starts (or rewinds) it.
func (fs *fileState) stream(e *Engine, k dirKey, d DirHandle) (*dirStream, error) {
	cur, err := d.Offset()
	if err != nil {
		return nil, err
	}
	ds := fs.dirs[k]
	if ds != nil && ds.dir != d.ID() {
		ds = nil // the descriptor was closed and reused
	}
	if ds != nil && cur == ds.off {
		return ds, nil
	}
	if ds == nil || ds.ents == nil || cur == 0 {
		// Starting, rewound, or seeked within a listing we no longer
		// hold (or that another process holds): list it now.
		if ds, err = fs.list(e, k, d); err != nil {
			return nil, err
		}
	}
	// The guest seeked (seekdir) to one of our d_off values.
	ds.idx = int(min(max(cur, 0), int64(ds.n)))
	return ds, nil
}

// list reads directory d for k and sorts it.
func (fs *fileState) list(e *Engine, k dirKey, d DirHandle) (*dirStream, error) {
	raw, err := d.ReadAll()
	if err != nil {
		return nil, err
	}
	sortEntries(raw)
	ents := make([]dirent, len(raw))
	for i, de := range raw {
		ents[i] = dirent{name: de.Name, typ: de.Type, ino: fs.vino(de.ID)}
	}
	ds := &dirStream{dir: d.ID(), ents: ents, n: len(ents)}
	if len(fs.dirs) >= fs.dirLimit {
		for k := range fs.dirs {
			if e.procs[k.p.pid] != k.p {
				delete(fs.dirs, k)
			}
		}
		fs.dirLimit = max(64, 2*len(fs.dirs))
	}
	fs.dirs[k] = ds
	return ds, nil
}

// sortEntries orders a listing: ".", "..", then by name, bytewise.
func sortEntries(ents []DirEntry) {
	rank := func(name string) int {
		switch name {
		case ".":
			return 0
		case "..":
			return 1
		}
		return 2
	}
	sort.Slice(ents, func(i, j int) bool {
		ri, rj := rank(ents[i].Name), rank(ents[j].Name)
		if ri != rj {
			return ri < rj
		}
		return ents[i].Name < ents[j].Name
	})
}

// encodeDirents encodes entries from first on as struct linux_dirent64
// (is64) or struct linux_dirent records, as many as fit in count bytes,
// and returns them with the index of the next entry.
func encodeDirents(ents []dirent, first, count int, is64 bool) ([]byte, int) {
	var b []byte
	i := first
	for ; i < len(ents); i++ {
		de := ents[i]
		// linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name.
		// linux_dirent: ulong ino, ulong off, u16 reclen, name, NUL, ...,
		// type in the last byte.
		nameAt := 19
		if !is64 {
			nameAt = 18
		}
		reclen := (nameAt + len(de.name) + 2 + 7) &^ 7
		if is64 {
			reclen = (nameAt + len(de.name) + 1 + 7) &^ 7
		}
		if len(b)+reclen > count {
			break
		}
		rec := make([]byte, reclen)
		putLE64(rec[0:], de.ino)
		putLE64(rec[8:], uint64(i+1))
		rec[16], rec[17] = byte(reclen), byte(reclen>>8)
		copy(rec[nameAt:], de.name)
		if is64 {
			rec[18] = de.typ
		} else {
			rec[reclen-1] = de.typ
		}
		b = append(b, rec...)
	}
	return b, i
}
