package debuginfo

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"sort"
)

// Locals: the parameters and variables of the function a frame is in,
// from its DWARF, at the locations unoptimized code gives them (on the
// frame: DW_OP_fbreg from a frame base of DW_OP_call_frame_cfa or a
// register, or at a fixed address for a static). The innermost lexical
// block that holds the PC wins. A variable with a location list (optimized
// code) is not read: its error says so.

// Scope is a frame to look names up in: its PC, its canonical frame
// address, and its registers (indexed by DWARF number, as Regs.All).
type Scope struct {
	PC, CFA uint64
	Regs    [17]uint64
	// Outer says the frame is a caller's: of its registers only rbp,
	// rsp and the callee-saved ones are its own, those in Known (bit i
	// for Regs[i]; 0: rbp and rsp).
	Outer bool
	Known uint32
}

// ErrOptimized says a variable's location is a location list, which this
// package does not read.
var ErrOptimized = errors.New("its location changes as the function runs (optimized code): hermit's REPL cannot follow it; gdb can (hermit replay --gdb)")

// subprog is a function's address range and its DIE.
type subprog struct {
	lo, hi uint64
	die    dwarf.Offset
}

// Local op codes.
const (
	opFbreg        = 0x91
	opCallFrameCFA = 0x9c
	opReg0         = 0x50
	opReg31        = 0x6f
)

// Local finds name among the locals of the function at sc.PC; the error
// wraps ErrNotFound when it has none of that name.
func (s *Space) Local(name string, sc Scope, mem Mem) (Var, error) {
	if m, _, ok := s.moduleAt(sc.PC, mem); ok {
		m.init()
		if v, ok, err := m.local(name, sc, mem); ok || err != nil {
			return v, err
		}
	}
	return Var{}, fmt.Errorf("%w %q in the current function", ErrNotFound, name)
}

// local finds name among the locals at sc.PC in m.
func (m *module) local(name string, sc Scope, mem Mem) (Var, bool, error) {
	if m.dw == nil {
		return Var{}, false, nil
	}
	pc := sc.PC - m.bias
	fn := m.subprogAt(pc)
	if fn == nil {
		return Var{}, false, nil
	}
	var found *dwarf.Entry
	var frameBase []byte
	err := guard(func() { found, frameBase = m.findLocal(fn.die, name, pc) })
	if err != nil || found == nil {
		return Var{}, false, nil
	}
	_, typ := m.nameOf(found)
	v := Var{Name: name, Module: m.path}
	if typ != 0 {
		v.Type = m.convertType(typ)
	}
	if v.Type != nil && v.Type.Size > 0 {
		v.Size = uint64(v.Type.Size)
	}
	regs := &regset{}
	for i, r := range sc.Regs {
		if sc.Outer && i != regRBP && i != regRSP && i != regRA && sc.Known&(1<<i) == 0 {
			continue // the unwinder did not restore it: unknown
		}
		regs.set(i, r)
	}
	var loc []byte
	switch l := found.Val(dwarf.AttrLocation).(type) {
	case []byte:
		loc = l
	case int64:
		var ok bool
		if loc, ok = m.locList(uint64(l), fn.die, pc); !ok {
			return v, true, fmt.Errorf("%s has no location here (optimized out)", name)
		}
	}
	if len(loc) == 0 {
		return v, true, fmt.Errorf("%s has no location here (optimized out)", name)
	}
	l := locator{regs: regs, mem: mem, cfa: sc.CFA, frameBase: frameBase, bias: m.bias}
	addr, value, err := l.locate(loc, int(v.Size))
	if err != nil {
		return v, true, fmt.Errorf("%s: %w", name, err)
	}
	v.Addr, v.Value = addr, value
	return v, true, nil
}

// locator evaluates a variable's location description.
type locator struct {
	regs      *regset
	mem       Mem
	cfa       uint64
	frameBase []byte
	bias      uint64
}

// DWARF operations of location descriptions.
const (
	opRegx          = 0x90
	opPiece         = 0x93
	opEntryValue    = 0xa3
	opGNUEntryValue = 0xf3
)

