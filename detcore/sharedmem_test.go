package detcore

import "testing"

// TestSharesMemory: which threads may wait for each other through memory,
// and so make each other count their calls (sharedmem.go).
func TestSharesMemory(t *testing.T) {
	mm := func(shared, write bool) *addrSpace { return &addrSpace{shared: shared, sharedWrite: write} }
	th := func(a *addrSpace) *thread { return &thread{proc: &process{mm: a}} }
	one := mm(false, false)
	for _, c := range []struct {
		name string
		a, b *addrSpace
		want bool
	}{
		{"threads of one process", one, one, true},
		{"processes with no shared mapping", mm(false, false), mm(false, false), false},
		{"both map shared memory read-only (glibc's gconv cache)", mm(true, false), mm(true, false), false},
		{"one maps it writable, the other read-only", mm(true, true), mm(true, false), true},
		{"the other way round", mm(true, false), mm(true, true), true},
		{"only one maps shared memory", mm(true, true), mm(false, false), false},
	} {
		if got := sharesMemory(th(c.a), th(c.b)); got != c.want {
			t.Errorf("%s: sharesMemory = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSharedMappingMarks: the engine marks an address space when the
// filter shows it an mmap of shared memory or a shmat, and neither call
// is a scheduling point.
func TestSharedMappingMarks(t *testing.T) {
	const (
		mapPrivate = 0x02
		protRead   = 0x1
	)
	for _, c := range []struct {
		name          string
		handler       handler
		args          [6]uint64
		shared, write bool
	}{
		{"private mmap (hermit record stops at every mmap)", sysMmap, [6]uint64{0, 4096, protRead | protWrite, mapPrivate}, false, false},
		{"read-only shared mmap", sysMmap, [6]uint64{0, 4096, protRead, mapShared}, true, false},
		{"writable shared mmap", sysMmap, [6]uint64{0, 4096, protRead | protWrite, mapShared}, true, true},
		{"shmat", sysShmat, [6]uint64{3, 0, 0}, true, true},
		{"shmat SHM_RDONLY", sysShmat, [6]uint64{3, 0, shmRdonly}, true, false},
	} {
		th := &thread{proc: &process{mm: &addrSpace{}}, policy: true}
		th.regs.Rdi, th.regs.Rsi, th.regs.Rdx, th.regs.R10 = c.args[0], c.args[1], c.args[2], c.args[3]
		// The futex keys looked up in its address space go with a
		// shared mapping (it may take an unmapped one's place); another
		// address space's stay.
		other := &addrSpace{}
		mine, theirs := futexKey{mm: th.proc.mm, addr: 0x1000}, futexKey{mm: other, addr: 0x1000}
		e := &Engine{sharedKeys: map[futexKey]futexKey{mine: {addr: 8, ino: 1}, theirs: {addr: 8, ino: 2}}}
		c.handler(e, th)
		if th.proc.mm.shared != c.shared || th.proc.mm.sharedWrite != c.write || th.policy {
			t.Errorf("%s: shared %v, writable %v, scheduling point %v; want %v, %v, false",
				c.name, th.proc.mm.shared, th.proc.mm.sharedWrite, th.policy, c.shared, c.write)
		}
		if _, kept := e.sharedKeys[mine]; kept == c.shared {
			t.Errorf("%s: its futex key look-up kept: %v, want %v", c.name, kept, !c.shared)
		}
		if _, kept := e.sharedKeys[theirs]; !kept {
			t.Errorf("%s: another address space's futex key look-up dropped", c.name)
		}
	}
}
