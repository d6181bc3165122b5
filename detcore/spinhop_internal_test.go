package detcore

import (
	"errors"
	"testing"
)

// forkMem is a Tracer with only guest memory, one byte map per address
// space: group maps a tid to its address space's number.
type forkMem struct {
	Tracer
	group  map[int]int
	mem    map[int]map[uint64]byte
	gone   map[int]bool
	writes int
}

func (c *forkMem) space(tid int) (map[uint64]byte, error) {
	if c.gone[tid] {
		return nil, ErrGone
	}
	m, ok := c.mem[c.group[tid]]
	if !ok {
		return nil, ErrGone
	}
	return m, nil
}

func (c *forkMem) ReadMem(tid int, addr uint64, b []byte) error {
	m, err := c.space(tid)
	if err != nil {
		return err
	}
	for i := range b {
		v, ok := m[addr+uint64(i)]
		if !ok {
			return errors.New("unmapped")
		}
		b[i] = v
	}
	return nil
}

func (c *forkMem) WriteMem(tid int, addr uint64, b []byte) error {
	m, err := c.space(tid)
	if err != nil {
		return err
	}
	for i, v := range b {
		m[addr+uint64(i)] = v
	}
	c.writes++
	return nil
}

// TestHopLeavesNoInt3: the int3 of an examination by hops goes when the
// examined thread stops for anything but an arrival: out of its memory;
// out of a forked child's copy of it, which the child would otherwise
// meet (and die of a SIGTRAP); through another thread of the address
// space when the examined one has exited; never into code that replaced
// it (the program wrote there), nor into the image an exec mapped.
func TestHopLeavesNoInt3(t *testing.T) {
	const at, orig = 0x1000, 0x55
	cases := []struct {
		name string
		// shared: the child shares its parent's memory (a thread, a
		// vfork).
		shared bool
		stop   Stop
		// exited: the examined thread is gone by the stop.
		exited bool
		// over: the program wrote over the int3 before the stop.
		over       bool
		wantParent byte
		wantChild  byte
		wantWrites int
	}{
		{name: "a syscall", stop: Stop{Kind: StopSeccomp}, wantParent: orig, wantChild: int3, wantWrites: 1},
		{name: "a fork", stop: Stop{Kind: StopClone, Msg: 20}, wantParent: orig, wantChild: orig, wantWrites: 2},
		{name: "a thread", shared: true, stop: Stop{Kind: StopClone, Msg: 20}, wantParent: orig, wantChild: orig, wantWrites: 1},
		{name: "an exit", stop: Stop{Kind: StopExited}, exited: true, wantParent: orig, wantChild: int3, wantWrites: 1},
		{name: "an exec", stop: Stop{Kind: StopExec}, wantParent: int3, wantChild: int3, wantWrites: 0},
		{name: "code written over it", stop: Stop{Kind: StopSeccomp}, over: true, wantParent: 0x90, wantChild: int3, wantWrites: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &forkMem{
				group: map[int]int{10: 1, 11: 1, 20: 2},
				mem:   map[int]map[uint64]byte{1: {at: int3, at + 1: 0x89}, 2: {at: int3, at + 1: 0x89}},
				gone:  map[int]bool{},
			}
			if c.shared {
				m.group[20] = 1
			}
			if c.over {
				m.mem[1][at] = 0x90
			}
			e, mm, t1 := twoThreads(m)
			if c.exited {
				m.gone[10] = true
				t1.state = tsDying
			}
			mm.hop = &spinHop{t: t1, at: at, orig: orig, seen: map[uint64]bool{}}
			st := c.stop
			st.Tid = 10
			if e.hopping(st) {
				t.Fatalf("a %v stop taken for an arrival at the int3", st.Kind)
			}
			e.endHop(mm, t1, st)
			if mm.hop != nil {
				t.Errorf("the hop is still on after the stop")
			}
			if got := m.mem[1][at]; got != c.wantParent {
				t.Errorf("the examined thread's memory holds %#x at the int3's address; want %#x", got, c.wantParent)
			}
			if !c.shared {
				if got := m.mem[2][at]; got != c.wantChild {
					t.Errorf("the other address space holds %#x at the int3's address; want %#x", got, c.wantChild)
				}
			}
			if m.writes != c.wantWrites {
				t.Errorf("%d writes; want %d", m.writes, c.wantWrites)
			}
		})
	}
}

// TestHopWithoutVerdictKeepsNote: a look by hops that another stop ends
// before any verdict (the watchdog's preemption came first) leaves what
// an earlier examination found for the warning, not "it did not come
// back", which says nothing of the loop.
func TestHopWithoutVerdictKeepsNote(t *testing.T) {
	const at = 0x401000
	m := &forkMem{group: map[int]int{10: 1, 11: 1}, mem: map[int]map[uint64]byte{1: {at: int3}}, gone: map[int]bool{}}
	e, mm, t1 := twoThreads(m)
	t1.spinNote = fixedNote("it calls access, which hermit lets run without a stop")
	mm.hop = &spinHop{t: t1, at: at, orig: 0x90, seen: map[uint64]bool{}, prevNote: t1.spinNote}
	t1.spinNote = fixedNote("it did not come back to 0x401000")
	e.endHop(mm, t1, Stop{Tid: 10, Kind: StopSignal, Sig: 19})
	if got := t1.note(); got != "it calls access, which hermit lets run without a stop" {
		t.Errorf("note after a look without verdict: %q; want the earlier examination's", got)
	}
}
