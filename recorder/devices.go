package recorder

import (
	"encoding/binary"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/trace"
)

// Descriptors of the outside world that the guest opens by name, and
// /proc/PID/mem, which only looks like one.
//
// A terminal the guest opens (/dev/tty, a pty from /dev/ptmx and its
// /dev/pts/N, /proc/self/fd/0 when that is a terminal) is external: its
// reads, writes and ioctls are recorded. Replay must not open it again: it
// may have no controlling terminal, or the pty may be another user's. The
// trace keeps the descriptor (ResultStandIn) and replay opens a pty of its
// own (a master, not its controlling terminal) in its place, at the same
// number and with the same access mode, so that fcntl's F_GETFL and poll
// there behave as a terminal's; a socket where it has no /dev/ptmx, and
// for the namespace SIOCGSKNS returns.
//
// /proc/PID/mem of a guest process is in a proc filesystem, so it would
// count as external, but reading or writing it is the guest touching its
// own memory, which replay reproduces: those calls run for real there.

// standInPrefixes are the paths whose opens may give a terminal: the
// recorder looks at what such an open returned.
var standInPrefixes = []string{"/dev/", "/proc/"}

func mayOpenTerminal(abs string) bool {
	for _, p := range standInPrefixes {
		if strings.HasPrefix(abs, p) {
			return true
		}
	}
	return false
}

// Terminal majors (<linux/major.h>): TTY_MAJOR, TTYAUX_MAJOR (tty,
// console, ptmx), UNIX98_PTY_MASTER_MAJOR and the slaves.
func isTerminalDev(rdev uint64) bool {
	m := (rdev >> 8) & 0xfff
	return m == 4 || m == 5 || (m >= 128 && m <= 143)
}

// terminal reports whether descriptor fd of tid is a terminal.
func (r *Recorder) terminal(tid, fd int) bool {
	f, err := r.host.FdFile(tid, fd)
	if err != nil {
		return false
	}
	defer f.Close()
	var st syscall.Stat_t
	return syscall.Fstat(int(f.Fd()), &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFCHR && isTerminalDev(st.Rdev)
}

// StandInTerminal, in a stand-in's flags, says it stands in for a
// terminal (a pty in replay).
const StandInTerminal = 1 << 40

// standIn logs the descriptor, a terminal or a namespace, that the guest
// opened as c's result, for replay to stand in for: Mem[0] holds the
// flags the stand-in takes (the open's access mode, O_NONBLOCK and
// O_CLOEXEC; O_NONBLOCK and O_CLOEXEC are also SOCK_NONBLOCK and
// SOCK_CLOEXEC), with StandInTerminal for a terminal.
func (r *Recorder) standIn(c *detcore.Call, flags uint64, terminal bool) {
	if r.host.FdClass(c.Tid, int(c.Result)) == ptrace.FdStdio {
		r.warn("reopen:"+abi.SyscallName(c.Nr), abi.SyscallName(c.Nr)+" opens hermit's own terminal by its name: a replay gives the program a stand-in for it, and writes to it will not reach the replay's output")
	}
	var b [8]byte
	flags &= abi.O_ACCMODE | abi.O_NONBLOCK | abi.O_CLOEXEC
	if terminal {
		flags |= StandInTerminal
	}
	binary.LittleEndian.PutUint64(b[:], flags)
	r.append(&trace.Event{Kind: trace.KindSyscall, External: true, Tid: int32(c.Vtid), Sysno: int32(c.Nr),
		Result: c.Result, Digest: ResultStandIn, Mem: []trace.MemWrite{{Data: b[:]}}})
}

// lazyRegexp compiles expr on first use, not at every start.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// procMemPath matches the memory file of a process or thread.
var procMemPath = lazyRegexp(`^/proc/(self|thread-self|[0-9]+)(/task/[0-9]+)?/mem$`)

// procStatePath matches the files of a process whose writes set its
// user namespace's mappings: the guest configuring a namespace of its
// own, which replay must do too (its later calls depend on it).
var procStatePath = lazyRegexp(`^/proc/(self|thread-self|[0-9]+)(/task/[0-9]+)?/(uid_map|gid_map|projid_map|setgroups)$`)

// procMem reports whether the external descriptor fd of tid is a
// /proc/PID/mem, whose reads and writes replay runs for real, or, for a
// write, one of the files procStatePath matches. All the processes they
// can name are the guest's (it has its own pid namespace).
func (r *Recorder) procMem(tid, fd int, write bool) bool {
	if k := r.known; k.valid && k.tid == tid && k.fd == fd && k.hasKind && k.kind != detcore.FdProc {
		return false
	}
	p, err := r.host.FdPath(tid, fd)
	return err == nil && (procMemPath().MatchString(p) || write && procStatePath().MatchString(p))
}

// termSignalsTag starts the output at address 0 of a kept write to a pty
// master whose INTR, QUIT or SUSP characters signalled the slave's
// foreground process group: the guest pid of the group's leader follows
// (4 bytes, little-endian), then the signals, a byte each. Replay skips
// the write, so it sends them itself.
const termSignalsTag = 0xfe

// TermSignals takes from mem, a kept call's outputs, the signals it sent
// through a terminal (termSignals); rest is the other outputs.
func TermSignals(mem []trace.MemWrite) (sigs []detcore.GroupSignal, rest []trace.MemWrite) {
	for _, m := range mem {
		if m.Addr != 0 || len(m.Data) < 6 || m.Data[0] != termSignalsTag {
			rest = append(rest, m)
			continue
		}
		group := int(binary.LittleEndian.Uint32(m.Data[1:]))
		for _, sig := range m.Data[5:] {
			sigs = append(sigs, detcore.GroupSignal{Group: group, Sig: int(sig)})
		}
	}
	return sigs, rest
}

// TerminalTracer is implemented by tracers that tell what a write to a
// pty master does to its slave (detcore/ptrace).
type TerminalTracer interface {
	TerminalInput(tid, fd int) (ptrace.TermInput, bool)
}

// termSignals returns, as an output for the kept write c, the signals
// its bytes sent the foreground process group of the slave of the pty
// master it wrote, once they are pending there: the kernel sends them
// from a worker, after the write returned, and the engine looks at
// signals at its next stop.
func (r *Recorder) termSignals(c *detcore.Call) []trace.MemWrite {
	tt, ok := r.host.(TerminalTracer)
	if c.Nr != abi.SYS_WRITE || c.Result <= 0 || !ok {
		return nil
	}
	in, ok := tt.TerminalInput(c.Tid, int(int32(c.Args[0])))
	if !ok || !in.ISIG || in.Group <= 0 {
		return nil
	}
	data := make([]byte, c.Result)
	if r.host.ReadMem(c.Tid, c.Args[1], data) != nil {
		return nil
	}
	sigs := in.Signals(data)
	if len(sigs) == 0 {
		return nil
	}
	var want uint64
	for _, sig := range sigs {
		want |= 1 << (sig - 1)
	}
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		own, shared, _, err := r.host.Signals(in.HostGroup)
		if err != nil || (own|shared)&want == want {
			break
		}
	}
	return []trace.MemWrite{EncodeTermSignals(in.Group, sigs)}
}

// EncodeTermSignals encodes signals sigs, sent to the process group whose
// leader has guest pid group, as TermSignals decodes them.
func EncodeTermSignals(group int, sigs []int) trace.MemWrite {
	out := binary.LittleEndian.AppendUint32([]byte{termSignalsTag}, uint32(group))
	for _, sig := range sigs {
		out = append(out, byte(sig))
	}
	return trace.MemWrite{Data: out}
}
