package detcore

import (
	"reflect"
	"testing"

	"github.com/hermitdbg/hermit/detcore/abi"
)

func TestAccesses(t *testing.T) {
	r := abi.Regs{Rip: 0x1000, Rsp: 0x7000, Rbp: 0x7100, Rax: 0x2000, Rbx: 3, FsBase: 0x9000}
	for _, c := range []struct {
		name  string
		code  []byte
		want  []memRange
		known bool
	}{
		// mov eax, [rip+0x10]: the address is after the instruction.
		{"rip relative load", []byte{0x8b, 0x05, 0x10, 0x00, 0x00, 0x00}, []memRange{{0x1000 + 6 + 0x10, 4}}, true},
		// mov [rsp-0x1000], eax and mov eax, [rbp-0x1000]: 32-bit
		// displacements are signed (a JVM bangs its stack so).
		{"negative disp32 with sib", []byte{0x89, 0x84, 0x24, 0x00, 0xf0, 0xff, 0xff}, []memRange{{0x7000 - 0x1000, 4}}, true},
		{"negative disp32", []byte{0x8b, 0x85, 0x00, 0xf0, 0xff, 0xff}, []memRange{{0x7100 - 0x1000, 4}}, true},
		// mov eax, [rip-0x1000]
		{"rip relative, before the code", []byte{0x8b, 0x05, 0x00, 0xf0, 0xff, 0xff}, []memRange{{0x1000 + 6 - 0x1000, 4}}, true},
		// cmp byte [rax+rbx*4+8], 0
		{"base index scale", []byte{0x80, 0x7c, 0x98, 0x08, 0x00}, []memRange{{0x2000 + 12 + 8, 1}}, true},
		// mov rax, fs:[0x28]
		{"fs segment", []byte{0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00}, []memRange{{0x9000 + 0x28, 8}}, true},
		// lock xchg [rax], ecx
		{"xchg", []byte{0xf0, 0x87, 0x08}, []memRange{{0x2000, 4}}, true},
		// lea rcx, [rax+8]: an address, no access.
		{"lea", []byte{0x48, 0x8d, 0x48, 0x08}, nil, true},
		{"pause", []byte{0xf3, 0x90}, nil, true},
		{"jne", []byte{0x75, 0xf0}, nil, true},
		{"push", []byte{0x55}, []memRange{{0x7000 - 8, 8}}, true},
		{"pop", []byte{0x5d}, []memRange{{0x7000, 8}}, true},
		{"ret", []byte{0xc3}, []memRange{{0x7000, 8}}, true},
		{"leave", []byte{0xc9}, []memRange{{0x7100, 8}}, true},
		// rep stosb touches [rdi..rdi+rcx): not modelled.
		{"rep stosb", []byte{0xf3, 0xaa}, nil, false},
		// cpuid and rdtsc return what the registers compared do not hold.
		{"cpuid", []byte{0x0f, 0xa2}, nil, false},
		{"rdtsc", []byte{0x0f, 0x31}, nil, false},
		{"undecodable", []byte{0x06}, nil, false}, // push es: invalid in 64-bit mode
	} {
		t.Run(c.name, func(t *testing.T) {
			_, acc, known := accesses(c.code, &r)
			if known != c.known || !reflect.DeepEqual(acc, c.want) {
				t.Errorf("accesses(% x) = %v, %v; want %v, %v", c.code, acc, known, c.want, c.known)
			}
		})
	}
}

func TestInsnEnd(t *testing.T) {
	r := abi.Regs{}
	for _, c := range []struct {
		code []byte
		want bool
	}{
		{[]byte{0x0f, 0x05}, true},  // syscall
		{[]byte{0xcd, 0x80}, true},  // int 0x80
		{[]byte{0x0f, 0x0b}, true},  // ud2
		{[]byte{0xf4}, true},        // hlt
		{[]byte{0x85, 0xc0}, false}, // test eax, eax
	} {
		inst, _, _ := accesses(c.code, &r)
		if got := insnEnd(inst.Op); got != c.want {
			t.Errorf("insnEnd(% x: %v) = %v, want %v", c.code, inst.Op, got, c.want)
		}
	}
}

// TestSteppableCalls: getpid and gettid are stepped over as instructions
// that touch no memory; any other syscall ends an examination.
func TestSteppableCalls(t *testing.T) {
	for _, c := range []struct {
		nr   uint64
		want bool
	}{{abi.SYS_GETPID, true}, {abi.SYS_GETTID, true}, {abi.SYS_GETPPID, false}, {abi.SYS_MMAP, false}, {abi.SYS_WRITE, false}} {
		r := abi.Regs{Rax: c.nr}
		inst, acc, known := accesses([]byte{0x0f, 0x05}, &r)
		if got := steppableCall(&inst, &r); got != c.want || known != c.want || acc != nil {
			t.Errorf("syscall %d: steppable %v, known %v, accesses %v; want %v, %v, none", c.nr, got, known, acc, c.want, c.want)
		}
	}
}