// locate evaluates loc: the variable's address, or its value (size
// bytes) where it is in registers or in pieces.
func (l *locator) locate(loc []byte, size int) (uint64, []byte, error) {
	if len(loc) > 0 && (loc[0] == opEntryValue || loc[0] == opGNUEntryValue) {
		// The value a register had at the function's entry, which
		// only the caller's call site tells (gdb's "v@entry").
		return 0, nil, errors.New("its value is what its caller passed, which hermit does not look up (optimized out)")
	}
	pieces := splitPieces(loc)
	if pieces == nil {
		return 0, nil, errExpr
	}
	if len(pieces) == 1 && pieces[0].size < 0 {
		p := pieces[0]
		if reg, ok := regOp(p.expr); ok {
			b, err := l.regBytes(reg)
			if err != nil {
				return 0, nil, err
			}
			return 0, b[:min(8, max(1, size))], nil
		}
		addr, err := l.address(p.expr)
		return addr, nil, err
	}
	var value []byte
	for _, p := range pieces {
		n := p.size
		if n < 0 {
			n = size - len(value)
		}
		var b []byte
		var err error
		switch reg, ok := regOp(p.expr); {
		case len(p.expr) == 0:
			return 0, nil, errors.New("part of it is optimized out")
		case ok:
			b, err = l.regBytes(reg)
		default:
			var addr uint64
			if addr, err = l.address(p.expr); err == nil {
				b, err = readFull(l.mem, addr, n)
			}
		}
		if err != nil {
			return 0, nil, err
		}
		if len(b) < n {
			b = append(b, make([]byte, n-len(b))...)
		}
		value = append(value, b[:n]...)
	}
	return 0, value, nil
}

// piece is one part of a location description: expr, then DW_OP_piece
// size (-1: the whole).
type piece struct {
	expr []byte
	size int
}

// splitPieces cuts loc at its DW_OP_piece operations (nil if malformed).
func splitPieces(loc []byte) []piece {
	var out []piece
	c := &cursor{b: loc}
	start := 0
	for c.off < len(c.b) {
		op := c.u8()
		if op == opPiece {
			at := c.off - 1
			n := c.uleb()
			if n > 1<<16 {
				return nil
			}
			out = append(out, piece{expr: loc[start:at], size: int(n)})
			start = c.off
			continue
		}
		if !skipOperands(c, op) {
			return nil
		}
	}
	if c.bad {
		return nil
	}
	if start < len(loc) || len(out) == 0 {
		out = append(out, piece{expr: loc[start:], size: -1})
	}
	return out
}

// skipOperands passes the operands of op (those location descriptions
// use; false for one it does not know).
func skipOperands(c *cursor, op byte) bool {
	switch {
	case op >= 0x30 && op <= 0x6f, op == opCallFrameCFA, op == 0x06, op == 0x22, op == 0x1c, op == 0x9f: // lit, reg, cfa, deref, plus, minus, stack_value
	case op >= 0x70 && op <= 0x8f, op == opFbreg, op == 0x11, op == 0x0d: // breg, fbreg, consts, const4s
		c.sleb()
	case op == opRegx, op == 0x10, op == 0x23: // regx, constu, plus_uconst
		c.uleb()
	case op == 0x92: // bregx
		c.uleb()
		c.sleb()
	case op == opAddr:
		c.u64()
	case op == 0x08, op == 0x09:
		c.u8()
	case op == 0x0a, op == 0x0b:
		c.u16()
	case op == 0x0c:
		c.u32()
	default:
		return false
	}
	return !c.bad
}

// regOp returns the register a location that is one register names.
func regOp(expr []byte) (int, bool) {
	if len(expr) == 1 && expr[0] >= opReg0 && expr[0] <= opReg31 {
		return int(expr[0] - opReg0), true
	}
	if len(expr) > 1 && expr[0] == opRegx {
		c := &cursor{b: expr[1:]}
		n := c.uleb()
		return int(n), !c.bad && c.off == len(c.b)
	}
	return 0, false
}

// regBytes is register n's value, if known.
func (l *locator) regBytes(n int) ([]byte, error) {
	if n >= numRegs || !l.regs.known[n] {
		return nil, errors.New("it is in a register the caller did not keep (optimized out)")
	}
	return le.AppendUint64(nil, l.regs.val[n]), nil
}

