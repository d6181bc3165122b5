package gdbstub

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// TestConditionEval: agent expressions as gdb compiles breakpoint
// conditions evaluate on the stopped thread's registers and the process's
// memory; a malformed one is an error, never a panic or a loop.
func TestConditionEval(t *testing.T) {
	regs := &Registers{Rax: 5, Rdi: ^uint64(0) - 2 /* -3 */, Rbp: 0x401000, Eflags: 0x246}
	mem := newFakeTarget().ReadMemory // 0x401000: 55 48 89 e5 '#' '$' '}' '*' 90 c3
	for _, c := range []struct {
		name string
		code []byte
		want uint64
		err  string
	}{
		// gdb's "rax == 5": reg 0, const8 5, equal, end.
		{"rax == 5", []byte{axReg, 0, 0, axConst8, 5, axEqual, axEnd}, 1, ""},
		{"rax == 6", []byte{axReg, 0, 0, axConst8, 6, axEqual, axEnd}, 0, ""},
		// (int)rdi < 0: the low 32 bits sign-extended.
		{"(int)rdi < 0", []byte{axReg, 0, 5, axExt, 32, axConst8, 0, axLessSigned, axEnd}, 1, ""},
		{"(unsigned)rdi < 0", []byte{axReg, 0, 5, axZeroExt, 32, axConst8, 0, axLessSigned, axEnd}, 0, ""},
		// *(char *)(rbp + 4) == '#'
		{"memory", []byte{axReg, 0, 6, axConst8, 4, axAdd, axRef8, axConst8, '#', axEqual, axEnd}, 1, ""},
		{"ref32", []byte{axReg, 0, 6, axRef32, axEnd}, 0xe5894855, ""},
		{"ref64", []byte{axReg, 0, 6, axRef64, axEnd}, 0x2a7d2423e5894855, ""},
		// rax > 3 && rax < 10, as gdb emits &&: if_goto over a const 0.
		{"and", []byte{
			axConst8, 3, axReg, 0, 0, axLessSigned, // 0..5: 3 < rax
			axIfGoto, 0, 12, // 6..8
			axConst8, 0, axEnd, // 9..11
			axReg, 0, 0, axConst8, 10, axLessSigned, axEnd, // 12..18
		}, 1, ""},
		{"goto", []byte{axGoto, 0, 5, axConst8, 9, axConst8, 7, axEnd}, 7, ""},
		{"arith", []byte{axConst8, 7, axConst8, 3, axSub, axConst8, 6, axMul, axConst8, 5, axRemUnsigned,
			axConst8, 1, axLsh, axLogNot, axLogNot, axBitNot, axEnd}, ^uint64(1), ""},
		{"signed division", []byte{axReg, 0, 5, axConst8, 3, axDivSigned, axEnd}, ^uint64(0), ""},
		{"stack ops", []byte{axConst8, 1, axConst8, 2, axConst8, 3, axRot, axSwap, axPick, 1, axBitOr,
			axConst16, 0x00, 0x10, axBitXor, axDup, axPop, axEnd}, 0x10 ^ (1 | 2), ""},
		{"const64", []byte{axConst64, 1, 2, 3, 4, 5, 6, 7, 8, axEnd}, 0x0102030405060708, ""},
		{"eflags", []byte{axReg, 0, 17, axEnd}, 0x246, ""},
		{"unmapped", []byte{axConst32, 0, 0, 0x10, 0, axRef8, axEnd}, 0, "reading 1 bytes at 0x1000"},
		{"division by zero", []byte{axConst8, 1, axConst8, 0, axDivUnsigned, axEnd}, 0, "division by zero"},
		{"underflow", []byte{axAdd, axEnd}, 0, "stack underflow"},
		{"no end", []byte{axConst8, 1}, 0, "no end opcode"},
		{"truncated operand", []byte{axConst32, 1, 2}, 0, "runs past the end"},
		{"loop", []byte{axGoto, 0, 0}, 0, "too long"},
		{"float", []byte{0x01, axEnd}, 0, "opcode 0x01 is not supported"},
		{"xmm0", []byte{axReg, 0, 40, axEnd}, 0, "register 40 cannot be read"},
	} {
		got, err := condition(c.code).eval(regs, mem)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: got %#x, %v; want an error with %q", c.name, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: got %#x, %v; want %#x", c.name, got, err, c.want)
		}
	}
}

// cond returns the ";X" form of an agent expression.
func cond(code ...byte) string {
	return fmt.Sprintf(";X%x,%s", len(code), hex.EncodeToString(code))
}

