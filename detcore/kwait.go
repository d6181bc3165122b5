package detcore

import (
	"github.com/hermitdbg/hermit/detcore/abi"
)

// Calls that block in the kernel until another guest thread acts (a file
// lock, a System V semaphore or message queue) would leave the engine
// waiting for the blocked thread, while the thread that would release it
// stays parked: a hang. The engine runs them in their non-blocking form
// instead; when that would block, the thread is rewound to its syscall
// instruction and waits in the engine (a retry wait) until another thread
// has had a turn, then tries again. Whether the call would block depends
// only on what the guest did before, so the schedule is deterministic,
// and the same in record and replay (these calls are not journaled).

// Constants from <sys/file.h>, <fcntl.h> and <sys/ipc.h>.
const (
	lockNB      = 4
	fSetlk      = 6
	fSetlkw     = 7
	fOfdSetlk   = 37
	fOfdSetlkw  = 38
	fNotify     = 1026
	ipcNowait   = 0o4000
	sembufSize  = 6 // struct sembuf: unsigned short num; short op, flg
	maxSemops   = 500
	eidrm       = 43 // EIDRM
	sembufFlags = 4
)

// ArgCondition says that a syscall needs a stop only when the low 32 bits
// of argument Arg are one of Values: the seccomp filter lets the others
// through.
type ArgCondition struct {
	Arg    int
	Values []uint32
	// Mask, if not 0, is a set of flags instead: the call needs a stop
	// when the argument has one of them.
	Mask uint32
}

// TracedWhen returns the condition under which the engine needs to see
// syscall nr, if it needs it only sometimes. (fcntl is common, and only
// its waiting lock commands concern the engine, and F_NOTIFY the
// recorder, which warns that changes from outside the guest are not in
// the trace.)
func TracedWhen(nr int) (ArgCondition, bool) {
	switch nr {
	case abi.SYS_FCNTL:
		return ArgCondition{Arg: 1, Values: []uint32{fSetlkw, fOfdSetlkw, fNotify, fGetsig, fSetsig, fSetfl, fSetlease}}, true
	case abi.SYS_CLONE:
		return ArgCondition{Arg: 0, Mask: cloneUntraced}, true
	}
	return ArgCondition{}, false
}

func init() {
	policy[abi.SYS_FLOCK] = sysFlock
	policy[abi.SYS_FCNTL] = sysFcntl
	policy[abi.SYS_MSGRCV] = sysMsgq
	policy[abi.SYS_MSGSND] = sysMsgq
	policy[abi.SYS_SEMOP] = sysSemop
	policy[abi.SYS_SEMTIMEDOP] = sysSemop
	policy[abi.SYS_CLONE] = sysCloneUntraced
}

// cloneUntraced is CLONE_UNTRACED, with which a child would escape the
// tracer: hermit would lose it (it ran free, and hermit waited for no
// exit of it). The flag is dropped; a guest cannot tell.
const cloneUntraced = 0x00800000

func sysCloneUntraced(e *Engine, t *thread) {
	if t.regs.Rdi&cloneUntraced == 0 {
		return
	}
	t.regs.Rdi &^= cloneUntraced
	_ = e.t.SetRegs(t.tid, &t.regs)
}

// retryState is the deadline of a call that is retried, kept across its
// tries (a semtimedop's timeout runs from its first try).
type retryState struct {
	rip      uint64
	nr       int
	deadline int64
}

// sysFlock: flock(fd, op) without LOCK_NB.
func sysFlock(e *Engine, t *thread) {
	op := t.regs.Rsi
	if op&lockNB != 0 {
		return
	}
	e.tryNonblocking(t, tryCall{
		set:     func(r *abi.Regs) { r.Rsi = op | lockNB },
		blocked: []int64{-abi.EAGAIN},
		restart: -abi.ERESTARTSYS,
	})
}

// sysFcntl: the waiting lock commands, F_SETLKW and F_OFD_SETLKW.
func sysFcntl(e *Engine, t *thread) {
	if e.fastSignals(t) {
		return
	}
	var cmd uint64
	switch t.regs.Rsi {
	case fSetlkw:
		cmd = fSetlk
	case fOfdSetlkw:
		cmd = fOfdSetlk
	default:
		return
	}
	e.tryNonblocking(t, tryCall{
		set:     func(r *abi.Regs) { r.Rsi = cmd },
		blocked: []int64{-abi.EAGAIN, -abi.EACCES},
		restart: -abi.ERESTARTSYS,
	})
}

// sysMsgq: msgsnd(id, msg, size, flags) and msgrcv(id, msg, size, type,
// flags) without IPC_NOWAIT. System V IPC calls are never restarted
// after a handler runs.
func sysMsgq(e *Engine, t *thread) {
	arg, blocked := 3, int64(-abi.EAGAIN)
	if t.nr == abi.SYS_MSGRCV {
		arg, blocked = 4, -abi.ENOMSG
	}
	flags := t.regs.Arg(arg)
	if flags&ipcNowait != 0 {
		return
	}
	e.tryNonblocking(t, tryCall{
		set:     func(r *abi.Regs) { r.SetArg(arg, flags|ipcNowait) },
		blocked: []int64{blocked},
		restart: -abi.ERESTARTNOHAND,
		removed: -eidrm,
	})
}

