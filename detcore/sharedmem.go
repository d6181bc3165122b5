package detcore

import (
	"time"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Shared memory: which threads can wait for which without a syscall.
//
// A thread waits for another without a scheduling point only through
// memory they share (a flag, a lock word) or through calls the filter
// lets through (a loop on getppid until its parent is gone). Count mode
// (count.go) and the spin examination (spin.go) exist for those waits,
// and both are dear: count mode stops the thread at every call, and an
// examination single-steps it. Threads of one address space share all
// their memory; two processes share memory only when both have mapped
// shared memory (mmap with MAP_SHARED, shmat) since their last exec, or
// were forked from a process that had, and one of them can write it.
// (glibc maps its gconv cache shared and read-only in nearly every
// program: that shares nothing anyone writes.) The filter stops such an
// mmap (ConditionalSyscalls) and shmat, and the engine marks the address
// space (addrSpace.shared, sharedWrite) and lets the call run: neither
// is a scheduling point, as in hermit record, which stops at every mmap.
// A read-only mapping made writable later by mprotect is not seen.
//
// So a thread counts its calls only while a thread it may share memory
// with waits to run (nearWaiting), or after a call that may have ended
// such a thread's wait (mayWakeNear): two compilers of make -j2, or the
// stages of a pipeline, run each until its next intercepted call, as a
// single thread does. A loop on calls the filter lets through that waits
// for another process with no memory in common is the one case left to
// the watchdog, which examines a thread that runs long while only such
// processes wait after spinBudgetFar rather than spinBudget (a loop on
// getpid or gettid, or on a flag a signal handler sets, is still found a
// spin there), then preempts it with a warning after --watchdog.

// mapShared is MAP_SHARED (MAP_SHARED_VALIDATE has it too); protWrite,
// PROT_WRITE; shmRdonly, SHM_RDONLY.
const (
	mapShared = 0x01
	protWrite = 0x2
	shmRdonly = 0o10000
)

// spinBudgetFar is spinBudget for a thread while only threads that share
// no memory with it wait to run: a spin cannot be waiting for them, but
// for a signal they send (or on getpid).
const spinBudgetFar = 100 * time.Millisecond

func init() {
	policy[abi.SYS_MMAP] = sysMmap
	policy[abi.SYS_SHMAT] = sysShmat
}

// sysMmap: an mmap the filter stops, of shared memory unless hermit record
// stops at every mmap. No scheduling point.
func sysMmap(e *Engine, t *thread) {
	t.policy = false
	if t.regs.Arg(3)&mapShared != 0 {
		t.proc.mm.shared = true
		t.proc.mm.sharedWrite = t.proc.mm.sharedWrite || t.regs.Arg(2)&protWrite != 0
		e.forgetSharedKeys(t.proc.mm)
	}
}

// sysShmat: attaching System V shared memory. No scheduling point.
func sysShmat(e *Engine, t *thread) {
	t.policy = false
	t.proc.mm.shared = true
	t.proc.mm.sharedWrite = t.proc.mm.sharedWrite || t.regs.Arg(2)&shmRdonly == 0
	e.forgetSharedKeys(t.proc.mm)
}

// sharesMemory reports whether t and u may share memory.
func sharesMemory(t, u *thread) bool {
	a, b := t.proc.mm, u.proc.mm
	return a == b || a.shared && b.sharedWrite || a.sharedWrite && b.shared
}

// nearWaiting counts the threads that may share memory with t and could
// run if t stopped (ready, or in a spin wait).
func (e *Engine) nearWaiting(t *thread) int {
	n := 0
	for _, u := range e.threads {
		if u != t && sharesMemory(t, u) && u.waitsForTurn() {
			n++
		}
	}
	return n
}

// wakingCalls are the intercepted calls that may end another thread's
// wait in the kernel's eyes before the engine's (waitsLazily): data or
// an end in a pipe or socket, a released lock, a signal.
var wakingCalls = map[int]bool{
	abi.SYS_WRITE: true, abi.SYS_WRITEV: true, abi.SYS_PWRITE64: true, abi.SYS_PWRITEV: true, abi.SYS_PWRITEV2: true,
	abi.SYS_SENDTO: true, abi.SYS_SENDMSG: true, abi.SYS_SENDMMSG: true, abi.SYS_CONNECT: true,
	abi.SYS_MSGSND: true, abi.SYS_MQ_TIMEDSEND: true, abi.SYS_SEMOP: true, abi.SYS_SEMTIMEDOP: true,
	abi.SYS_FLOCK: true, abi.SYS_FCNTL: true,
	abi.SYS_KILL: true, abi.SYS_TKILL: true, abi.SYS_TGKILL: true, abi.SYS_RT_SIGQUEUEINFO: true,
	abi.SYS_RT_TGSIGQUEUEINFO: true, abi.SYS_PIDFD_SEND_SIGNAL: true,
}

// mayWakeNear reports whether t, at a scheduling point, is about to make
// a call that may end the wait of a thread it may share memory with: the
// engine sees the waiter ready only when a pick goes round the threads
// at a later scheduling point, and a loop of t's on calls the filter
// lets through (waiting for that thread to answer) must reach one, and
// its turn end there.
func (e *Engine) mayWakeNear(t *thread) bool {
	if !t.atSyscall || !wakingCalls[t.nr] {
		return false
	}
	for _, u := range e.threads {
		if u != t && u.waitsLazily() && sharesMemory(t, u) {
			return true
		}
	}
	return false
}

// spinBudgetOf is how long running thread t runs before the watchdog
// examines it.
func (e *Engine) spinBudgetOf(t *thread) time.Duration {
	b := t.budget()
	// A thread that may wake another from its page (fastfutex.go) is
	// as near to it as if the other were ready.
	if e.nearWaiting(t) == 0 && !e.fastWaiters() {
		b = max(b, spinBudgetFar)
	}
	return b
}
