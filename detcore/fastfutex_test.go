package detcore

import (
	"testing"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// TestFutexTable: the table a thread's page gets holds the words its own
// process waits on, with their counts, where fastio.S's search finds
// them (two words whose first slots are the same included), and none of
// another process's; a wake the code left is made on the right word, for
// the count it gave; the kernel is asked once per thread whether syscall
// user dispatch can be turned off, and the dispatch the code turned on
// with the wake is turned off before the thread runs on; a process with
// more words waited on than the table takes, or with syscall user
// dispatch of its own, gets none, and the code makes every call.
func TestFutexTable(t *testing.T) {
	c := NewClockPage(make([]byte, fxTable+16*fxSlots), nil)
	undispatched := 0
	c.fast = &FastWrites{
		FutexSite:  func(uint64, []byte) (uint64, []byte, bool) { return 0, nil, false },
		Undispatch: func(int) bool { undispatched++; return true },
	}
	mm, other := &addrSpace{id: 1}, &addrSpace{id: 2}
	runner := &thread{proc: &process{mm: mm, clock: c}}
	e := &Engine{futexes: map[futexKey][]*thread{}, cfg: Config{Quantum: 10}}
	waiter := func(key futexKey) *thread {
		w := &thread{state: tsBlocked, block: &blocker{kind: bkFutex, key: key, bitset: abi.FUTEX_BITSET_ANY}}
		e.futexes[key] = append(e.futexes[key], w)
		return w
	}
	// a and b start at the same slot (128 slots of 4-byte words).
	a, b := uint64(0x7fff1000), uint64(0x7fff1000+4*fxSlots)
	first := waiter(futexKey{mm: mm, addr: a})
	second := waiter(futexKey{mm: mm, addr: a})
	waiter(futexKey{mm: mm, addr: b})
	waiter(futexKey{mm: other, addr: a + 8})

	// lookup is fio_futex's search.
	lookup := func(addr uint64) (uint64, bool) {
		for s := (addr >> 2) % fxSlots; ; s = (s + 1) % fxSlots {
			switch c.word(fxTable + 16*int(s)) {
			case addr:
				return c.word(fxTable + 16*int(s) + 8), true
			case 0:
				return 0, false
			}
		}
	}
	e.armFutexes(runner, true)
	if c.word(fxOn) == 0 || !c.futex.live {
		t.Fatalf("table off (fxOn %d, live %v), want on", c.word(fxOn), c.futex.live)
	}
	for _, w := range []struct {
		addr  uint64
		n     uint64
		found bool
	}{{a, 2, true}, {b, 1, true}, {a + 8, 0, false}, {a + 4, 0, false}} {
		if n, ok := lookup(w.addr); n != w.n || ok != w.found {
			t.Errorf("word %#x: %d waiters (found %v), want %d (%v)", w.addr, n, ok, w.n, w.found)
		}
	}
	if got := c.word(fxQuant); got != vclockReads*10 {
		t.Errorf("quantum %d, want %d", got, vclockReads*10)
	}
	e.armFutexes(runner, true)
	if undispatched != 1 || runner.sud != c {
		t.Errorf("syscall user dispatch asked about %d times for one thread and page, want once", undispatched)
	}

	// The code woke one of a's two waiters: the oldest is woken.
	c.put(fxAddr, a)
	c.put(fxN, 1)
	c.put(fxPend, 1)
	c.put(fxCalls, 1)
	e.last = runner
	e.foldFutexes(c)
	if !runner.sudOn {
		t.Errorf("after the fold, the thread that left the wake is not known to have its dispatch on")
	}
	// It stays on (the page says so) for sudKeep resumes without a
	// wake, a wake starts the count again, and then it is turned off
	// once.
	resumes := func(n int) {
		for i := 0; i < n; i++ {
			e.offSUD(runner)
			if c.word(fxSUD) != 1 || undispatched != 1 {
				t.Fatalf("resume %d after a wake: the page says dispatch is %d, turned off %d times; want on, none", i+1, c.word(fxSUD), undispatched-1)
			}
		}
	}
	resumes(sudKeep - 1)
	e.foldFutexes(c) // nothing pending: no wake, the count goes on
	resumes(1)
	c.put(fxAddr, 0x9990) // a word nobody waits on
	c.put(fxPend, 1)
	e.foldFutexes(c)
	c.put(fxAddr, a)
	resumes(sudKeep)
	e.offSUD(runner)
	e.offSUD(runner)
	if undispatched != 2 || runner.sudOn || c.word(fxSUD) != 0 {
		t.Errorf("after %d resumes without a wake: dispatch turned off %d times, sudOn %v, the page says %d; want once, off, 0", sudKeep+2, undispatched-1, runner.sudOn, c.word(fxSUD))
	}
	if first.state != tsReady || second.state != tsBlocked || len(e.futexes[futexKey{mm: mm, addr: a}]) != 1 {
		t.Errorf("after a wake of 1 on %#x: first %v, second %v, %d waiting; want the first woken", a, first.state, second.state, len(e.futexes[futexKey{mm: mm, addr: a}]))
	}
	if c.word(fxPend) != 0 || e.result.Stats.FastWakes != 1 {
		t.Errorf("pending %d, FastWakes %d after the fold; want 0 and 1", c.word(fxPend), e.result.Stats.FastWakes)
	}

	// A pending wake keeps the page as the code left it.
	c.put(fxPend, 1)
	c.put(vcFast, 1)
	e.armFutexes(runner, true)
	if n, ok := lookup(a); c.word(vcFast) != 0 || !ok || n != 2 {
		t.Errorf("with a wake pending: fast %d, word %#x %d waiters; want fast calls off and the table kept", c.word(vcFast), a, n)
	}
	c.put(fxPend, 0)

	// A process with syscall user dispatch of its own: off (hermit's
	// switch would not stop its next call).
	other2 := &thread{proc: &process{mm: mm, clock: c, ownSUD: true}}
	e.armFutexes(other2, true)
	if c.word(fxOn) != 0 {
		t.Errorf("a process with its own syscall user dispatch gets the table")
	}

	// More words than half the table: off.
	for i := 0; i <= fxSlots/2; i++ {
		waiter(futexKey{mm: mm, addr: 0x10000 + 4*uint64(i)})
	}
	e.armFutexes(runner, true)
	if c.word(fxOn) != 0 || c.futex.live {
		t.Errorf("%d words waited on: table on, want off", len(e.futexes))
	}
	if _, ok := lookup(a); ok {
		t.Errorf("a table turned off still holds %#x", a)
	}
}

// TestRunStops: the calls at which a wake left in the page is made are
// those a run stops at too.
func TestRunStops(t *testing.T) {
	call := func(nr int, args ...uint64) *thread {
		th := &thread{nr: nr}
		th.regs.OrigRax = uint64(nr)
		for i, a := range args {
			switch i {
			case 0:
				th.regs.Rdi = a
			case 1:
				th.regs.Rsi = a
			case 2:
				th.regs.Rdx = a
			case 3:
				th.regs.R10 = a
			}
		}
		return th
	}
	for _, c := range []struct {
		name string
		t    *thread
		want bool
	}{
		{"futex", call(abi.SYS_FUTEX, 0x1000, 0x80), true},
		{"access (a recording's only)", call(abi.SYS_ACCESS, 0x1000, 0), false},
		{"private mmap", call(abi.SYS_MMAP, 0, 4096, 3, 0x22), false},
		{"shared mmap", call(abi.SYS_MMAP, 0, 4096, 3, 0x01), true},
		{"fcntl F_GETFL", call(abi.SYS_FCNTL, 3, 3), false},
		{"fcntl F_SETLKW", call(abi.SYS_FCNTL, 3, fSetlkw), true},
		{"openat unmarked", call(abi.SYS_OPENAT, 0, 0x1000, 0), false},
		{"openat marked", call(abi.SYS_OPENAT, 0, 0x1000, OpenMarker), true},
	} {
		if got := runStops(c.t); got != c.want {
			t.Errorf("%s: runStops %v, want %v", c.name, got, c.want)
		}
	}
}
