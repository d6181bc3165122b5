package detcore

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// readlink and readlinkat of procfs's links to objects that have no path:
// /proc/PID/fd/N of a pipe or a socket reads "pipe:[N]" or "socket:[N]",
// and /proc/PID/ns/X reads "X:[N]", N the object's host inode, another on
// every run (a namespace is made afresh for every guest). fstat and stat
// tell the guest a virtual inode instead, and so does the link: the same
// number its fstat gives, handed out by the same table.
//
// The tracer cannot read such a link as the guest does (/proc/self and the
// pids are the guest's), so the call runs and its answer is rewritten at
// its exit. A path that cannot lead into procfs (absolute, and naming
// neither "proc" nor "fd") costs only the stop at its entry.
//
// The rewriting comes after the journal's part of the exit: a recording
// keeps the host's answer (recorder.Exit), and a replay runs such a call
// again and puts that answer in its buffer, which the engine then rewrites
// as it did in the recording: the table hands out the same numbers.

// PseudoDevTracer is a Tracer that can tell the devices of the kernel's
// internal filesystems.
type PseudoDevTracer interface {
	// PseudoDev returns the device (major<<32 | minor) of the kernel's
	// internal filesystem whose objects procfs's links name
	// "kind:[inode]": pipe, socket, and each kind of namespace.
	PseudoDev(kind string) (uint64, bool)
}

func init() {
	policy[abi.SYS_READLINK] = sysReadlink
	policy[abi.SYS_READLINKAT] = sysReadlink
}

// noTurn are the policy's calls that are no scheduling point even when
// the engine stops at their exit, as the journal's own calls are not:
// calls a run did not stop at before the engine looked at them (readlink
// here, System V IPC's STAT commands), which keep the schedule they had.
var noTurn = map[int]bool{abi.SYS_READLINK: true, abi.SYS_READLINKAT: true}

// pseudoLink matches a link's target that names an object by its inode.
var pseudoLink = lazyRegexp(`^([a-z_]+):\[(\d+)\]$`)

// sysReadlink lets readlink(path, buf, size) or readlinkat(dirfd, path,
// buf, size) run, and has its answer rewritten at its exit when the path
// may be one of procfs's links.
func sysReadlink(e *Engine, t *thread) {
	t.policy = false
	r := &t.regs
	pathAddr, buf, size := r.Rdi, r.Rsi, r.Rdx
	if t.nr == abi.SYS_READLINKAT {
		pathAddr, buf, size = r.Rsi, r.Rdx, r.R10
	}
	if int32(size) <= 0 || pathAddr == 0 {
		return // EINVAL or EFAULT, the kernel's
	}
	path, en := e.readPath(t, pathAddr)
	if en != 0 || !mayLeadIntoProc(path) {
		return
	}
	t.act = actExitStop
	t.afterJournal = func(e *Engine, t *thread) { e.virtualLink(t, buf, uint64(uint32(size))) }
}

// mayLeadIntoProc says whether a readlink of path may read one of
// procfs's links: path is relative (to a directory that may be in
// procfs), or names procfs or a descriptor (/dev/fd/N leads to
// /proc/self/fd/N).
func mayLeadIntoProc(path string) bool {
	return !strings.HasPrefix(path, "/") || strings.Contains(path, "proc") || strings.Contains(path, "fd")
}

// virtualLink rewrites the answer of t's readlink, which wrote it to buf
// of size bytes, if it names an object by its inode.
func (e *Engine) virtualLink(t *thread, buf, size uint64) {
	n := int64(t.regs.Rax)
	if n <= 0 || n > 64 {
		return // failed, or longer than any such name
	}
	b := make([]byte, n)
	if e.t.ReadMem(t.tid, buf, b) != nil {
		return
	}
	out, ok := e.virtualLinkTarget(b)
	if !ok {
		return
	}
	out = out[:min(uint64(len(out)), size)]
	if e.t.WriteMem(t.tid, buf, out) != nil {
		return
	}
	t.regs.Rax = uint64(len(out))
	_ = e.t.SetRegs(t.tid, &t.regs)
}

// virtualLinkTarget returns target, a link's, with the host inode it names
// replaced by the virtual one, if it names one.
func (e *Engine) virtualLinkTarget(target []byte) ([]byte, bool) {
	m := pseudoLink().FindSubmatch(target)
	if m == nil {
		return nil, false
	}
	ino, err := strconv.ParseUint(string(m[2]), 10, 64)
	if err != nil {
		return nil, false
	}
	dev, ok := e.pseudoDev(string(m[1]))
	if !ok {
		return nil, false
	}
	v := e.files().vino(FileID{Dev: dev, Ino: ino})
	return fmt.Appendf(nil, "%s:[%d]", m[1], v), true
}

// pseudoDev returns the device of kind's filesystem (PseudoDevTracer),
// asking the tracer once for each kind.
func (e *Engine) pseudoDev(kind string) (uint64, bool) {
	fs := e.files()
	if dev, ok := fs.pseudoDevs[kind]; ok {
		return dev, dev != noPseudoDev
	}
	pt, ok := e.t.(PseudoDevTracer)
	if !ok {
		return 0, false
	}
	dev, ok := pt.PseudoDev(kind)
	if !ok {
		dev = noPseudoDev
	}
	if fs.pseudoDevs == nil {
		fs.pseudoDevs = map[string]uint64{}
	}
	fs.pseudoDevs[kind] = dev
	return dev, ok
}

// noPseudoDev marks a kind whose device the tracer cannot tell.
const noPseudoDev = ^uint64(0)

// NamesInode says whether target, a link's, names an object by its inode
// ("pipe:[N]"): what a recording's readlink answer that replay must run
// again looks like.
func NamesInode(target []byte) bool { return pseudoLink().Match(target) }
