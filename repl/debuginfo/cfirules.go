package debuginfo

import (
	"errors"
	"fmt"
)

// ruleKind says how a register of the caller is recovered.
type ruleKind uint8

const (
	ruleUnset     ruleKind = iota // no rule: the ABI default applies
	ruleUndefined                 // not recoverable (for the RA: outermost frame)
	ruleSame                      // unchanged
	ruleOffset                    // saved at CFA+off
	ruleValOffset                 // the value is CFA+off
	ruleRegister                  // in register reg
	ruleExpr                      // saved at the address expr computes
	ruleValExpr                   // the value expr computes
)

// rule is one register's unwind rule.
type rule struct {
	kind ruleKind
	off  int64
	reg  uint64
	expr []byte
}

// row is the unwind state at one PC: the CFA rule and the register rules.
type row struct {
	cfaReg  uint64
	cfaOff  int64
	cfaExpr []byte // when non-nil, the CFA is this expression's value
	regs    [numRegs]rule
}

// DW_CFA_* opcodes (DWARF 5 section 6.4.2, plus the GNU extensions).
const (
	cfaAdvanceLoc        = 0x40
	cfaOffset            = 0x80
	cfaRestore           = 0xc0
	cfaNop               = 0x00
	cfaSetLoc            = 0x01
	cfaAdvanceLoc1       = 0x02
	cfaAdvanceLoc2       = 0x03
	cfaAdvanceLoc4       = 0x04
	cfaOffsetExtended    = 0x05
	cfaRestoreExtended   = 0x06
	cfaUndefined         = 0x07
	cfaSameValue         = 0x08
	cfaRegister          = 0x09
	cfaRememberState     = 0x0a
	cfaRestoreState      = 0x0b
	cfaDefCFA            = 0x0c
	cfaDefCFARegister    = 0x0d
	cfaDefCFAOffset      = 0x0e
	cfaDefCFAExpression  = 0x0f
	cfaExpression        = 0x10
	cfaOffsetExtendedSF  = 0x11
	cfaDefCFASF          = 0x12
	cfaDefCFAOffsetSF    = 0x13
	cfaValOffset         = 0x14
	cfaValOffsetSF       = 0x15
	cfaValExpression     = 0x16
	cfaGNUArgsSize       = 0x2e
	cfaGNUNegOffsetExtSF = 0x2f
)

// rowAt computes the unwind row of f at the link-time address pc.
func rowAt(f *fde, pc uint64) (row, error) {
	var initial row
	if err := execCFI(f.cie, f.cie.initial, 0, ^uint64(0), 0, &initial, nil); err != nil {
		return row{}, fmt.Errorf("CIE: %w", err)
	}
	r := initial
	if err := execCFI(f.cie, f.insns, f.begin, pc, f.insnsAddr, &r, &initial); err != nil {
		return row{}, err
	}
	return r, nil
}

// setRule sets a register rule, ignoring registers we do not track
// (vector and other registers beyond the return-address column).
func (r *row) setRule(reg uint64, ru rule) {
	if reg < numRegs {
		r.regs[reg] = ru
	}
}

// execCFI runs CFI instructions starting at location loc, stopping before
// the first advance past pc. initial is the CIE's row for DW_CFA_restore
// (nil while running the CIE itself).
func execCFI(ci *cie, insns []byte, loc, pc, insnsAddr uint64, r *row, initial *row) error {
	c := &cursor{b: insns}
	var stack []row
	restore := func(reg uint64) {
		if reg >= numRegs {
			return
		}
		if initial != nil {
			r.regs[reg] = initial.regs[reg]
		} else {
			r.regs[reg] = rule{}
		}
	}
	advance := func(delta uint64) bool {
		next := loc + delta*ci.codeAlign
		if next > pc || next < loc {
			return false
		}
		loc = next
		return true
	}
	for n := 0; c.off < len(c.b); n++ {
		if n >= maxCFIOps {
			return fmt.Errorf("%w: more than %d instructions", errCFI, maxCFIOps)
		}
		op := c.u8()
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			if !advance(uint64(op & 0x3f)) {
				return nil
			}
			continue
		case cfaOffset:
			r.setRule(uint64(op&0x3f), rule{kind: ruleOffset, off: int64(c.uleb()) * ci.dataAlign})
			continue
		case cfaRestore:
			restore(uint64(op & 0x3f))
			continue
		}
		switch op {
		case cfaNop:
		case cfaSetLoc:
			at := insnsAddr + uint64(c.off)
			next, err := c.pointer(ci.fdeEnc, at, false)
			if err != nil {
				return err
			}
			if next > pc {
				return nil
			}
			loc = next
		case cfaAdvanceLoc1:
			if !advance(uint64(c.u8())) {
				return nil
			}
		case cfaAdvanceLoc2:
			if !advance(c.u16()) {
				return nil
			}
		case cfaAdvanceLoc4:
			if !advance(c.u32()) {
				return nil
			}
		case cfaOffsetExtended:
			reg := c.uleb()
			r.setRule(reg, rule{kind: ruleOffset, off: int64(c.uleb()) * ci.dataAlign})
		case cfaOffsetExtendedSF:
			reg := c.uleb()
			r.setRule(reg, rule{kind: ruleOffset, off: c.sleb() * ci.dataAlign})
		case cfaGNUNegOffsetExtSF:
			reg := c.uleb()
			r.setRule(reg, rule{kind: ruleOffset, off: -int64(c.uleb()) * ci.dataAlign})
		case cfaValOffset:
			reg := c.uleb()
			r.setRule(reg, rule{kind: ruleValOffset, off: int64(c.uleb()) * ci.dataAlign})
		case cfaValOffsetSF:
			reg := c.uleb()
			r.setRule(reg, rule{kind: ruleValOffset, off: c.sleb() * ci.dataAlign})
		case cfaRestoreExtended:
			restore(c.uleb())
		case cfaUndefined:
			r.setRule(c.uleb(), rule{kind: ruleUndefined})
		case cfaSameValue:
			r.setRule(c.uleb(), rule{kind: ruleSame})
		case cfaRegister:
			reg := c.uleb()
			r.setRule(reg, rule{kind: ruleRegister, reg: c.uleb()})
		case cfaRememberState:
			if len(stack) >= maxStateStack {
				return fmt.Errorf("%w: state stack deeper than %d", errCFI, maxStateStack)
			}
			stack = append(stack, *r)
		case cfaRestoreState:
			if len(stack) == 0 {
				return fmt.Errorf("%w: restore_state with an empty stack", errCFI)
			}
			*r = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
		case cfaDefCFA:
			r.cfaReg, r.cfaOff, r.cfaExpr = c.uleb(), int64(c.uleb()), nil
		case cfaDefCFASF:
			r.cfaReg, r.cfaOff, r.cfaExpr = c.uleb(), c.sleb()*ci.dataAlign, nil
		case cfaDefCFARegister:
			r.cfaReg, r.cfaExpr = c.uleb(), nil
		case cfaDefCFAOffset:
			r.cfaOff, r.cfaExpr = int64(c.uleb()), nil
		case cfaDefCFAOffsetSF:
			r.cfaOff, r.cfaExpr = c.sleb()*ci.dataAlign, nil
		case cfaDefCFAExpression:
			r.cfaExpr = c.bytes(c.uleb())
			if r.cfaExpr == nil {
				r.cfaExpr = []byte{}
			}
		case cfaExpression, cfaValExpression:
			reg := c.uleb()
			k := ruleExpr
			if op == cfaValExpression {
				k = ruleValExpr
			}
			r.setRule(reg, rule{kind: k, expr: c.bytes(c.uleb())})
		case cfaGNUArgsSize:
			c.uleb()
		default:
			return fmt.Errorf("%w: unknown DW_CFA opcode %#x", errCFI, op)
		}
		if c.bad {
			return fmt.Errorf("%w: truncated instruction %#x", errCFI, op)
		}
	}
	return nil
}

