package recorder

import (
	"fmt"
	"path"
	"strings"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/trace"
)

// Calls whose replay needs a decision by their arguments (clSpecial):
// mounts, capabilities and directory notifications. Each either replays
// identically, in one of these ways, or is refused:
//
//   - A mount of a filesystem without a device (tmpfs, proc, ...) and
//     changes of mount flags and propagation run for real in replay, on
//     the rebuilt root; their mount point is captured so that it exists.
//   - A mount of a device, of a network or FUSE filesystem, or a bind mount
//     of a host directory, is emulated in replay (its result is given, the
//     mount is not made): the files the guest used under it were captured
//     under the paths it used, so the rebuilt root shows them there. Its
//     unmount is emulated too. A bind mount of a directory the guest made
//     is made for real, and so is one of a host file, captured whole.
//   - The capability queries (PR_CAPBSET_READ, PR_CAP_AMBIENT_IS_SET,
//     PR_GET_SECUREBITS, capget) answer from the recording machine's
//     settings: replay gives their recorded answers. The changes
//     (PR_CAPBSET_DROP, the other PR_CAP_AMBIENT operations,
//     PR_SET_SECUREBITS, capset) run for real and get their recorded
//     results.
//   - The new mount API makes descriptors, which replay cannot stand in
//     for: fsopen of a filesystem with a device and open_tree copying a
//     host directory are refused (ResultRefused): the recording runs them
//     and warns, and replay stops there with the same message rather than
//     mount the host's device or directory for real.
//   - fcntl(F_NOTIFY) replays the signals of the guest's own changes (the
//     kernel sends them again), but a change from outside the guest sends
//     a signal the trace does not hold, as any signal from outside: the
//     recording warns of it once it sees the call. (The filter stops
//     fcntl only for the commands detcore.TracedWhen names, F_NOTIFY
//     among them.)

// Mount flags (<linux/mount.h>).
const (
	msRemount     = 0x20
	msBind        = 0x1000
	msMove        = 0x2000
	msPropagation = 1<<17 | 1<<18 | 1<<19 | 1<<20 // MS_UNBINDABLE, MS_PRIVATE, MS_SLAVE, MS_SHARED
)

// The new mount API (<linux/mount.h>).
const (
	openTreeClone         = 1
	moveMountFEmptyPath   = 4
	moveMountTEmptyPath   = 0x40
	atEmptyPath           = 0x1000
	maxFsName             = 256
	fNotify               = 1026 // F_NOTIFY (<linux/fcntl.h>)
	capDataSize           = 12   // struct __user_cap_data_struct
	linuxCapabilityV1     = 0x19980330
	linuxCapabilityHeader = 8
)

// prctl options (<linux/prctl.h>).
const (
	prCapbsetRead     = 23
	prCapbsetDrop     = 24
	prGetSecurebits   = 27
	prSetSecurebits   = 28
	prCapAmbient      = 47
	prCapAmbientIsSet = 1
)

// mremap flags (<linux/mman.h>).
const (
	mremapMaymove = 1
	mremapFixed   = 2
)

// deviceless are the filesystems without a device or host files behind
// them: a mount of one is made again in replay.
var deviceless = map[string]bool{
	"tmpfs": true, "ramfs": true, "proc": true, "sysfs": true, "devpts": true, "mqueue": true,
	"cgroup": true, "cgroup2": true, "hugetlbfs": true, "bpf": true, "tracefs": true, "debugfs": true,
	"securityfs": true, "configfs": true, "fusectl": true, "binfmt_misc": true, "pstore": true,
	"efivarfs": true, "devtmpfs": true, "autofs": true,
}

