package gdbstub

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Breakpoint conditions evaluated in the stub (ConditionalBreakpoints+).
// gdb compiles a breakpoint's condition to an agent expression (gdb's
// manual, "Agent Expressions") and sends it with the Z0 or Z1 packet
// (";X<len>,<bytes>", one per condition of the breakpoints at the
// address). A hit whose conditions are all false is passed by here, in
// the direction the command went, without the round trips gdb makes to
// evaluate it and to step off the breakpoint (some ten packets, and
// going backwards a step back that replays the stretch before it).

// A condition is one compiled agent expression.
type condition []byte

// Agent expression opcodes (gdb's ax.def) that a condition may use.
const (
	axAdd         = 0x02
	axSub         = 0x03
	axMul         = 0x04
	axDivSigned   = 0x05
	axDivUnsigned = 0x06
	axRemSigned   = 0x07
	axRemUnsigned = 0x08
	axLsh         = 0x09
	axRshSigned   = 0x0a
	axRshUnsigned = 0x0b
	axLogNot      = 0x0e
	axBitAnd      = 0x0f
	axBitOr       = 0x10
	axBitXor      = 0x11
	axBitNot      = 0x12
	axEqual       = 0x13
	axLessSigned  = 0x14
	axLessUnsign  = 0x15
	axExt         = 0x16
	axRef8        = 0x17
	axRef16       = 0x18
	axRef32       = 0x19
	axRef64       = 0x1a
	axIfGoto      = 0x20
	axGoto        = 0x21
	axConst8      = 0x22
	axConst16     = 0x23
	axConst32     = 0x24
	axConst64     = 0x25
	axReg         = 0x26
	axEnd         = 0x27
	axDup         = 0x28
	axPop         = 0x29
	axZeroExt     = 0x2a
	axSwap        = 0x2b
	axPick        = 0x32
	axRot         = 0x33
)

// Limits on one evaluation: a condition is a few dozen bytes; these only
// stop a malformed one.
const (
	axMaxStack = 1024
	axMaxSteps = 1 << 16
)

// parseConditions parses the ";X<len>,<hex bytes>" conditions that follow
// a Z packet's type,addr,kind. Commands (";cmds:"), which the stub does
// not offer to run, are not accepted.
func parseConditions(s string) ([]condition, error) {
	var conds []condition
	for _, f := range strings.Split(s, ";") {
		if f == "" {
			continue
		}
		n, b, ok := strings.Cut(strings.TrimPrefix(f, "X"), ",")
		if !ok || f[0] != 'X' {
			return nil, fmt.Errorf("%q is no condition", f)
		}
		size, err := strconv.ParseUint(n, 16, 16)
		if err != nil {
			return nil, fmt.Errorf("condition length %q: %v", n, err)
		}
		code, err := hex.DecodeString(b)
		if err != nil || uint64(len(code)) != size {
			return nil, fmt.Errorf("condition of %d bytes: %q", size, b)
		}
		conds = append(conds, condition(code))
	}
	return conds, nil
}

// memReader reads the debugged process's memory.
type memReader func(addr uint64, b []byte) (int, error)

