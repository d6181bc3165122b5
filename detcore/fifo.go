package detcore

import (
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Opening a FIFO blocks in the kernel until the other end is opened: a
// reader waits for a writer, a writer for a reader. With one guest thread
// running at a time, the thread that would open the other end stays
// parked: a hang. The engine makes the wait one of its own: a reader that
// would wait leaves a stand-in reader of hermit's on the FIFO (so that
// the writer's open goes through at once, as it would natively) and waits
// in a retry wait until a writer has come; a writer that would wait
// waits until a reader is there. Then the call runs with O_NONBLOCK, which
// hermit takes off the new descriptor at its exit.
//
// hermit run does not stop at opens (they are frequent). A thread that
// has sat in open or openat for fifoGrace without the engine hearing of
// it is stopped, and its call made again with OpenMarker in its flags,
// which the seccomp filter sends to the tracer (the kernel ignores the
// bit). Whether an open waits depends only on what the guest did before
// it, so the schedule stays deterministic, and record (which stops at
// every open) makes the same decisions at the same points.

// OpenMarker is the open flag the filter traces MarkedSyscalls by; the
// kernel drops unknown open flags.
const OpenMarker = 1 << 30

// fifoGrace is how long a thread may sit in open before the engine looks.
const fifoGrace = 20 * time.Millisecond

// FifoTracer is implemented by tracers that can look at and open, from
// outside, a FIFO a guest thread is opening. Its methods are called from
// the Run goroutine. path is resolved relative to dirfd, as thread tid
// sees it.
type FifoTracer interface {
	// Fifo reports whether path names a FIFO, and which.
	Fifo(tid, dirfd int, path string, nofollow bool) (id FileID, ok bool)
	// FifoHasReader reports whether the FIFO has a reader.
	FifoHasReader(tid, dirfd int, path string, nofollow bool) bool
	// FifoReader opens the FIFO for reading without waiting: hermit's
	// stand-in while a guest reader waits.
	FifoReader(tid, dirfd int, path string, nofollow bool) (FifoReader, error)
	// ClearNonblock takes O_NONBLOCK off descriptor fd of tid's process.
	ClearNonblock(tid, fd int) error
}

// KernelWaitTracer is implemented by tracers that can tell the syscall
// a running thread sleeps in. InKernelWait is called from the watchdog's
// goroutine.
type KernelWaitTracer interface {
	InKernelWait(tid int) (nr int, ok bool)
}

// CPUTimeTracer is implemented by tracers that can tell how much CPU time
// a thread has used. The watchdog measures a running thread's budgets in
// it, not in wall time, so that a loaded machine, which runs the thread
// less of the time, does not examine or preempt it sooner. CPUTime is
// called from the watchdog's goroutine and from the engine's; pid is
// tid's process, whose CPU time may stand for tid's (only tid runs).
type CPUTimeTracer interface {
	CPUTime(pid, tid int) (time.Duration, bool)
}

// FifoReader is an open read end of a FIFO.
type FifoReader interface {
	// WriterCame reports whether a writer has the FIFO open, or opened
	// it since the reader was opened, or there is data in it.
	WriterCame() bool
	Close()
}

// ConditionalSyscalls are the syscalls the engine needs to see only under
// a condition on an argument, unless they are traced anyway (hermit
// record stops at all of them): an open whose flags carry OpenMarker, or
// that may truncate or create a file (openTimes), an mmap of shared
// memory (sharedmem.go), arch_prctl's CPUID faulting (prctl.go).
func ConditionalSyscalls() map[int]ArgCondition {
	conds := map[int]ArgCondition{
		abi.SYS_MMAP: {Arg: 3, Mask: mapShared},
		// The guest's own CPUID faulting (prctl.go), not ARCH_SET_FS.
		abi.SYS_ARCH_PRCTL: {Arg: 0, Values: []uint32{archGetCPUID, archSetCPUID}},
	}
	for nr := range markedOnly {
		conds[nr] = ArgCondition{Arg: MarkedArg(nr), Mask: OpenMarker | abi.O_TRUNC | abi.O_CREAT}
	}
	return conds
}

// MarkedArg returns the argument of syscall nr that carries OpenMarker.
func MarkedArg(nr int) int {
	if nr == abi.SYS_OPEN {
		return 1
	}
	return 2
}

func init() {
	for nr := range markedOnly {
		policy[nr] = sysOpen
	}
}

// markedOnly are the policy's syscalls that the filter traces only with
// OpenMarker, O_TRUNC or O_CREAT (openTimes).
var markedOnly = map[int]bool{abi.SYS_OPEN: true, abi.SYS_OPENAT: true}

// fifoKey identifies a FIFO.
type fifoKey struct{ dev, ino uint64 }

// sysOpen: open(path, flags, mode) and openat(dirfd, path, flags, mode).
// Only an open of a FIFO that would wait is a scheduling point; any other
// is the journal's alone (hermit record stops at every open).
func sysOpen(e *Engine, t *thread) {
	t.policy = false
	arg := MarkedArg(t.nr)
	flags := t.regs.Arg(arg)
	if flags&OpenMarker != 0 {
		flags &^= OpenMarker
		t.regs.SetArg(arg, flags)
		if e.t.SetRegs(t.tid, &t.regs) != nil {
			return
		}
		// If this open sleeps in the kernel after all (a slow device or
		// FUSE file, not a FIFO), it is not stopped again: that would
		// cut every try short.
		e.kwaitSkip.Store(int64(t.tid))
	}
	e.openTimes(t, flags)
	acc := flags & 3
	if flags&(abi.O_NONBLOCK|oPath) != 0 || (acc != 0 && acc != abi.O_WRONLY) {
		return
	}
	ft, ok := e.t.(FifoTracer)
	if !ok {
		return
	}
	dirfd, path, errno := e.openPath(t)
	if errno != 0 || path == "" {
		return
	}
	nofollow := flags&oNofollow != 0
	id, ok := ft.Fifo(t.tid, dirfd, path, nofollow)
	if !ok {
		return
	}
	key := fifoKey{id.Dev, id.Ino}
	f := fifoOpen{e: e, ft: ft, t: t, key: key, dirfd: dirfd, path: path, nofollow: nofollow, arg: arg, flags: flags}
	if acc == abi.O_WRONLY {
		f.openWriter()
	} else {
		f.openReader()
	}
}

// openPath reads the directory descriptor and path of t's open or openat.
func (e *Engine) openPath(t *thread) (dirfd int, path string, errno Errno) {
	dirfd, addr := abi.AT_FDCWD, t.regs.Rdi
	if t.nr == abi.SYS_OPENAT || t.nr == abi.SYS_OPENAT2 {
		dirfd, addr = int(int32(t.regs.Rdi)), t.regs.Rsi
	}
	path, errno = e.readPath(t, addr)
	return dirfd, path, errno
}

// Open flags of <fcntl.h> the engine looks at.
const (
	oPath     = 0o10000000
	oNofollow = 0o400000
)

// fifoOpen is a guest's blocking open of a FIFO.
type fifoOpen struct {
	e        *Engine
	ft       FifoTracer
	t        *thread
	key      fifoKey
	dirfd    int
	path     string
	nofollow bool
	arg      int
	flags    uint64
}

// hasReader: a guest reader waits (its stand-in is there) or the kernel
// says the FIFO has one.
func (f *fifoOpen) hasReader() bool {
	if f.e.fifoReaders[f.key] > 0 {
		return true
	}
	return f.ft.FifoHasReader(f.t.tid, f.dirfd, f.path, f.nofollow)
}

func (f *fifoOpen) openWriter() {
	if f.hasReader() {
		return
	}
	f.wait(f.hasReader, func() {})
}

func (f *fifoOpen) openReader() {
	r, err := f.ft.FifoReader(f.t.tid, f.dirfd, f.path, f.nofollow)
	if err != nil {
		return
	}
	if r.WriterCame() {
		r.Close()
		return
	}
	if f.e.fifoReaders == nil {
		f.e.fifoReaders = map[fifoKey]int{}
	}
	f.e.fifoReaders[f.key]++
	f.wait(r.WriterCame, func() {
		r.Close()
		if f.e.fifoReaders[f.key]--; f.e.fifoReaders[f.key] == 0 {
			delete(f.e.fifoReaders, f.key)
		}
	})
}

// wait parks the thread until ready says the other end is there, then
// runs the call without blocking; done is called when the wait ends.
func (f *fifoOpen) wait(ready func() bool, done func()) {
	e, t := f.e, f.t
	t.policy = true
	orig := t.regs
	b := &blocker{kind: bkRetry, epoch: uint64(e.result.Stats.Turns), deadline: -1}
	b.check = func(*Engine) bool { return ready() }
	b.onReady = func(e *Engine, t *thread) {
		try := orig
		try.SetArg(f.arg, f.flags|abi.O_NONBLOCK)
		if e.t.SetRegs(t.tid, &try) != nil {
			done()
			return
		}
		t.regs = try
		t.act = actExitStop
		t.onExit = func(e *Engine, t *thread) {
			done()
			if fd := int64(t.regs.Rax); fd >= 0 {
				_ = f.ft.ClearNonblock(t.tid, int(fd))
			}
			// The guest's registers as it made the call, with the result.
			back := orig
			back.Rax = t.regs.Rax
			if e.t.SetRegs(t.tid, &back) == nil {
				t.regs = back
			}
		}
	}
	// A signal lets the call run natively (the kernel interrupts it);
	// the stand-in goes.
	b.onSignal = func(*Engine, *thread) { done() }
	e.result.Stats.Retries++
	e.blockOn(t, b)
}

// watchKernelWait is called by the watchdog's goroutine when the running
// thread tid has gone quiet for fifoGrace: if it sleeps in open or
// openat, it is stopped (handleSignal then makes its call again, marked).
func (e *Engine) watchKernelWait(tid int) {
	kt, ok := e.t.(KernelWaitTracer)
	if !ok || e.cfg.Journal != nil {
		return
	}
	if e.kwaitSkip.Load() == int64(tid) {
		return
	}
	nr, ok := kt.InKernelWait(tid)
	if !ok || !markedOnly[nr] {
		return
	}
	if e.kwaitTid.CompareAndSwap(0, int64(tid)) && e.t.Preempt(tid) != nil {
		e.kwaitTid.Store(0)
	}
}

// kernelWaitStop handles the stop watchKernelWait caused: an open that
// the stop interrupted is made again with OpenMarker, so that the engine
// sees it; a thread that had left the call meanwhile goes on.
func (e *Engine) kernelWaitStop(t *thread) error {
	e.kwaitTid.Store(0)
	var r abi.Regs
	if err := e.t.GetRegs(t.tid, &r); err != nil {
		return e.gone(t, err)
	}
	if nr := int(int32(r.OrigRax)); markedOnly[nr] && int64(r.Rax) == -abi.ERESTARTSYS {
		// The kernel restarts the call as the stop ends, with these
		// arguments.
		arg := MarkedArg(nr)
		r.SetArg(arg, r.Arg(arg)|OpenMarker)
		if err := e.t.SetRegs(t.tid, &r); err != nil {
			return e.gone(t, err)
		}
	}
	return e.deliver(t, 0)
}