// sysSemop: semop(id, sops, n) and semtimedop(id, sops, n, timeout). The
// flags are in the guest's array of operations: each gets IPC_NOWAIT for
// the try, and its own flags back at the call's exit. If the guest gave
// some operation IPC_NOWAIT itself, EAGAIN would not tell whose it was:
// the call then runs as it is.
func sysSemop(e *Engine, t *thread) {
	r := &t.regs
	n := int(r.Rdx)
	if n <= 0 || n > maxSemops {
		return
	}
	ops := make([]byte, n*sembufSize)
	if e.t.ReadMem(t.tid, r.Rsi, ops) != nil {
		return
	}
	try := make([]byte, len(ops))
	copy(try, ops)
	for i := 0; i < n; i++ {
		off := i*sembufSize + sembufFlags
		flg := uint16(ops[off]) | uint16(ops[off+1])<<8
		if flg&ipcNowait != 0 {
			return
		}
		flg |= ipcNowait
		try[off], try[off+1] = byte(flg), byte(flg>>8)
	}
	deadline := int64(-1)
	if t.nr == abi.SYS_SEMTIMEDOP && r.R10 != 0 {
		if rs := t.retry; rs != nil && rs.rip == r.Rip && rs.nr == t.nr {
			deadline = rs.deadline
		} else if d, ok := e.readDeadline(t, r.R10, false, 0); ok {
			deadline = d
		} else {
			return
		}
	}
	addr := r.Rsi
	if e.t.WriteMem(t.tid, addr, try) != nil {
		return
	}
	e.tryNonblocking(t, tryCall{
		undo:     func() { _ = e.t.WriteMem(t.tid, addr, ops) },
		blocked:  []int64{-abi.EAGAIN},
		restart:  -abi.ERESTARTNOHAND,
		deadline: deadline,
		timeout:  -abi.EAGAIN,
		removed:  -eidrm,
	})
}

// tryCall describes the non-blocking try of a blocking call.
type tryCall struct {
	// set makes the call non-blocking in its registers (nil: done already,
	// in memory); undo puts back what was changed in memory.
	set  func(r *abi.Regs)
	undo func()
	// blocked are the results that mean the call would have blocked.
	blocked []int64
	// restart is the kernel's code for the call when a signal interrupts
	// its wait (ERESTARTSYS: restarted under SA_RESTART).
	restart int64
	// deadline, if not -1, ends the wait with result timeout. The zero
	// value is taken as no deadline.
	deadline, timeout int64
	// removed, if not 0, is the result for a retry that finds its object
	// gone (EINVAL): what a waiter gets when it is removed (EIDRM).
	removed int64
}

// tryNonblocking runs t's call as c describes and, at its exit, either
// lets its result stand or rewinds t into a retry wait.
func (e *Engine) tryNonblocking(t *thread, c tryCall) {
	orig := t.regs
	if c.deadline == 0 {
		c.deadline = -1
	}
	if c.set != nil {
		c.set(&t.regs)
		if e.t.SetRegs(t.tid, &t.regs) != nil {
			t.regs = orig
			if c.undo != nil {
				c.undo()
			}
			return
		}
	}
	t.act = actExitStop
	t.onExit = func(e *Engine, t *thread) {
		if c.undo != nil {
			c.undo()
		}
		ret := int64(t.regs.Rax)
		wouldBlock := false
		for _, b := range c.blocked {
			wouldBlock = wouldBlock || ret == b
		}
		if !wouldBlock || (c.deadline >= 0 && e.clock >= c.deadline) {
			if wouldBlock {
				ret = c.timeout
			}
			if ret == -abi.EINVAL && c.removed != 0 && t.retry != nil && t.retry.rip == orig.Rip {
				// The queue or semaphore set went away while the call
				// waited: the kernel tells a waiter EIDRM.
				ret = c.removed
			}
			t.retry = nil
			done := orig
			done.Rax = uint64(ret)
			if e.t.SetRegs(t.tid, &done) == nil {
				t.regs = done
			}
			return
		}
		if !e.rewind(t, orig) {
			return
		}
		t.retry = &retryState{rip: orig.Rip, nr: t.nr, deadline: c.deadline}
		b := &blocker{kind: bkRetry, epoch: uint64(e.result.Stats.Turns), deadline: c.deadline}
		b.onTimeout = func(e *Engine, t *thread) {
			t.retry = nil
			t.regs = orig
			t.emulate(c.timeout)
		}
		b.onSignal = func(e *Engine, t *thread) {
			// The call returns the kernel's restart code, and the kernel
			// restarts it or returns EINTR as it delivers the signal.
			t.retry = nil
			e.interrupted(t, orig, c.restart)
		}
		e.result.Stats.Retries++
		e.blockOn(t, b)
	}
}

// retryAll lets every thread in a retry wait try its call again; it
// reports whether there was one.
func (e *Engine) retryAll() bool {
	any := false
	for _, t := range e.ordered() {
		if t.state == tsBlocked && t.block.kind == bkRetry {
			t.block.epoch = ^uint64(0)
			any = true
		}
	}
	return any
}
