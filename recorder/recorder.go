// Package recorder records a deterministic run: it logs what the outside
// world decided (the host's answers to the engine's questions, the results
// of calls on external descriptors, host-dependent file queries) and
// captures every file the guest uses, so that package replay can run the
// program again from the trace alone.
package recorder

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/repl/strace"
	"github.com/hermitdbg/hermit/trace"
)

// Host is what the recorder asks the kernel directly, outside the
// engine's view (detcore/ptrace.Tracer implements it).
type Host interface {
	FdClass(tid, fd int) ptrace.FdClass
	FdFile(tid, fd int) (*os.File, error)
	FdPath(tid, fd int) (string, error)
	Cwd(tid int) (string, error)
	OpenGuestPath(tid int, abs string) (*os.File, error)
	// GuestPathExists reports whether absolute path abs names a file, as
	// thread tid sees it (following symbolic links), without opening it.
	GuestPathExists(tid int, abs string) bool
	// GuestLink returns the target of the symbolic link at absolute path
	// abs, as thread tid sees it; an error if abs is no link.
	GuestLink(tid int, abs string) (string, error)
	ReadString(tid int, addr uint64, max int) (string, error)
	ReadMem(tid int, addr uint64, b []byte) error
	ExecPath(tid int) (string, error)
	// Argv returns the arguments of tid's process (at an exec stop, the
	// new program's).
	Argv(tid int) ([]string, error)
	// Signals is detcore.Tracer.Signals.
	Signals(tid int) (thread, shared, blocked uint64, err error)
	queryHost
}

// Recorder writes one recording. It is a detcore.Journal; its Tracer
// method wraps the engine's tracer.
type Recorder struct {
	w    *trace.Writer
	host Host

	mu  sync.Mutex
	err error // the first write error: it stops the run

	// lastArgs is the argument digest of each (thread, syscall)'s previous
	// call: arguments are stored only when they change.
	lastArgs map[[2]int32]uint64
	// seen holds the paths already captured (or known absent).
	seen map[string]bool
	// blobs caches the blob of each captured file's content.
	blobs map[fileKey]trace.BlobID
	// large holds the files too large to store (LargeFile).
	large map[devIno]bool
	// known is the class of the descriptor the engine last asked about,
	// valid until the next syscall enters.
	known knownClass
	// pending holds, per thread, what Native decided to keep at Exit.
	pending map[int]pend
	// Bytes counts the bytes of captured files, for progress.
	Bytes atomic.Int64
	files atomic.Int64
	// Cache, when set, spares storing files already stored for an
	// earlier recording.
	Cache *trace.BlobCache
	// rootVtid is the guest tid of the first program's exec (the root
	// process), 0 before it.
	rootVtid int
	// Warn receives the one-line warnings of calls a replay will not
	// reproduce (New prints them on stderr).
	Warn   func(msg string)
	warned map[string]bool
	// made holds the directories the guest made and the mount points of
	// the filesystems it mounted; mounted those of the mounts replay makes
	// again, emulated those it does not (special.go).
	made, mounted, emulated map[string]bool
	// mkdirs holds the directories the guest made with mkdir: nothing in
	// them was there before the run (underMade).
	mkdirs map[string]bool
}

type knownClass struct {
	tid, fd int
	class   ptrace.FdClass
	valid   bool
	// kind is the descriptor's FdKind, when hasKind.
	kind    detcore.FdKind
	hasKind bool
}

// classOf returns the class of descriptor fd of thread tid.
func (r *Recorder) classOf(tid, fd int) ptrace.FdClass {
	if k := r.known; k.valid && k.tid == tid && k.fd == fd {
		return k.class
	}
	return r.host.FdClass(tid, fd)
}

// stdioFile reports whether descriptor fd of thread tid is one of
// hermit's own stdin, stdout and stderr, of whatever type.
func (r *Recorder) stdioFile(tid, fd int) bool {
	sf, ok := r.host.(interface{ StdioFile(tid, fd int) bool })
	return ok && sf.StdioFile(tid, fd)
}