// TestConditionalBreakpoints: a breakpoint gdb gave conditions stops a
// continue, forwards or backwards, only where one of them holds (or
// cannot be evaluated, with a line saying why); the target runs on past
// the others without a stop reply. Conditions are replaced by a new Z
// and gone with z; watchpoints take none, and a malformed one is refused.
func TestConditionalBreakpoints(t *testing.T) {
	rt := newReverseTarget()
	bp := func(tid int) Stop { return Stop{Kind: StopBreakpoint, Tid: tid, Addr: 0x401000} }
	// Thread 0x1234 has rax 0, thread 0x1240 rax 1.
	raxIs1 := cond(axReg, 0, 0, axConst8, 1, axEqual, axEnd)
	raxIs7 := cond(axReg, 0, 0, axConst8, 7, axEqual, axEnd)
	rt.stops = []Stop{bp(0x1234), bp(0x1234), bp(0x1240), bp(0x1234), {Kind: StopExited}}
	rt.back = []Stop{bp(0x1234), bp(0x1240)}
	c := startServeTarget(t, rt, Options{})
	if got := c.ask("qSupported:swbreak+"); !strings.Contains(got, ";ConditionalBreakpoints+") {
		t.Errorf("qSupported: got %q, want ConditionalBreakpoints+", got)
	}
	c.expect("Z0,401000,1"+raxIs1, "OK")
	c.expect("c", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:1010400000000000;thread:1240;swbreak:;")
	c.expect("bc", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:1010400000000000;thread:1240;swbreak:;")
	// Two conditions (two breakpoints at one place): either stops.
	c.expect("Z0,401000,1"+raxIs7+cond(axReg, 0, 0, axConst8, 0, axEqual, axEnd), "OK")
	c.expect("c", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:0010400000000000;thread:1234;swbreak:;")
	rt.mu.Lock()
	want := "reverse-continue,reverse-continue" // the first going back was passed by
	if got := strings.Join(filterCalls(rt.calls, "reverse"), ","); got != want {
		t.Errorf("reverse calls %q, want %q", got, want)
	}
	if n := len(filterCalls(rt.calls, "continue")); n != 4 {
		t.Errorf("%d continues, want 4 (two hits passed by)", n)
	}
	rt.mu.Unlock()

	// Without conditions again, and after z, every hit stops.
	rt.stops = []Stop{bp(0x1234), bp(0x1234)}
	c.expect("Z0,401000,1", "OK")
	c.expect("c", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:0010400000000000;thread:1234;swbreak:;")
	c.expect("Z0,401000,1"+raxIs7, "OK")
	c.expect("z0,401000,1", "OK")
	c.expect("c", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:0010400000000000;thread:1234;swbreak:;")

	// A condition that cannot be evaluated stops, and says why.
	rt.stops = []Stop{bp(0x1234)}
	c.expect("Z0,401000,1"+cond(axConst8, 8, axRef8, axEnd), "OK")
	c.send("c")
	if got := c.recv(); !strings.HasPrefix(got, "O") || !strings.Contains(hexText(t, got[1:]), "could not be evaluated (reading 1 bytes at 0x8") {
		t.Errorf("console line: got %q", got)
	}
	if got := c.recv(); !strings.HasSuffix(got, "thread:1234;swbreak:;") {
		t.Errorf("stop: got %q, want the breakpoint's", got)
	}

	c.expect("Z0,401000,1;X3,2627", "E01")      // 3 bytes said, 2 given
	c.expect("Z0,401000,1;cmds:0,X1,27", "E01") // commands: not offered
	c.expect("Z2,404000,4"+raxIs1, "E01")       // a watchpoint's condition is gdb's
}

// filterCalls returns the calls that start with prefix.
func filterCalls(calls []string, prefix string) []string {
	var out []string
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

func hexText(t *testing.T, s string) string {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return string(b)
}

// keepTarget is a reverseTarget that searches backwards under a keep
// (KeepReverser): it goes through back, showing each stop (its thread's
// rax is the stop's position in back), and lands at the first kept.
type keepTarget struct {
	*reverseTarget
	asked int
}

func (k *keepTarget) ReverseContinueWhere(keep func(Stop) bool) (Stop, error) {
	k.call("reverse-continue-where")
	for len(k.back) > 0 {
		st := k.back[0]
		k.regs[st.Tid].Rax = uint64(len(k.back))
		k.asked++
		if keep == nil || keep(st) {
			return k.backStop()
		}
		k.back = k.back[1:]
	}
	return k.backStop()
}

// TestConditionsInOneSearch: going backwards, a target that can search
// under a predicate is asked once, and the stub's conditions decide, at
// each hit the search makes, where it lands; without conditions it goes
// back as any Reverser.
func TestConditionsInOneSearch(t *testing.T) {
	kt := &keepTarget{reverseTarget: newReverseTarget()}
	bp := Stop{Kind: StopBreakpoint, Tid: 0x1234, Addr: 0x401000}
	kt.back = []Stop{bp, bp, bp, bp, bp} // rax 5, 4, 3, 2, 1
	c := startServeTarget(t, kt, Options{})
	c.expect("Z0,401000,1"+cond(axReg, 0, 0, axConst8, 2, axEqual, axEnd), "OK")
	if got := c.ask("bc"); !strings.HasSuffix(got, "thread:1234;swbreak:;") {
		t.Errorf("bc: got %q, want the breakpoint", got)
	}
	kt.mu.Lock()
	if kt.asked != 4 || len(kt.back) != 1 || strings.Join(kt.calls, ",") != "set 0 0x401000 1,reverse-continue-where" {
		t.Errorf("the search asked about %d stops, %d left, calls %q; want 4 (rax 5 to 2) in one search, 1 left", kt.asked, len(kt.back), kt.calls)
	}
	kt.mu.Unlock()
	c.expect("z0,401000,1", "OK")
	c.expect("bc", "T0506:1000fe7f00000000;07:0000fe7f00000000;10:0010400000000000;thread:1234;swbreak:;")
	kt.mu.Lock()
	defer kt.mu.Unlock()
	if got := kt.calls[len(kt.calls)-1]; got != "reverse-continue" {
		t.Errorf("without conditions: last call %q, want a plain reverse-continue", got)
	}
}