// obs builds an observation at rip with rax, touching one byte whose
// value goes from before to after.
func obs(rip, rax uint64, before, after byte) spinObs {
	o := spinObs{regs: abi.Regs{Rip: rip, Rax: rax}, ext: []byte{1, 2}, known: true,
		acc: []memRange{{0x5000, 1}}, before: []byte{before}, after: []byte{after}}
	o.hash = stateHash(&o.regs, o.ext)
	return o
}

func TestCycles(t *testing.T) {
	// The loop: 0x30 load, 0x34 test, 0x36 jump back; entered at 0x34.
	seq := []spinObs{obs(0x34, 7, 0, 0), obs(0x36, 0, 0, 0), obs(0x30, 0, 0, 0), obs(0x34, 0, 0, 0), obs(0x36, 0, 0, 0)}
	var got []spinObs
	seen := map[uint64][]int{}
	start := -1
	for k := range seq {
		if start = cycleStart(got, seen, &seq[k]); start >= 0 {
			break
		}
		got = append(got, seq[k])
		seen[seq[k].hash] = append(seen[seq[k].hash], k)
	}
	// 0x36 with rax 0 comes back first: the state at 0x34 on entry had
	// another rax, so it is not part of the cycle.
	if start != 1 || len(got) != 4 {
		t.Fatalf("cycle starts at %d after %d states; want 1 after 4", start, len(got))
	}
	cycle := got[start:]
	if !pureCycle(cycle) {
		t.Errorf("a loop that reads and writes nothing changing is not pure")
	}
	if c := canonical(cycle); cycle[c].regs.Rip != 0x30 {
		t.Errorf("canonical point at %#x, want the lowest address 0x30", cycle[c].regs.Rip)
	}
	// The same loop entered elsewhere has the same canonical state.
	rot := []spinObs{cycle[2], cycle[0], cycle[1]}
	if a, b := cycle[canonical(cycle)], rot[canonical(rot)]; !sameState(&a, &b) {
		t.Errorf("canonical state depends on where the cycle was entered")
	}
	if rs := readSet(cycle); !reflect.DeepEqual(rs, []memRange{{0x5000, 1}}) {
		t.Errorf("readSet = %v, want the one byte", rs)
	}

	// A cycle that changes a byte it touches (n++ in memory) is no spin.
	writes := []spinObs{obs(0x30, 0, 4, 5), obs(0x34, 0, 0, 0)}
	if pureCycle(writes) {
		t.Errorf("a loop that changes memory is pure")
	}
	// Nor one through an instruction hermit does not model.
	if restoringCycle(writes) {
		t.Errorf("a loop that leaves memory changed puts it back")
	}
	// A cycle that takes a lock (0 -> 1) and lets it go (1 -> 0) writes
	// memory but puts it back: the same at every round's start.
	lock := []spinObs{obs(0x30, 0, 0, 1), obs(0x34, 0, 1, 1), obs(0x38, 0, 1, 0)}
	if pureCycle(lock) || !restoringCycle(lock) {
		t.Errorf("lock and unlock: pure %v, restoring %v; want false, true", pureCycle(lock), restoringCycle(lock))
	}
	unknown := []spinObs{obs(0x30, 0, 0, 0), obs(0x34, 0, 0, 0)}
	unknown[1].known = false
	if pureCycle(unknown) || restoringCycle(unknown) {
		t.Errorf("a loop through an unmodelled instruction is pure or restoring")
	}
	// Vector registers count: the same general registers with another
	// xmm0 are another state.
	a, b := obs(0x30, 0, 0, 0), obs(0x30, 0, 0, 0)
	b.ext = []byte{1, 3}
	b.hash = stateHash(&b.regs, b.ext)
	if sameState(&a, &b) {
		t.Errorf("states that differ in vector registers compare equal")
	}
}

// TestUnrestoredRounds: a state repeating early, with another return
// address on the stack, leaves its cycle within a round; a loop that
// counts in memory repeats its registers for a whole round, which says
// the examination may give up.
func TestUnrestoredRounds(t *testing.T) {
	var u unrestored
	// A round of 10 whose registers come back after 4 steps (at step 4,
	// repeating step 0) and follow the earlier ones for 3 more.
	for k := 4; k < 7; k++ {
		u.add(k-4, k)
	}
	if u.full {
		t.Fatalf("3 steps of a period of 4 make a whole round")
	}
	// The real round closes at 10, and the one after breaks off.
	u.add(0, 10)
	u.add(1, 11)
	if u.full {
		t.Fatalf("a cycle that broke off after 2 of its 10 steps made a whole round")
	}
	// n++ in memory, a round of 3: each step repeats the one 3 before.
	var c unrestored
	for k := 3; k < 6; k++ {
		c.add(k-3, k)
	}
	if !c.full {
		t.Errorf("3 steps of a period of 3 do not make a whole round")
	}
}