type pend struct {
	cl   class
	path string // clOpen: the absolute path opened; a mount call's mount point
	excl bool   // clOpen: the guest creates the file (O_CREAT|O_EXCL, or O_CREAT of a missing one)
	// flags are clOpen's open flags; captured says the path was not seen
	// before.
	flags    uint64
	captured bool
	// emulate: a mount call that replay does not make but gives the
	// result of; moved is the mount point an emulated MS_MOVE moves.
	emulate bool
	moved   string
	// force: replay runs the call and forces its recorded result.
	force bool
	// inExt, outExt: clSplice's input brings data from outside, its
	// output is external.
	inExt, outExt bool
	// stdio: clSend to hermit's stdout or stderr, a pipe, socket or
	// terminal, whose reader may be gone.
	stdio bool
}

type fileKey struct {
	dev, ino   uint64
	size, mtim int64
}

// New returns a recorder writing to w.
func New(w *trace.Writer, host Host) *Recorder {
	return &Recorder{
		w: w, host: host,
		lastArgs: map[[2]int32]uint64{},
		seen:     map[string]bool{},
		blobs:    map[fileKey]trace.BlobID{},
		large:    map[devIno]bool{},
		pending:  map[int]pend{},
		warned:   map[string]bool{},
		made:     map[string]bool{},
		mkdirs:   map[string]bool{},
		mounted:  map[string]bool{},
		emulated: map[string]bool{},
		Warn:     func(msg string) { fmt.Fprintf(os.Stderr, "hermit: warning: %s\n", msg) },
	}
}

// warn gives the user msg, once per key.
func (r *Recorder) warn(key, msg string) {
	if r.warned[key] || r.Warn == nil {
		return
	}
	r.warned[key] = true
	r.Warn(msg)
}

// CPUID wraps the engine's cpuid answers (Config.CPUID, with
// --virtualize-cpuid) so that they are recorded: a replay elsewhere gives
// the recorded machine's values.
func (r *Recorder) CPUID(host func(leaf, subleaf uint32) [4]uint32) func(leaf, subleaf uint32) [4]uint32 {
	return func(leaf, subleaf uint32) [4]uint32 {
		v := host(leaf, subleaf)
		r.append(&trace.Event{Kind: trace.KindSyscall, External: true, Sysno: -QueryCPUID, Digest: CPUIDKey(leaf, subleaf),
			Mem: []trace.MemWrite{{Data: EncodeCPUID(v)}}})
		return v
	}
}

// Tracer wraps the engine's tracer so that its answers are recorded.
func (r *Recorder) Tracer(t HostTracer) detcore.Tracer {
	return &tracer{HostTracer: t, Actions: detcore.Actions{Inner: t}, r: r}
}

// Files returns how many files have been captured.
func (r *Recorder) Files() int { return int(r.files.Load()) }

// Events returns how many events have been written.
func (r *Recorder) Events() uint64 { return r.w.Count() }

func (r *Recorder) append(ev *trace.Event) {
	if err := r.w.Append(ev); err != nil {
		r.fail(err)
	}
}

func (r *Recorder) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = fmt.Errorf("writing the trace: %w", err)
	}
	r.mu.Unlock()
}

func (r *Recorder) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// ArgDigest is the digest of the arguments of syscall nr that replay
// checks: those the call takes (abi.NumArgs), not the registers past
// them, which hold what the caller left there (a dynamic loader's rdtsc
// made every replay of an LD_PRELOAD program diverge at its access).
func ArgDigest(nr int, args [6]uint64) uint64 {
	h := uint64(0x6a09e667f3bcc908)
	for _, a := range args[:abi.NumArgs(nr)] {
		h = mix(h, a)
	}
	return h
}

// EncodeArgs encodes syscall arguments (stored when they change).
func EncodeArgs(args [6]uint64) []byte {
	b := make([]byte, 48)
	for i, a := range args {
		binary.LittleEndian.PutUint64(b[8*i:], a)
	}
	return b
}

