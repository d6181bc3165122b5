package debuginfo

import (
	"errors"
	"fmt"
)

// This file evaluates the DWARF expressions CFI uses: the PLT's
// DW_CFA_def_cfa_expression and glibc's signal trampoline, whose rules read
// the saved registers from the ucontext on the stack.

// Caps on expression evaluation.
const (
	maxExprOps   = 1024
	maxExprStack = 64
)

var errExpr = errors.New("bad DWARF expression")

// evalExpr runs expr with initial on the stack and returns the top of the
// stack. Register operands read regs; DW_OP_deref reads mem.
func evalExpr(expr []byte, regs *regset, mem Mem, initial []uint64) (uint64, error) {
	st := append(make([]uint64, 0, 8), initial...)
	c := &cursor{b: expr}
	pop := func() (uint64, bool) {
		if len(st) == 0 {
			return 0, false
		}
		v := st[len(st)-1]
		st = st[:len(st)-1]
		return v, true
	}
	push := func(v uint64) bool {
		if len(st) >= maxExprStack {
			return false
		}
		st = append(st, v)
		return true
	}
	reg := func(n uint64) (uint64, error) {
		if n >= numRegs || !regs.known[n] {
			return 0, fmt.Errorf("%w: register %d unknown", errExpr, n)
		}
		return regs.val[n], nil
	}
	for n := 0; c.off < len(c.b); n++ {
		if n >= maxExprOps {
			return 0, fmt.Errorf("%w: more than %d operations", errExpr, maxExprOps)
		}
		op := c.u8()
		ok := true
		switch {
		case op >= 0x30 && op <= 0x4f: // DW_OP_lit0..31
			ok = push(uint64(op - 0x30))
		case op >= 0x70 && op <= 0x8f: // DW_OP_breg0..31
			off := c.sleb()
			v, err := reg(uint64(op - 0x70))
			if err != nil {
				return 0, err
			}
			ok = push(v + uint64(off))
		case op == 0x92: // DW_OP_bregx
			r := c.uleb()
			off := c.sleb()
			v, err := reg(r)
			if err != nil {
				return 0, err
			}
			ok = push(v + uint64(off))
		case op == 0x03: // DW_OP_addr
			ok = push(c.u64())
		case op == 0x08: // const1u
			ok = push(uint64(c.u8()))
		case op == 0x09: // const1s
			ok = push(uint64(int64(int8(c.u8()))))
		case op == 0x0a:
			ok = push(c.u16())
		case op == 0x0b:
			ok = push(uint64(int64(int16(c.u16()))))
		case op == 0x0c:
			ok = push(c.u32())
		case op == 0x0d:
			ok = push(uint64(int64(int32(c.u32()))))
		case op == 0x0e, op == 0x0f:
			ok = push(c.u64())
		case op == 0x10: // constu
			ok = push(c.uleb())
		case op == 0x11: // consts
			ok = push(uint64(c.sleb()))
		case op == 0x12: // dup
			if len(st) == 0 {
				return 0, fmt.Errorf("%w: dup on empty stack", errExpr)
			}
			ok = push(st[len(st)-1])
		case op == 0x13: // drop
			_, ok = pop()
		case op == 0x14: // over
			if len(st) < 2 {
				return 0, fmt.Errorf("%w: over", errExpr)
			}
			ok = push(st[len(st)-2])
		case op == 0x15: // pick
			i := int(c.u8())
			if i >= len(st) {
				return 0, fmt.Errorf("%w: pick %d", errExpr, i)
			}
			ok = push(st[len(st)-1-i])
		case op == 0x16: // swap
			if len(st) < 2 {
				return 0, fmt.Errorf("%w: swap", errExpr)
			}
			st[len(st)-1], st[len(st)-2] = st[len(st)-2], st[len(st)-1]
		case op == 0x17: // rot
			if len(st) < 3 {
				return 0, fmt.Errorf("%w: rot", errExpr)
			}
			n := len(st)
			st[n-1], st[n-2], st[n-3] = st[n-2], st[n-3], st[n-1]
		case op == 0x06 || op == 0x94: // deref, deref_size
			size := 8
			if op == 0x94 {
				size = int(c.u8())
			}
			a, k := pop()
			if !k || size < 1 || size > 8 {
				return 0, fmt.Errorf("%w: deref", errExpr)
			}
			b, err := readFull(mem, a, size)
			if err != nil {
				return 0, fmt.Errorf("deref %#x: %w", a, err)
			}
			ok = push(unsigned(b, int64(size)))
		case op == 0x23: // plus_uconst
			a, k := pop()
			ok = k && push(a+c.uleb())
		case op == 0x19 || op == 0x1f || op == 0x20: // abs, neg, not
			a, k := pop()
			if !k {
				return 0, fmt.Errorf("%w: unary on empty stack", errExpr)
			}
			switch op {
			case 0x19:
				if int64(a) < 0 {
					a = -a
				}
			case 0x1f:
				a = -a
			case 0x20:
				a = ^a
			}
			ok = push(a)
		case (op >= 0x1a && op <= 0x1e) || (op >= 0x21 && op <= 0x27 && op != 0x23) || (op >= 0x29 && op <= 0x2e):
			b, k1 := pop()
			a, k2 := pop()
			if !k1 || !k2 {
				return 0, fmt.Errorf("%w: binary op %#x needs two operands", errExpr, op)
			}
			v, err := binop(op, a, b)
			if err != nil {
				return 0, err
			}
			ok = push(v)
		case op == 0x2f: // skip
			off := int16(c.u16())
			if err := jump(c, off); err != nil {
				return 0, err
			}
		case op == 0x28: // bra
			off := int16(c.u16())
			v, k := pop()
			if !k {
				return 0, fmt.Errorf("%w: bra on empty stack", errExpr)
			}
			if v != 0 {
				if err := jump(c, off); err != nil {
					return 0, err
				}
			}
		case op == 0x96: // nop
		default:
			return 0, fmt.Errorf("%w: unsupported opcode %#x", errExpr, op)
		}
		if !ok {
			return 0, fmt.Errorf("%w: stack under- or overflow at %#x", errExpr, op)
		}
		if c.bad {
			return 0, fmt.Errorf("%w: truncated", errExpr)
		}
	}
	if len(st) == 0 {
		return 0, fmt.Errorf("%w: empty result", errExpr)
	}
	return st[len(st)-1], nil
}