// address evaluates a memory location.
func (l *locator) address(expr []byte) (uint64, error) {
	if len(expr) > 0 && expr[0] == opFbreg {
		fb, err := frameBaseOf(l.frameBase, l.regs, l.mem, l.cfa)
		if err != nil {
			return 0, fmt.Errorf("frame base: %w", err)
		}
		c := &cursor{b: expr[1:]}
		off := c.sleb()
		if c.bad || c.off != len(c.b) {
			return 0, errExpr
		}
		return fb + uint64(off), nil
	}
	if len(expr) == 9 && expr[0] == opAddr {
		return le.Uint64(expr[1:]) + l.bias, nil
	}
	if len(expr) == 1 && expr[0] == opCallFrameCFA {
		return l.cfa, nil
	}
	return evalExpr(expr, l.regs, l.mem, nil)
}

// frameBaseOf evaluates a subprogram's DW_AT_frame_base.
func frameBaseOf(fb []byte, regs *regset, mem Mem, cfa uint64) (uint64, error) {
	switch {
	case len(fb) == 1 && fb[0] == opCallFrameCFA:
		if cfa == 0 {
			return 0, errors.New("the frame's CFA is unknown")
		}
		return cfa, nil
	case len(fb) == 1 && fb[0] >= opReg0 && fb[0] <= opReg31:
		n := uint64(fb[0] - opReg0)
		if n >= numRegs || !regs.known[n] {
			return 0, errExpr
		}
		return regs.val[n], nil
	case len(fb) > 0:
		return evalExpr(fb, regs, mem, nil)
	}
	return 0, errors.New("the function has no frame base")
}

// findLocal walks the children of subprogram die for a variable or
// parameter called name in scope at pc, the innermost block first. It
// also returns the subprogram's frame base.
func (m *module) findLocal(die dwarf.Offset, name string, pc uint64) (*dwarf.Entry, []byte) {
	var found *dwarf.Entry
	foundDepth := -1
	frameBase := m.walkLocals(die, pc, func(e *dwarf.Entry, n string, depth int) {
		if n == name && depth > foundDepth {
			found, foundDepth = e, depth
		}
	})
	return found, frameBase
}

// walkLocals calls f for each variable and parameter of subprogram die in
// scope at pc, with its name and block depth, and returns the
// subprogram's frame base.
func (m *module) walkLocals(die dwarf.Offset, pc uint64, f func(e *dwarf.Entry, name string, depth int)) []byte {
	r := m.dw.Reader()
	r.Seek(die)
	fn, err := r.Next()
	if err != nil || fn == nil || !fn.Children {
		return nil
	}
	frameBase, _ := fn.Val(dwarf.AttrFrameBase).([]byte)
	depth := 1
	for n := 0; depth > 0 && n < maxDIEs; n++ {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == 0 {
			depth--
			continue
		}
		switch e.Tag {
		case dwarf.TagVariable, dwarf.TagFormalParameter:
			if name, _ := m.nameOf(e); name != "" {
				f(e, name, depth)
			}
		case dwarf.TagLexDwarfBlock:
			if !m.covers(e, pc) {
				r.SkipChildren()
				continue
			}
		case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine:
			// A nested function or an inlined call: its locals are
			// not this frame's.
			r.SkipChildren()
			continue
		}
		if e.Children {
			depth++
		}
	}
	return frameBase
}

// LocalNames lists the names of the locals of the function at sc.PC.
func (s *Space) LocalNames(sc Scope, mem Mem) []string {
	m, _, ok := s.moduleAt(sc.PC, mem)
	if !ok {
		return nil
	}
	m.init()
	fn := m.subprogAt(sc.PC - m.bias)
	if fn == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	_ = guard(func() {
		m.walkLocals(fn.die, sc.PC-m.bias, func(_ *dwarf.Entry, name string, _ int) {
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		})
	})
	sort.Strings(out)
	return out
}

// subprogAt returns the innermost function holding pc (unbiased).
func (m *module) subprogAt(pc uint64) *subprog {
	var fn *subprog
	for i := range m.subprogs {
		p := &m.subprogs[i]
		if pc >= p.lo && pc < p.hi && (fn == nil || p.hi-p.lo < fn.hi-fn.lo) {
			fn = p
		}
	}
	return fn
}

// VarNames lists the names of the global variables.
func (s *Space) VarNames() []string {
	return s.eachName(func(mod *module, add func(string)) {
		for name, gs := range mod.globals {
			if !gs[0].isFunc {
				add(name)
			}
		}
		for _, d := range mod.elfData {
			add(d.name)
		}
	})
}

