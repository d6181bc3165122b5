package detcore

import (
	"errors"
	"testing"
)

// trapMem is a Tracer with only guest memory: a byte map per thread group
// (tids in one map share it), where a missing byte is unmapped and a tid in
// gone has exited.
type trapMem struct {
	Tracer
	mem    map[uint64]byte
	gone   map[int]bool
	writes int
}

func (c *trapMem) ReadMem(tid int, addr uint64, b []byte) error {
	if c.gone[tid] {
		return ErrGone
	}
	for i := range b {
		v, ok := c.mem[addr+uint64(i)]
		if !ok {
			return errors.New("unmapped")
		}
		b[i] = v
	}
	return nil
}

func (c *trapMem) WriteMem(tid int, addr uint64, b []byte) error {
	if c.gone[tid] {
		return ErrGone
	}
	for i, v := range b {
		c.mem[addr+uint64(i)] = v
	}
	c.writes++
	return nil
}

// twoThreads returns an engine over tracer tr with one process, pid 10,
// of two threads: 10, running, which it returns, and 11, ready.
func twoThreads(tr Tracer) (*Engine, *addrSpace, *thread) {
	e := &Engine{t: tr, threads: map[int]*thread{}}
	mm := &addrSpace{id: 1}
	p := &process{pid: 10, mm: mm}
	t1 := &thread{tid: 10, proc: p, state: tsRunning}
	t2 := &thread{tid: 11, proc: p, state: tsReady}
	for _, th := range []*thread{t1, t2} {
		e.threads[th.tid] = th
		e.order = append(e.order, th)
		p.threads = append(p.threads, th)
	}
	return e, mm, t1
}

// TestSpinTrapsFollowTheCode: hermit's int3s go in and out of memory as
// the engine steps a thread; never go into code that replaced the loop
// they were put in (a library unmapped and another mapped there), even
// where the byte under the int3 is the same; go with their code when it
// is unmapped; come back when the same code is mapped again; reach the
// memory through another thread when the one at hand has exited; and are
// copied with a fork's memory.
func TestSpinTrapsFollowTheCode(t *testing.T) {
	const a, b, c = 0x1000, 0x2000, 0x3000
	m := &trapMem{mem: map[uint64]byte{}, gone: map[int]bool{}}
	lib := func(at uint64, seed byte) []byte {
		code := make([]byte, spinTrapCode)
		for i := range code {
			code[i] = seed + byte(i)
			m.mem[at+uint64(i)] = code[i]
		}
		return code
	}
	e, mm, t1 := twoThreads(m)
	mm.traps = &spinTraps{at: map[uint64]*spinTrap{}, gone: map[uint64]bool{}}
	for i, at := range []uint64{a, b, c} {
		mm.traps.at[at] = &spinTrap{code: lib(at, byte(0x10*(i+1)))}
	}

	e.armSpinTraps(t1, mm)
	for _, at := range []uint64{a, b, c} {
		if m.mem[at] != int3 || mm.trap(at) == nil {
			t.Fatalf("armed: byte at %#x is %#x, trap %v; want the int3 in", at, m.mem[at], mm.trap(at))
		}
	}

	// Another library now maps b, with the same byte where the int3 was
	// (the middle of a constant); c is unmapped.
	other := lib(b, 0x20)
	m.mem[b+7] = 0x99
	for i := uint64(0); i < spinTrapCode; i++ {
		delete(m.mem, c+i)
	}
	writes := m.writes
	e.disarmSpinTraps(t1)
	e.armSpinTraps(t1, mm)
	if m.mem[a] != int3 || m.mem[b] != other[0] {
		t.Errorf("disarmed and armed again: bytes %#x at %#x, %#x at %#x; want the int3 and the new code's byte", m.mem[a], a, m.mem[b], b)
	}
	if m.writes != writes+2 {
		t.Errorf("disarming and arming wrote %d times; want twice, at %#x only", m.writes-writes, a)
	}
	if mm.traps.at[b] != nil || mm.traps.at[c] != nil || !mm.traps.gone[b] || !mm.traps.gone[c] {
		t.Errorf("the traps over changed and unmapped code stayed: %v", mm.traps.at)
	}

	// The same library mapped again at a, without the int3; and the
	// running thread exits: its sibling still reaches the memory.
	lib(a, 0x10)
	e.disarmSpinTraps(t1)
	m.gone[10] = true
	e.armSpinTraps(t1, mm)
	if m.mem[a] != int3 || mm.trap(a) == nil {
		t.Errorf("armed through another thread, over the same code mapped again: byte %#x at %#x, want the int3", m.mem[a], a)
	}

	child := &addrSpace{id: 2}
	forkSpinTraps(mm, child)
	if tr := child.trap(a); tr == nil || tr.code[0] != 0x10 || tr == mm.traps.at[a] || !child.traps.gone[b] {
		t.Errorf("a fork's traps: %+v; want a copy of its parent's", child.traps)
	}
}
