package detcore

import (
	"slices"
	"strconv"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// futexKey identifies a futex word: by address space and address, or, for
// a shared futex in a MAP_SHARED mapping, by the mapped object and offset
// (mm nil), so that processes sharing memory meet on the same key.
type futexKey struct {
	mm       *addrSpace
	addr     uint64
	dev, ino uint64
}

// keyFor returns the key of the futex word at addr in t's address space.
// A shared (non-private) futex costs one look-up of its mapping per
// address space and address.
func (e *Engine) keyFor(t *thread, addr uint64, private bool) futexKey {
	k := futexKey{mm: t.proc.mm, addr: addr}
	if private {
		return k
	}
	if sk, ok := e.sharedKeys[k]; ok {
		return sk
	}
	sk := k
	if dev, ino, off, ok := e.t.SharedMapping(t.tid, addr); ok {
		sk = futexKey{addr: off, dev: dev, ino: ino}
	}
	e.sharedKeys[k] = sk
	return sk
}

// forgetSharedKeys drops keyFor's look-ups in address space mm: a shared
// mapping it is about to make may take the place of one it unmapped (the
// filter lets munmap through), whose words would keep the old object's
// keys (multiprocessing's semaphores, mapped again at one address for
// each new one).
func (e *Engine) forgetSharedKeys(mm *addrSpace) {
	for k := range e.sharedKeys {
		if k.mm == mm {
			delete(e.sharedKeys, k)
		}
	}
}

// sysFutex emulates futex(2): waiters park in the engine, in FIFO order per
// word, and wakes pick them deterministically.
func sysFutex(e *Engine, t *thread) {
	r := &t.regs
	uaddr, op, val := r.Rdi, int(r.Rsi), uint32(r.Rdx)
	cmd := op &^ (abi.FUTEX_PRIVATE_FLAG | abi.FUTEX_CLOCK_REALTIME)
	private := op&abi.FUTEX_PRIVATE_FLAG != 0
	key := e.keyFor(t, uaddr, private)
	var key2 futexKey
	if cmd == abi.FUTEX_REQUEUE || cmd == abi.FUTEX_CMP_REQUEUE || cmd == abi.FUTEX_WAKE_OP {
		key2 = e.keyFor(t, r.R8, private)
	}
	switch cmd {
	case abi.FUTEX_WAIT, abi.FUTEX_WAIT_BITSET:
		e.futexSite(t)
		bitset := uint32(abi.FUTEX_BITSET_ANY)
		if cmd == abi.FUTEX_WAIT_BITSET {
			bitset = uint32(r.R9)
			if bitset == 0 {
				t.emulate(-abi.EINVAL)
				return
			}
		}
		cur, ok := e.readU32(t, uaddr)
		if !ok {
			t.emulate(-abi.EFAULT)
			return
		}
		if cur != val {
			t.emulate(-abi.EAGAIN)
			return
		}
		deadline := int64(-1)
		if r.R10 != 0 {
			clock := abi.CLOCK_MONOTONIC
			if op&abi.FUTEX_CLOCK_REALTIME != 0 {
				clock = abi.CLOCK_REALTIME
			}
			d, ok := e.readDeadline(t, r.R10, cmd == abi.FUTEX_WAIT_BITSET, clock)
			if !ok {
				t.emulate(-abi.EFAULT)
				return
			}
			deadline = d
		}
		e.blockOn(t, &blocker{kind: bkFutex, key: key, bitset: bitset, deadline: deadline,
			onTimeout: emulateResult(-abi.ETIMEDOUT)})
	case abi.FUTEX_WAKE:
		e.futexSite(t)
		t.emulate(int64(e.wokeWaiters(t, e.futexWake(key, int(val), abi.FUTEX_BITSET_ANY))))
	case abi.FUTEX_WAKE_BITSET:
		if uint32(r.R9) == 0 {
			t.emulate(-abi.EINVAL)
			return
		}
		t.emulate(int64(e.wokeWaiters(t, e.futexWake(key, int(val), uint32(r.R9)))))
	case abi.FUTEX_REQUEUE, abi.FUTEX_CMP_REQUEUE:
		if cmd == abi.FUTEX_CMP_REQUEUE {
			cur, ok := e.readU32(t, uaddr)
			if !ok {
				t.emulate(-abi.EFAULT)
				return
			}
			if cur != uint32(r.R9) {
				t.emulate(-abi.EAGAIN)
				return
			}
		}
		// Both return the waiters woken plus those requeued, as the
		// kernel's futex_requeue does (futex(2) says only the woken for
		// FUTEX_REQUEUE; the kernel counts both).
		woken := e.wokeWaiters(t, e.futexWake(key, int(val), abi.FUTEX_BITSET_ANY))
		moved := e.futexRequeue(key, key2, int(int32(r.R10)))
		t.emulate(int64(woken + moved))
	case abi.FUTEX_WAKE_OP:
		woken := e.futexWakeOp(t, key, key2, r.R8, int(val), int(int32(r.R10)), uint32(r.R9))
		e.wokeWaiters(t, int(max(woken, 0)))
		t.emulate(woken)
	case abi.FUTEX_TRYLOCK_PI, abi.FUTEX_UNLOCK_PI, abi.FUTEX_LOCK_PI, abi.FUTEX_LOCK_PI2, abi.FUTEX_WAIT_REQUEUE_PI, abi.FUTEX_CMP_REQUEUE_PI:
		// Priority inheritance is not emulated. All of them fail, as on
		// a kernel without it: glibc asks FUTEX_UNLOCK_PI once, and
		// then refuses PI mutexes (ENOTSUP) rather than taking a
		// failed FUTEX_LOCK_PI for the lock acquired (the kernel ran
		// the unlock, and two threads held the mutex at once).
		e.warnOnce("futexop", "futex operation "+strconv.Itoa(cmd)+" (priority inheritance) is not supported; the guest gets ENOSYS, and glibc refuses priority-inheritance mutexes (ENOTSUP)")
		t.emulate(-abi.ENOSYS)
	default:
		// No such operation (FUTEX_FD is gone since Linux 2.6.26): the
		// kernel fails it with ENOSYS too, and nothing is amiss.
		t.emulate(-abi.ENOSYS)
	}
}

// wokeWaiters notes that t's wake woke n waiters: if any, its turn ends
// there (pick), so that one of them runs before the waker goes on. A
// lock's owner that wakes a waiter as it unlocks and, keeping the turn,
// takes the lock again before its next scheduling point would otherwise
// find the waiter asleep on it at every turn the waiter gets: Go's sysmon
// against a goroutine that stops the world in a loop, a livelock where
// natively the two threads run side by side.
func (e *Engine) wokeWaiters(t *thread, n int) int {
	if n > 0 {
		e.wokeBy = t
	}
	return n
}

// futexWake wakes up to n waiters on key whose bitset matches, oldest
// first, and returns how many it woke.
func (e *Engine) futexWake(key futexKey, n int, bitset uint32) int {
	woken := e.futexSigWoken(key, n, bitset)
	ws := e.futexes[key]
	kept := ws[:0]
	for _, w := range ws {
		if woken < n && w.block.bitset&bitset != 0 {
			woken++
			w.block = nil
			w.state = tsReady
			w.emulate(0)
			continue
		}
		kept = append(kept, w)
	}
	e.setWaiters(key, kept)
	return woken
}

// ownersDied wakes, after a thread of process p died, one waiter on each
// futex word the kernel marked as its owner's death: a robust mutex the
// thread held (its robust list), whose word the kernel sets to
// FUTEX_OWNER_DIED, keeping FUTEX_WAITERS, and whose waiter it wakes. Here
// the waiters wait in the engine, where the kernel's wake does not reach:
// the waiter's lock returns EOWNERDEAD once it runs. Words in memory p
// shares with other processes count too.
func (e *Engine) ownersDied(p *process) {
	var keys []futexKey
	for key, ws := range e.futexes {
		if len(ws) == 0 || key.mm != nil && key.mm != p.mm {
			continue
		}
		addr := key.addr
		if key.mm == nil {
			addr = ws[0].regs.Rdi // the waiter's own address of the shared word
		}
		word, ok := e.readU32(ws[0], addr)
		if ok && word&abi.FUTEX_OWNER_DIED != 0 && word&abi.FUTEX_WAITERS != 0 && word&abi.FUTEX_TID_MASK == 0 {
			keys = append(keys, key)
		}
	}
	// In the order of the waiters' guest ids, not the map's.
	slices.SortFunc(keys, func(a, b futexKey) int { return e.futexes[a][0].vtid - e.futexes[b][0].vtid })
	for _, key := range keys {
		e.futexWake(key, 1, abi.FUTEX_BITSET_ANY)
	}
}

// futexSigWoken wakes up to n of the threads that signals for their whole
// process woke from a wait on key whose bitset matches (signalWake) and
// that have not run since, and returns how many it woke. In the kernel
// they still wait there, for another thread of the process may take the
// signals first (sigTaken then puts them back in the wait), so a wake that
// passed over them would be lost: a Go server's signal handler, on the
// thread that took its SIGINT, wakes the thread that waits for signals,
// woken by the same SIGINT and about to wait again. The call of a thread
// woken here returns 0, as the kernel's would; signals still pending are
// delivered as it returns.
func (e *Engine) futexSigWoken(key futexKey, n int, bitset uint32) int {
	woken := 0
	kept := e.sigWoken[:0]
	for _, w := range e.sigWoken {
		if b := w.sigWoken; woken < n && w.state == tsReady && b.key == key && b.bitset&bitset != 0 {
			woken++
			w.sigWoken, w.onExit = nil, nil
			w.emulate(0)
			continue
		}
		kept = append(kept, w)
	}
	e.sigWoken = kept
	return woken
}

// dropSigWoken takes t off the threads futexSigWoken looks at.
func (e *Engine) dropSigWoken(t *thread) {
	if i := slices.Index(e.sigWoken, t); i >= 0 {
		e.sigWoken = slices.Delete(e.sigWoken, i, i+1)
	}
}

// futexRequeue moves up to n waiters from key to key2: first those a
// signal woke that have not run (futexSigWoken), whose wait, should they
// go back to it, is then on key2.
func (e *Engine) futexRequeue(key, key2 futexKey, n int) int {
	moved := 0
	for _, w := range e.sigWoken {
		if moved < n && w.state == tsReady && w.sigWoken.key == key {
			w.sigWoken.key = key2
			moved++
		}
	}
	return moved + e.requeueWaiters(key, key2, n-moved)
}

// requeueWaiters moves up to n threads waiting on key to key2.
func (e *Engine) requeueWaiters(key, key2 futexKey, n int) int {
	ws := e.futexes[key]
	if n > len(ws) {
		n = len(ws)
	}
	if n <= 0 {
		return 0
	}
	moved := ws[:n]
	if key == key2 {
		// Onto the same word: they go to the end of its queue, as
		// in the kernel.
		e.setWaiters(key, append(append([]*thread(nil), ws[n:]...), moved...))
		return n
	}
	for _, w := range moved {
		w.block.key = key2
	}
	e.futexes[key2] = append(e.futexes[key2], moved...)
	e.setWaiters(key, append([]*thread(nil), ws[n:]...))
	return n
}

func (e *Engine) setWaiters(key futexKey, ws []*thread) {
	if len(ws) == 0 {
		delete(e.futexes, key)
		return
	}
	e.futexes[key] = ws
}

// futexWakeOp implements FUTEX_WAKE_OP: update *uaddr2, wake on uaddr, and
// wake on uaddr2 if the old value passes the comparison.
func (e *Engine) futexWakeOp(t *thread, key, key2 futexKey, uaddr2 uint64, n, n2 int, enc uint32) int64 {
	op := (enc >> 28) & 0xf
	cmp := (enc >> 24) & 0xf
	oparg := signExtend12(enc >> 12)
	cmparg := signExtend12(enc)
	if op&8 != 0 {
		op &= 7
		oparg = 1 << (uint32(oparg) & 31)
	}
	old, ok := e.readU32(t, uaddr2)
	if !ok {
		return -abi.EFAULT
	}
	var nv uint32
	switch op {
	case 0:
		nv = uint32(oparg)
	case 1:
		nv = old + uint32(oparg)
	case 2:
		nv = old | uint32(oparg)
	case 3:
		nv = old &^ uint32(oparg)
	case 4:
		nv = old ^ uint32(oparg)
	default:
		return -abi.ENOSYS
	}
	if !e.writeU32(t, uaddr2, nv) {
		return -abi.EFAULT
	}
	woken := e.futexWake(key, n, abi.FUTEX_BITSET_ANY)
	o := int32(old)
	var hit bool
	switch cmp {
	case 0:
		hit = o == cmparg
	case 1:
		hit = o != cmparg
	case 2:
		hit = o < cmparg
	case 3:
		hit = o <= cmparg
	case 4:
		hit = o > cmparg
	case 5:
		hit = o >= cmparg
	default:
		return -abi.ENOSYS
	}
	if hit {
		woken += e.futexWake(key2, n2, abi.FUTEX_BITSET_ANY)
	}
	return int64(woken)
}

func signExtend12(v uint32) int32 { return int32(v<<20) >> 20 }

func (e *Engine) readU32(t *thread, addr uint64) (uint32, bool) {
	var b [4]byte
	if e.t.ReadMem(t.tid, addr, b[:]) != nil {
		return 0, false
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24, true
}

func (e *Engine) writeU32(t *thread, addr uint64, v uint32) bool {
	b := [4]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
	return e.t.WriteMem(t.tid, addr, b[:]) == nil
}