// eval runs the condition on the registers of the thread that hit the
// breakpoint and the process's memory, and returns the value it ends
// with (true unless 0).
func (c condition) eval(regs *Registers, mem memReader) (uint64, error) {
	var st []uint64
	pop := func() (uint64, error) {
		if len(st) == 0 {
			return 0, errors.New("stack underflow")
		}
		v := st[len(st)-1]
		st = st[:len(st)-1]
		return v, nil
	}
	operand := func(pc, n int) (uint64, error) {
		if pc+n > len(c) {
			return 0, fmt.Errorf("operand of the opcode at %d runs past the end", pc-1)
		}
		var v uint64
		for _, x := range c[pc : pc+n] {
			v = v<<8 | uint64(x) // big-endian
		}
		return v, nil
	}
	for pc, steps := 0, 0; ; steps++ {
		if pc >= len(c) {
			return 0, errors.New("no end opcode")
		}
		if steps >= axMaxSteps || len(st) > axMaxStack {
			return 0, errors.New("too long")
		}
		op := c[pc]
		pc++
		if k, ok := binaryOps[op]; ok {
			b, err := pop()
			if err != nil {
				return 0, err
			}
			a, err := pop()
			if err != nil {
				return 0, err
			}
			v, err := k(a, b)
			if err != nil {
				return 0, err
			}
			st = append(st, v)
			continue
		}
		switch op {
		case axEnd:
			return pop()
		case axLogNot, axBitNot, axExt, axZeroExt, axRef8, axRef16, axRef32, axRef64, axDup, axPop, axIfGoto:
			a, err := pop()
			if err != nil {
				return 0, err
			}
			switch op {
			case axLogNot:
				st = append(st, b2u(a == 0))
			case axBitNot:
				st = append(st, ^a)
			case axExt, axZeroExt:
				bits, err := operand(pc, 1)
				if err != nil {
					return 0, err
				}
				pc++
				if bits > 0 && bits < 64 {
					shift := 64 - bits
					if op == axExt {
						a = uint64(int64(a<<shift) >> shift)
					} else {
						a = a << shift >> shift
					}
				}
				st = append(st, a)
			case axRef8, axRef16, axRef32, axRef64:
				size := 1 << (op - axRef8)
				var buf [8]byte
				if n, err := mem(a, buf[:size]); n < size {
					return 0, fmt.Errorf("reading %d bytes at %#x: %v", size, a, err)
				}
				st = append(st, binary.LittleEndian.Uint64(buf[:]))
			case axDup:
				st = append(st, a, a)
			case axIfGoto:
				to, err := operand(pc, 2)
				if err != nil {
					return 0, err
				}
				pc += 2
				if a != 0 {
					pc = int(to)
				}
			}
		case axGoto:
			to, err := operand(pc, 2)
			if err != nil {
				return 0, err
			}
			pc = int(to)
		case axConst8, axConst16, axConst32, axConst64:
			n := 1 << (op - axConst8)
			v, err := operand(pc, n)
			if err != nil {
				return 0, err
			}
			pc += n
			st = append(st, v)
		case axReg:
			n, err := operand(pc, 2)
			if err != nil {
				return 0, err
			}
			pc += 2
			v := appendRegValue(nil, regs, int(n))
			if len(v) == 0 || len(v) > 8 {
				return 0, fmt.Errorf("register %d cannot be read as an integer", n)
			}
			var buf [8]byte
			copy(buf[:], v)
			st = append(st, binary.LittleEndian.Uint64(buf[:]))
		case axSwap, axRot:
			if len(st) < 2 || op == axRot && len(st) < 3 {
				return 0, errors.New("stack underflow")
			}
			i := len(st)
			if op == axSwap {
				st[i-1], st[i-2] = st[i-2], st[i-1]
			} else {
				// a b c => c a b
				st[i-3], st[i-2], st[i-1] = st[i-1], st[i-3], st[i-2]
			}
		case axPick:
			n, err := operand(pc, 1)
			if err != nil {
				return 0, err
			}
			pc++
			if int(n) >= len(st) {
				return 0, errors.New("stack underflow")
			}
			st = append(st, st[len(st)-1-int(n)])
		default:
			return 0, fmt.Errorf("opcode %#02x is not supported here", op)
		}
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

var errDivZero = errors.New("division by zero")

// binaryOps are the opcodes that take a (below) and b (on top) and push
// one value.
var binaryOps = map[byte]func(a, b uint64) (uint64, error){
	axAdd: func(a, b uint64) (uint64, error) { return a + b, nil },
	axSub: func(a, b uint64) (uint64, error) { return a - b, nil },
	axMul: func(a, b uint64) (uint64, error) { return a * b, nil },
	axDivSigned: func(a, b uint64) (uint64, error) {
		if b == 0 {
			return 0, errDivZero
		}
		return uint64(int64(a) / int64(b)), nil
	},
	axDivUnsigned: func(a, b uint64) (uint64, error) {
		if b == 0 {
			return 0, errDivZero
		}
		return a / b, nil
	},
	axRemSigned: func(a, b uint64) (uint64, error) {
		if b == 0 {
			return 0, errDivZero
		}
		return uint64(int64(a) % int64(b)), nil
	},
	axRemUnsigned: func(a, b uint64) (uint64, error) {
		if b == 0 {
			return 0, errDivZero
		}
		return a % b, nil
	},
	axLsh:         func(a, b uint64) (uint64, error) { return a << b, nil },
	axRshSigned:   func(a, b uint64) (uint64, error) { return uint64(int64(a) >> b), nil },
	axRshUnsigned: func(a, b uint64) (uint64, error) { return a >> b, nil },
	axBitAnd:      func(a, b uint64) (uint64, error) { return a & b, nil },
	axBitOr:       func(a, b uint64) (uint64, error) { return a | b, nil },
	axBitXor:      func(a, b uint64) (uint64, error) { return a ^ b, nil },
	axEqual:       func(a, b uint64) (uint64, error) { return b2u(a == b), nil },
	axLessSigned:  func(a, b uint64) (uint64, error) { return b2u(int64(a) < int64(b)), nil },
	axLessUnsign:  func(a, b uint64) (uint64, error) { return b2u(a < b), nil },
}

// condKey names the breakpoints of one kind at one address.
type condKey struct {
	kind BreakKind
	addr uint64
}

// passFalse runs resume (a continue, forwards or backwards) again for as
// long as it stops at a breakpoint whose conditions are all false.
func (s *session) passFalse(resume func() (Stop, error)) (Stop, error) {
	for {
		st, err := resume()
		if err != nil || s.stops(st) {
			return st, err
		}
	}
}

// stops says whether stop st is one to report: not a breakpoint's, or
// one of its conditions holds or cannot be evaluated (with a line saying
// why).
func (s *session) stops(st Stop) bool {
	if st.Kind != StopBreakpoint {
		return true
	}
	kind := BreakSoftware
	if st.Hardware {
		kind = BreakHardware
	}
	conds := s.conds[condKey{kind, st.Addr}]
	return len(conds) == 0 || s.anyTrue(conds, st)
}

// anyTrue says whether one of conds holds for the thread that made stop
// st, or cannot be evaluated (the client is told why).
func (s *session) anyTrue(conds []condition, st Stop) bool {
	regs, err := s.t.Registers(st.Tid)
	if err != nil {
		s.console(fmt.Sprintf("hermit: breakpoint condition at %#x: registers of thread %d: %v\n", st.Addr, st.Tid, err))
		return true
	}
	for _, c := range conds {
		v, err := c.eval(regs, s.t.ReadMemory)
		if err != nil {
			s.console(fmt.Sprintf("hermit: breakpoint condition at %#x could not be evaluated (%v): stopped\n", st.Addr, err))
			return true
		}
		if v != 0 {
			return true
		}
	}
	return false
}
