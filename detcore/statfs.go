package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// statfs and fstatfs: the f_fsid the kernel reports comes from a
// filesystem's device number for tmpfs, overlayfs and the like (a fresh
// one for every mount: hermit's private /tmp, the replay root) and from
// its UUID for disk filesystems (another on every machine). The guest sees
// virtual ids instead, handed out in the order it first asks about each
// filesystem: the same real id gives the same virtual one, so two paths
// on one filesystem still compare equal. An id of zero (the filesystem has
// none) stays zero. The free block and inode counts, which move with
// whatever else the host writes, read as half of the totals. The call
// runs natively and its result is rewritten at its exit: two stops.
//
// Recording keeps the rewritten struct (the journal reads it after the
// rewriting), and replay emulates the call from it: the table is used only
// where the calls really run.

// Offsets in x86-64's struct statfs (<asm-generic/statfs.h>).
const (
	statfsBlocks = 16 // f_blocks, then f_bfree, f_bavail, f_files, f_ffree
	statfsFsid   = 56 // __kernel_fsid_t f_fsid: int val[2]
)

// virtualFsidBase is val[0] of the first virtual f_fsid (val[1] is 0),
// after the numbering of virtual anonymous devices (virtualDevBase).
const virtualFsidBase = 0x8000

func init() {
	policy[abi.SYS_STATFS] = sysStatfs
	policy[abi.SYS_FSTATFS] = sysStatfs
}

// fsidTable maps real filesystem ids to virtual ones.
type fsidTable struct {
	ids map[uint64]uint64
}

func newFsidTable() *fsidTable { return &fsidTable{ids: map[uint64]uint64{}} }

// virtual returns the virtual id of real filesystem id real (val[0] in the
// low half, as the struct holds it).
func (ft *fsidTable) virtual(real uint64) uint64 {
	if real == 0 {
		return 0
	}
	v, ok := ft.ids[real]
	if !ok {
		v = uint64(virtualFsidBase + len(ft.ids))
		ft.ids[real] = v
	}
	return v
}

var fsidTables sideTable[fsidTable]

func (e *Engine) fsids() *fsidTable { return fsidTables.get(e, newFsidTable) }

// sysStatfs lets statfs(path, buf) or fstatfs(fd, buf) run and rewrites
// buf's f_fsid at its exit.
func sysStatfs(e *Engine, t *thread) {
	buf := t.regs.Rsi
	if buf == 0 {
		return
	}
	t.atExit(func(e *Engine, t *thread) {
		if t.regs.Rax != 0 {
			return
		}
		var b [statfsFsid + 8 - statfsBlocks]byte
		if e.t.ReadMem(t.tid, buf+statfsBlocks, b[:]) != nil {
			return
		}
		blocks, files := le64(b[0:]), le64(b[24:])
		putLE64(b[8:], blocks/2)  // f_bfree
		putLE64(b[16:], blocks/2) // f_bavail
		putLE64(b[32:], files/2)  // f_ffree
		putLE64(b[40:], e.fsids().virtual(le64(b[40:])))
		_ = e.t.WriteMem(t.tid, buf+statfsBlocks, b[:])
	})
}