// regset is a frame's register values by DWARF number, with validity.
type regset struct {
	val   [numRegs]uint64
	known [numRegs]bool
}

func (rs *regset) set(i int, v uint64) { rs.val[i], rs.known[i] = v, true }

// mask is known as bits (Frame.Known).
func (rs *regset) mask() uint32 {
	var m uint32
	for i, k := range rs.known {
		if k {
			m |= 1 << i
		}
	}
	return m
}

// calleeSaved reports whether the SysV x86-64 ABI preserves DWARF register
// i across calls (rbx, rbp, r12–r15), so a missing rule means "same value".
func calleeSaved(i int) bool {
	return i == 3 || i == regRBP || (i >= 12 && i <= 15)
}

var errUndefinedRA = errors.New("return address undefined")

// apply computes the caller's registers from the callee's regs using r.
// It returns the CFA. The caller's return-address column holds its PC.
func (r *row) apply(regs *regset, mem Mem) (regset, uint64, error) {
	var cfa uint64
	if r.cfaExpr != nil {
		v, err := evalExpr(r.cfaExpr, regs, mem, nil)
		if err != nil {
			return regset{}, 0, fmt.Errorf("CFA expression: %w", err)
		}
		cfa = v
	} else {
		if r.cfaReg >= numRegs || !regs.known[r.cfaReg] {
			return regset{}, 0, fmt.Errorf("CFA register %d unknown", r.cfaReg)
		}
		cfa = regs.val[r.cfaReg] + uint64(r.cfaOff)
	}
	var out regset
	for i := 0; i < numRegs; i++ {
		ru := r.regs[i]
		switch ru.kind {
		case ruleUnset:
			if i == regRSP {
				out.set(i, cfa)
			} else if calleeSaved(i) && regs.known[i] {
				out.set(i, regs.val[i])
			}
		case ruleUndefined:
		case ruleSame:
			if regs.known[i] {
				out.set(i, regs.val[i])
			}
		case ruleOffset:
			v, err := readU64(mem, cfa+uint64(ru.off))
			if err != nil {
				return regset{}, cfa, fmt.Errorf("register %d saved at %#x: %w", i, cfa+uint64(ru.off), err)
			}
			out.set(i, v)
		case ruleValOffset:
			out.set(i, cfa+uint64(ru.off))
		case ruleRegister:
			if ru.reg < numRegs && regs.known[ru.reg] {
				out.set(i, regs.val[ru.reg])
			}
		case ruleExpr, ruleValExpr:
			v, err := evalExpr(ru.expr, regs, mem, []uint64{cfa})
			if err != nil {
				return regset{}, cfa, fmt.Errorf("register %d expression: %w", i, err)
			}
			if ru.kind == ruleExpr {
				if v, err = readU64(mem, v); err != nil {
					return regset{}, cfa, fmt.Errorf("register %d: %w", i, err)
				}
			}
			out.set(i, v)
		}
	}
	if !out.known[regRA] {
		return out, cfa, errUndefinedRA
	}
	return out, cfa, nil
}

// readU64 reads a little-endian word.
func readU64(mem Mem, addr uint64) (uint64, error) {
	b, err := readFull(mem, addr, 8)
	if err != nil {
		return 0, err
	}
	return le.Uint64(b), nil
}