// special decides what to keep of a clSpecial call; it reports whether
// Exit must see it.
func (r *Recorder) special(c *detcore.Call, p *pend) bool {
	a := c.Args
	switch c.Nr {
	case abi.SYS_PRCTL:
		switch {
		case a[0] == prCapbsetRead || a[0] == prGetSecurebits || a[0] == prCapAmbient && a[1] == prCapAmbientIsSet:
			return true
		case a[0] == prCapbsetDrop || a[0] == prSetSecurebits || a[0] == prCapAmbient:
			p.force = true
			return true
		}
	case abi.SYS_CAPGET:
		return true
	case abi.SYS_CAPSET:
		p.force = true
		return true
	case abi.SYS_MOUNT:
		return r.mount(c, p)
	case abi.SYS_UMOUNT2:
		// The trace writer may still hold a file the guest read there.
		r.w.Settle()
		target, ok := r.absPath(c.Tid, -1, a[0])
		p.path, p.emulate = target, ok && r.emulated[target]
		return ok
	case abi.SYS_MOUNT_SETATTR:
		target, ok := r.pathAt(c.Tid, a[0], a[1], a[2]&atEmptyPath != 0)
		if ok && under(r.emulated, target) {
			p.emulate = true
			return true
		}
		r.captureMountPoint(c.Tid, target, ok)
	case abi.SYS_MOVE_MOUNT:
		from, fok := r.pathAt(c.Tid, a[0], a[1], a[4]&moveMountFEmptyPath != 0)
		to, tok := r.pathAt(c.Tid, a[2], a[3], a[4]&moveMountTEmptyPath != 0)
		if !tok {
			break
		}
		p.path, p.emulate = to, fok && r.emulated[from]
		if fok && a[4]&moveMountFEmptyPath == 0 {
			p.moved = from // a mount moved by its path, not a new one
		}
		if !p.emulate {
			r.captureMountPoint(c.Tid, to, tok)
		}
		return true
	case abi.SYS_FSOPEN:
		name, err := r.host.ReadString(c.Tid, a[0], maxFsName)
		if err == nil && !deviceless[name] {
			r.refuse(c, fmt.Sprintf("fsopen(%q)", name), "a mount of a device or of host files through the new mount API cannot be replayed")
		}
	case abi.SYS_OPEN_TREE:
		tree, ok := r.pathAt(c.Tid, a[0], a[1], a[2]&atEmptyPath != 0)
		if a[2]&openTreeClone != 0 && (!ok || !under(r.made, tree)) {
			r.refuse(c, fmt.Sprintf("open_tree(%q, OPEN_TREE_CLONE)", tree), "a copy of a host directory's mount cannot be replayed")
			break
		}
		r.captureMountPoint(c.Tid, tree, ok)
	case abi.SYS_FCNTL:
		if int32(a[1]) == fNotify && a[2] != 0 {
			dir, _ := r.host.FdPath(c.Tid, int(int32(a[0])))
			r.warn("fnotify", fmt.Sprintf("fcntl(F_NOTIFY) on %s: a change made to it by a program outside the guest sends a signal that the trace does not hold, and a replay diverges there", dir))
		}
	}
	return false
}

// specialExit completes ev, the result of a kept clSpecial call, and
// reports whether to log it.
func (r *Recorder) specialExit(c *detcore.Call, p *pend, ev *trace.Event) bool {
	if p.force {
		ev.Digest = ResultForce
		return true
	}
	reshape := c.Nr == abi.SYS_MOUNT && c.Args[3]&(msRemount|msPropagation) != 0
	if c.Result >= 0 && !reshape {
		switch c.Nr {
		case abi.SYS_MOUNT, abi.SYS_MOVE_MOUNT:
			if p.emulate {
				r.emulated[p.path] = true
			} else {
				r.made[p.path] = true
				r.mounted[p.path] = true
			}
			if p.moved != "" {
				delete(r.emulated, p.moved)
				delete(r.mounted, p.moved)
				r.forget(p.moved)
			}
			r.forget(p.path)
		case abi.SYS_UMOUNT2:
			delete(r.emulated, p.path)
			delete(r.mounted, p.path)
			r.forget(p.path)
		}
	}
	// Calls made again in replay need no result.
	return p.emulate || c.Nr != abi.SYS_MOUNT && c.Nr != abi.SYS_MOVE_MOUNT && c.Nr != abi.SYS_UMOUNT2
}

// guestMounted reports whether abs lies in a filesystem the guest mounted
// that replay mounts again, whose files are the guest's own: they are not
// captured (a file captured there would show in replay's root once the
// filesystem is unmounted).
func (r *Recorder) guestMounted(abs string) bool {
	return under(r.mounted, abs) && !under(r.emulated, abs)
}