// covers says whether the DIE's address ranges hold pc.
func (m *module) covers(e *dwarf.Entry, pc uint64) bool {
	ranges, err := m.dw.Ranges(e)
	if err != nil {
		return false
	}
	for _, rg := range ranges {
		if pc >= rg[0] && pc < rg[1] {
			return true
		}
	}
	return false
}

// cu is a compilation unit's base address and .debug_addr base.
type cu struct {
	off            dwarf.Offset
	base, addrBase uint64
}

// DW_LLE entry kinds (DWARF 5, .debug_loclists).
const (
	lleEnd          = 0x00
	lleBaseAddressx = 0x01
	lleStartxEndx   = 0x02
	lleStartxLength = 0x03
	lleOffsetPair   = 0x04
	lleDefault      = 0x05
	lleBaseAddress  = 0x06
	lleStartEnd     = 0x07
	lleStartLength  = 0x08
)

// maxLocEntries caps the entries read from one location list.
const maxLocEntries = 1 << 16

// locList returns the location description that the location list at off
// gives at pc (unbiased), for a DIE of the unit holding die: from
// .debug_loclists (DWARF 5), else .debug_loc (DWARF 4).
func (m *module) locList(off uint64, die dwarf.Offset, pc uint64) ([]byte, bool) {
	var unit cu
	for _, u := range m.cus {
		if u.off <= die {
			unit = u
		}
	}
	if data := m.section(".debug_loclists"); data != nil {
		return m.locList5(data, off, unit, pc)
	}
	return locList4(m.section(".debug_loc"), off, unit.base, pc)
}

// section returns an ELF section's contents, or nil.
func (m *module) section(name string) []byte {
	sec := m.f.Section(name)
	if sec == nil {
		return nil
	}
	var b []byte
	if guard(func() { b, _ = sec.Data() }) != nil {
		return nil
	}
	return b
}

func (m *module) locList5(data []byte, off uint64, unit cu, pc uint64) ([]byte, bool) {
	if off >= uint64(len(data)) {
		return nil, false
	}
	c := &cursor{b: data, off: int(off)}
	base := unit.base
	addrx := func(i uint64) uint64 {
		a := m.section(".debug_addr")
		at := unit.addrBase + 8*i
		if at+8 > uint64(len(a)) {
			return 0
		}
		return le.Uint64(a[at:])
	}
	var dflt []byte
	for n := 0; n < maxLocEntries && !c.bad; n++ {
		kind := c.u8()
		var lo, hi uint64
		switch kind {
		case lleEnd:
			return dflt, dflt != nil
		case lleBaseAddressx:
			base = addrx(c.uleb())
			continue
		case lleBaseAddress:
			base = c.u64()
			continue
		case lleStartxEndx:
			lo, hi = addrx(c.uleb()), addrx(c.uleb())
		case lleStartxLength:
			lo = addrx(c.uleb())
			hi = lo + c.uleb()
		case lleOffsetPair:
			lo, hi = base+c.uleb(), base+c.uleb()
		case lleStartEnd:
			lo, hi = c.u64(), c.u64()
		case lleStartLength:
			lo = c.u64()
			hi = lo + c.uleb()
		case lleDefault:
		default:
			return nil, false
		}
		expr := c.bytes(c.uleb())
		if c.bad {
			return nil, false
		}
		if kind == lleDefault {
			dflt = expr
			continue
		}
		if pc >= lo && pc < hi {
			return expr, true
		}
	}
	return nil, false
}

// locList4 reads a DWARF 4 location list.
func locList4(data []byte, off, base, pc uint64) ([]byte, bool) {
	if off >= uint64(len(data)) {
		return nil, false
	}
	c := &cursor{b: data, off: int(off)}
	for n := 0; n < maxLocEntries && !c.bad; n++ {
		lo, hi := c.u64(), c.u64()
		switch {
		case lo == 0 && hi == 0:
			return nil, false
		case lo == ^uint64(0):
			base = hi
			continue
		}
		expr := c.bytes(c.u16())
		if !c.bad && pc >= base+lo && pc < base+hi {
			return expr, true
		}
	}
	return nil, false
}