// DecodeArgs decodes EncodeArgs's bytes.
func DecodeArgs(b []byte) ([6]uint64, bool) {
	var a [6]uint64
	if len(b) != 48 {
		return a, false
	}
	for i := range a {
		a[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return a, true
}

// Enter implements detcore.Journal: every intercepted call is logged with
// its argument digest, for divergence checks.
func (r *Recorder) Enter(c *detcore.Call) error {
	if err := r.failed(); err != nil {
		return err
	}
	r.known.valid = false
	d := ArgDigest(c.Nr, c.Args)
	ev := trace.Event{Kind: trace.KindSyscall, Tid: int32(c.Vtid), Sysno: int32(c.Nr), Digest: d}
	if c.HasWritten {
		// A call's entry has no result: it holds the digest of the
		// bytes it writes (journal version 16).
		ev.Result = int64(c.Written)
	}
	k := [2]int32{int32(c.Vtid), int32(c.Nr)}
	if last, ok := r.lastArgs[k]; !ok || last != d {
		r.lastArgs[k] = d
		ev.Mem = []trace.MemWrite{{Data: EncodeArgs(c.Args)}}
	}
	r.append(&ev)
	return nil
}

// Native implements detcore.Journal: it decides which calls' results the
// trace must keep.
func (r *Recorder) Native(c *detcore.Call) detcore.Outcome {
	cl := classes[c.Nr]
	keep := false
	p := pend{cl: cl}
	switch cl {
	case clRead, clIoctl:
		fd := int(int32(c.Args[0]))
		if cl == clIoctl && fdFlagIoctls[uint32(c.Args[1])] {
			break
		}
		fc := r.classOf(c.Tid, fd)
		keep = fc == ptrace.FdExternal && !r.procMem(c.Tid, fd, false) || fc == ptrace.FdStdio || cl == clRead && r.isLarge(c.Tid, fd)
		// An ioctl of hermit's stdin, stdout or stderr, a file or
		// /dev/null too: a replay's are its own, maybe a terminal where
		// the recording's were not (isatty said no there).
		keep = keep || cl == clIoctl && r.stdioFile(c.Tid, fd)
	case clSend:
		fd := int(int32(c.Args[0]))
		switch r.classOf(c.Tid, fd) {
		case ptrace.FdExternal:
			keep = !r.procMem(c.Tid, fd, true)
		case ptrace.FdStdio:
			// hermit's stdout or stderr: replay writes it again, but its
			// result is kept when it was not the whole (stdioExit).
			p.stdio = r.stdioMayFail(c.Tid, fd)
			keep = p.stdio
		}
	case clSocket, clAccept:
		keep = r.classOf(c.Tid, int(int32(c.Args[0]))) == ptrace.FdExternal
		// Whether a connection leads outside is known once it is made.
		keep = keep || c.Nr == abi.SYS_CONNECT
	case clQuery:
		if o, ok := r.answered(c); ok {
			return o
		}
		keep = true
	case clWait, clCopy, clGroup:
		keep = true
	case clChange:
		keep = true
		r.changeParents(c)
	case clMmap:
		keep = int32(c.Args[4]) != -1 && c.Args[3]&(abi.MAP_FIXED|abi.MAP_FIXED_NOREPLACE) == 0
	case clOpen:
		abs, flags, ok := r.openPath(c)
		if ok && (!r.seen[abs] || mayOpenTerminal(abs)) {
			p.path, p.excl = abs, flags&(abi.O_CREAT|abi.O_EXCL) == abi.O_CREAT|abi.O_EXCL
			if flags&abi.O_CREAT != 0 && !p.excl && !r.seen[abs] && !r.host.GuestPathExists(c.Tid, abs) {
				// The call creates it: replay creates it again, and
				// what that tells (a dnotify signal, say) happens again.
				p.excl = true
			}
			if p.excl {
				// Replay creates it where the recording did.
				r.captureParents(c.Tid, abs)
			}
			p.flags, p.captured = flags, !r.seen[abs]
			keep = true
		}
	case clRemap:
		keep = c.Args[3]&mremapMaymove != 0 && c.Args[3]&mremapFixed == 0
	case clSpecial:
		keep = r.special(c, &p)
	case clSplice:
		keep = r.spliceKeep(c, &p)
	case clChdir:
		if abs, ok := r.absPath(c.Tid, -1, c.Args[0]); ok {
			r.capture(c.Tid, abs, 0)
		}
	}
	if !keep {
		return detcore.Outcome{}
	}
	r.pending[c.Tid] = p
	return detcore.Outcome{Exit: true}
}

// Exit implements detcore.Journal: it logs the result of a kept call.
func (r *Recorder) Exit(c *detcore.Call) (bool, int64, error) {
	p, ok := r.pending[c.Tid]
	delete(r.pending, c.Tid)
	if !ok && !c.Preempted {
		return false, 0, nil
	}
	ev := trace.Event{Kind: trace.KindSyscall, External: true, Tid: int32(c.Vtid), Sysno: int32(c.Nr), Result: c.Result}
	if c.Preempted {
		// It did nothing, and is made again: replay has the watchdog
		// stop it there too. (A call not kept too: the engine tells of
		// one the stop interrupted.)
		ev.Digest = ResultPreempted
		if c.Spin {
			ev.Mem = []trace.MemWrite{{Data: []byte{1}}}
		}
		r.append(&ev)
		return false, 0, r.failed()
	}
	switch p.cl {
	case clOpen:
		r.seen[p.path] = true
		if c.Result >= 0 {
			switch {
			case mayOpenTerminal(p.path) && r.terminal(c.Tid, int(c.Result)):
				r.standIn(c, p.flags, true)
			case !p.excl && p.captured && !r.guestMounted(p.path) && !r.underMade(p.path):
				// (Made by the guest in a directory it made, a file is
				// made again by the replay: a copy would be in the
				// rebuilt root from the start.)
				r.captureFd(c.Tid, int(c.Result), p.path)
			}
			return false, 0, r.failed()
		}
		if !p.captured {
			return false, 0, r.failed() // seen: replay fails the same way
		}
	case clMmap:
		ev.Digest = ResultPlace
	case clRemap:
		if c.Result < 0 || uint64(c.Result) == c.Args[0] {
			// Failed, or grown or shrunk in place: the memory layout
			// decides, and replay's is the same.
			return false, 0, r.failed()
		}
		ev.Digest = ResultPlace
	case clSpecial:
		if !r.specialExit(c, &p, &ev) {
			return false, 0, r.failed()
		}
	case clCopy:
		ev.Digest = ResultForce
	case clChange:
		// A call that failed changed nothing: replay fails it so
		// without running it, which its root might let succeed (a
		// rename out of the private /tmp, refused with EXDEV here, is
		// one filesystem there; mv then copies, and the file was gone).
		ev.Digest = ResultEmulate
		if c.Result >= 0 {
			ev.Digest = ResultForce
			r.noteChange(c)
		}
	case clSocket:
		if c.Nr == abi.SYS_CONNECT && c.Result >= 0 && r.host.FdClass(c.Tid, int(int32(c.Args[0]))) != ptrace.FdExternal {
			// A connection between guest processes: replay makes it too.
			// (A failed one is replayed as failed: its path may be the
			// host's.)
			return false, 0, r.failed()
		}
	case clAccept:
		ev.Digest = ResultSocket
	case clSend:
		if p.stdio && !r.stdioExit(c, &ev) {
			return false, 0, r.failed()
		}
	case clSplice:
		if !r.spliceExit(c, &p, &ev) {
			return false, 0, r.failed()
		}
	case clIoctl:
		if c.Result >= 0 && fdIoctls[uint32(c.Args[1])] {
			r.standIn(c, c.Args[2], uint32(c.Args[1]) == tiocgptpeer)
			return false, 0, r.failed()
		}
	}
	if (c.Result >= 0 || c.Nr == abi.SYS_CAPGET) && (ev.Digest == ResultEmulate || ev.Digest == ResultSocket) {
		ev.Mem = outputs(c.Nr, c.Args, c.Result, func(addr uint64, b []byte) error { return r.host.ReadMem(c.Tid, addr, b) })
		if p.cl == clQuery && len(ev.Mem) == 1 && (c.Nr == abi.SYS_READLINK || c.Nr == abi.SYS_READLINKAT) && detcore.NamesInode(ev.Mem[0].Data) {
			// procfs's link to a pipe, socket or namespace, whose
			// virtual inode the engine hands out in the order it
			// sees them: replay reads the link again, its own
			// object's, and the guest gets this answer.
			ev.Digest = ResultForce
		}
	}
	if Restarted(c.Result) {
		ev.Mem = r.raised(c.Tid)
	}
	if p.cl == clSend {
		ev.Mem = append(ev.Mem, r.termSignals(c)...)
	}
	r.spill(ev.Mem)
	r.append(&ev)
	return false, 0, r.failed()
}

// spillSize is the size above which an output goes to a blob rather than
// the event stream (events are at most trace.MaxEventSize).
const spillSize = 256 << 10

// spill stores large outputs as blobs.
func (r *Recorder) spill(mem []trace.MemWrite) {
	for i := range mem {
		if len(mem[i].Data) <= spillSize {
			continue
		}
		id, err := r.w.PutBlob(bytes.NewReader(mem[i].Data))
		if err != nil {
			r.fail(err)
			return
		}
		mem[i].Data, mem[i].Blob = nil, id
	}
}

// changeParents captures the directories a clChange call works in, which
// replay's must be: the rebuilt root has no directory that the guest
// never opened otherwise.
func (r *Recorder) changeParents(c *detcore.Call) {
	dirfd, arg := pathArg(c.Nr)
	at := [][2]int{{dirfd, arg}}
	switch c.Nr {
	case abi.SYS_RENAME, abi.SYS_LINK:
		at = append(at, [2]int{-1, 1})
	case abi.SYS_RENAMEAT, abi.SYS_RENAMEAT2, abi.SYS_LINKAT:
		at = append(at, [2]int{2, 3})
	}
	for _, a := range at {
		var dirfds []uint64
		if a[0] >= 0 {
			dirfds = []uint64{c.Args[a[0]]}
		}
		if abs, ok := r.absPath(c.Tid, a[0], c.Args[a[1]], dirfds...); ok {
			r.captureParents(c.Tid, abs)
			if changesFile[c.Nr] {
				r.capture(c.Tid, abs, 0)
			}
		}
	}
}

// noteChange keeps the directories a successful mkdir leaves, so that the
// rebuilt root has them even if the guest never opens them; and what a
// successful rename moved: its new path holds what replay's rename moves
// there, never a copy of the host's (which, taken once the run had made
// it, put a directory the guest made in replay's root from the start:
// cargo's target/, made by a rename after an open in it had failed).
func (r *Recorder) noteChange(c *detcore.Call) {
	switch c.Nr {
	case abi.SYS_RENAME, abi.SYS_RENAMEAT, abi.SYS_RENAMEAT2:
		r.noteRename(c)
		return
	case abi.SYS_MKDIR, abi.SYS_MKDIRAT:
	default:
		return
	}
	dirfd, arg := pathArg(c.Nr)
	if abs, ok := r.absPath(c.Tid, dirfd, c.Args[arg], c.Args[0]); ok {
		r.seen[abs] = true
		r.made[abs] = true
		r.mkdirs[abs] = true
	}
}

// noteRename notes rename call c's new path as seen, and as made by the
// guest if its old one was.
func (r *Recorder) noteRename(c *detcore.Call) {
	from, to := [2]int{-1, 0}, [2]int{-1, 1}
	if c.Nr != abi.SYS_RENAME {
		from, to = [2]int{0, 1}, [2]int{2, 3}
	}
	abs := func(a [2]int) (string, bool) {
		if a[0] < 0 {
			return r.absPath(c.Tid, -1, c.Args[a[1]])
		}
		return r.absPath(c.Tid, a[0], c.Args[a[1]], c.Args[a[0]])
	}
	src, ok1 := abs(from)
	dst, ok2 := abs(to)
	if !ok1 || !ok2 {
		return
	}
	r.seen[dst] = true
	if r.made[src] || r.mkdirs[src] || r.underMade(src) {
		r.made[dst] = true
	}
	if r.mkdirs[src] || r.underMade(src) {
		r.mkdirs[dst] = true
	}
}

// Exec implements detcore.Journal: the exec is logged (processes.go), and
// the new program, its interpreter (or a script's) and their loader are
// captured.
func (r *Recorder) Exec(tid, vtid int) error {
	p, err := r.host.ExecPath(tid)
	r.logExec(tid, vtid, p)
	if err != nil {
		return nil // nothing to capture; replay will say what is missing
	}
	if !path.IsAbs(p) {
		cwd, err := r.host.Cwd(tid)
		if err != nil {
			return nil
		}
		p = path.Join(cwd, p)
	}
	r.captureProgram(tid, p, 0)
	return r.failed()
}

// Preempted implements detcore.PreemptJournal: the preemption is kept,
// with the CPU time after which replay makes it.
func (r *Recorder) Preempted(vtid int, ran time.Duration) (time.Duration, error) {
	r.append(&trace.Event{Kind: trace.KindPreempt, Tid: int32(vtid), Ran: int64(ran)})
	return ran, r.failed()
}

// OutsideSignal implements detcore.OutsideSignalRecorder: a signal from
// outside reached running thread vtid, which gets it at point at; a
// replay gives it again there (after a preemption: after as much CPU
// time, as it repeats the preemption, which warrants a warning).
func (r *Recorder) OutsideSignal(vtid, sig int, info []byte, at detcore.SignalPoint) error {
	if at == detcore.AtPreemption {
		r.warn("outside-signal", fmt.Sprintf("thread %d got %s from outside while it ran and made no syscall soon after: hermit gave it where it preempted the thread, and a replay gives it after as much CPU time, perhaps at another point, and may diverge there (a signal that ends a wait, or that comes before a syscall, replays exactly)", vtid, strace.Signal(sig)))
	}
	var code int32
	if len(info) >= 12 {
		code = int32(binary.LittleEndian.Uint32(info[8:]))
	}
	r.append(&trace.Event{Kind: trace.KindSignal, Tid: int32(vtid), Signo: int32(sig), Code: code, Siginfo: append([]byte(nil), info...), AtCall: at == detcore.AtCall})
	return r.failed()
}

// FastWrites implements detcore.FastWriteJournal.
func (r *Recorder) FastWrites(vtid int, digest uint64) error {
	r.append(&trace.Event{Kind: trace.KindSyscall, External: true, Sysno: -QueryFastWrites, Tid: int32(vtid), Result: int64(digest)})
	return r.failed()
}

// PreemptDue implements detcore.PreemptJournal: a recording's watchdog
// decides for itself.
func (r *Recorder) PreemptDue(int) (time.Duration, bool) { return 0, false }

// Close ends the trace, recording the root process's exit status.
// rootVtid 0 stands for the process of the first exec.
func (r *Recorder) Close(res detcore.Result, rootVtid int) error {
	if rootVtid == 0 {
		rootVtid = r.rootVtid
	}
	st := int32(res.ExitCode << 8)
	if res.Signal != 0 {
		st = int32(res.Signal)
	}
	r.append(&trace.Event{Kind: trace.KindExit, Tid: int32(rootVtid), Status: st, Group: true})
	err := r.failed()
	if cerr := r.w.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing the trace: %w", cerr)
	}
	return err
}