// mount decides about mount(source, target, fstype, flags, data).
func (r *Recorder) mount(c *detcore.Call, p *pend) bool {
	a := c.Args
	target, ok := r.absPath(c.Tid, -1, a[1])
	if !ok {
		return false
	}
	p.path = target
	flags := a[3]
	switch {
	case flags&(msRemount|msPropagation) != 0:
		// Flags of an existing mount.
		p.emulate = under(r.emulated, target)
	case flags&(msBind|msMove) != 0:
		src, ok := r.absPath(c.Tid, -1, a[0])
		switch {
		case ok && under(r.emulated, src):
			p.emulate = true
		case flags&msMove != 0:
		case ok && r.hostFile(c.Tid, src):
			// A host file, not a directory: captured whole, it is in
			// the rebuilt root under its path, and the bind mount is
			// made again from there (a program that binds itself
			// somewhere and runs the copy).
			r.capture(c.Tid, src, 0)
		default:
			p.emulate = !ok || !under(r.made, src)
		}
		if flags&msMove != 0 && ok {
			p.moved = src
		}
	default:
		fs, err := r.host.ReadString(c.Tid, a[2], maxFsName)
		p.emulate = err != nil || !deviceless[fs]
	}
	if !p.emulate {
		r.captureMountPoint(c.Tid, target, true)
	}
	return true
}

// hostFile reports whether abs, as thread tid sees it, is a regular file
// outside the guest's own mounts.
func (r *Recorder) hostFile(tid int, abs string) bool {
	if under(r.made, abs) {
		return false
	}
	f, err := r.host.OpenGuestPath(tid, abs)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular()
}

// captureMountPoint captures a path where a mount is made for real in
// replay, which must exist in the rebuilt root.
func (r *Recorder) captureMountPoint(tid int, abs string, ok bool) {
	if ok && path.IsAbs(abs) {
		r.capture(tid, abs, 0)
	}
}

// pathAt makes the path argument of a *at call absolute; with emptyPath
// (AT_EMPTY_PATH and the like) an empty path means dirfd itself.
func (r *Recorder) pathAt(tid int, dirfd, addr uint64, emptyPath bool) (string, bool) {
	if emptyPath {
		if s, err := r.host.ReadString(tid, addr, abi.MaxPath); err == nil && s == "" {
			p, err := r.host.FdPath(tid, int(int32(dirfd)))
			return p, err == nil && path.IsAbs(p)
		}
	}
	return r.absPath(tid, 0, addr, dirfd)
}

// forget makes the recorder look again at the paths below dir, where a
// mount has just come or gone: an open there that fails is then recorded
// (replay's root may have a file the mount showed), and a file not yet
// captured is. (One captured both with and without an emulated mount
// keeps its first content.)
func (r *Recorder) forget(dir string) {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	for p := range r.seen {
		if strings.HasPrefix(p, prefix) {
			delete(r.seen, p)
		}
	}
}

// under reports whether p or one of its parent directories is in set.
func under(set map[string]bool, p string) bool {
	if len(set) == 0 {
		return false
	}
	for {
		if set[p] {
			return true
		}
		if p == "/" || p == "." || p == "" {
			return false
		}
		p = path.Dir(p)
	}
}

// refuse logs that replay must stop at call c, named call, for reason,
// and warns the user once per call.
func (r *Recorder) refuse(c *detcore.Call, call, reason string) {
	msg := call + ": " + reason
	r.warn("refuse:"+abi.SyscallName(c.Nr), msg+"; a replay of this trace stops there")
	r.append(&trace.Event{Kind: trace.KindSyscall, External: true, Tid: int32(c.Vtid), Sysno: int32(c.Nr),
		Digest: ResultRefused, Mem: []trace.MemWrite{{Data: []byte(msg)}}})
}

// capget keeps what capget wrote: the header's version (which it
// sets when it refuses the one asked) and, on success, the capability
// sets.
func (o *outs) capget(hdr, data uint64, res int64) {
	o.add(hdr, linuxCapabilityHeader)
	if res < 0 || data == 0 {
		return
	}
	var h [4]byte
	if o.read(hdr, h[:]) != nil {
		return
	}
	n := int64(2)
	if uint32(h[0])|uint32(h[1])<<8|uint32(h[2])<<16|uint32(h[3])<<24 == linuxCapabilityV1 {
		n = 1
	}
	o.add(data, n*capDataSize)
}