// jump moves the cursor by off bytes, staying inside the expression.
func jump(c *cursor, off int16) error {
	to := c.off + int(off)
	if to < 0 || to > len(c.b) {
		return fmt.Errorf("%w: branch out of range", errExpr)
	}
	c.off = to
	return nil
}

// binop applies a binary DW_OP to a (deeper) and b (top).
func binop(op byte, a, b uint64) (uint64, error) {
	bool2 := func(x bool) uint64 {
		if x {
			return 1
		}
		return 0
	}
	switch op {
	case 0x1a:
		return a & b, nil
	case 0x1b, 0x1d:
		if b == 0 {
			return 0, fmt.Errorf("%w: division by zero", errExpr)
		}
		if op == 0x1b {
			if int64(b) == -1 {
				return -a, nil
			}
			return uint64(int64(a) / int64(b)), nil
		}
		return a % b, nil
	case 0x1c:
		return a - b, nil
	case 0x1e:
		return a * b, nil
	case 0x21:
		return a | b, nil
	case 0x22:
		return a + b, nil
	case 0x24:
		if b >= 64 {
			return 0, nil
		}
		return a << b, nil
	case 0x25:
		if b >= 64 {
			return 0, nil
		}
		return a >> b, nil
	case 0x26:
		if b >= 64 {
			b = 63
		}
		return uint64(int64(a) >> b), nil
	case 0x27:
		return a ^ b, nil
	case 0x29:
		return bool2(a == b), nil
	case 0x2a:
		return bool2(int64(a) >= int64(b)), nil
	case 0x2b:
		return bool2(int64(a) > int64(b)), nil
	case 0x2c:
		return bool2(int64(a) <= int64(b)), nil
	case 0x2d:
		return bool2(int64(a) < int64(b)), nil
	case 0x2e:
		return bool2(a != b), nil
	}
	return 0, fmt.Errorf("%w: opcode %#x", errExpr, op)
}
