package debuginfo

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// Caps on what one module may make us build.
const (
	maxSymbols   = 4 << 20
	maxDIEs      = 32 << 20
	maxLineRows  = 32 << 20
	maxSection   = 1 << 30
	maxInlineDep = 64
)

// sym is an address range with a name, at link-time addresses.
type sym struct {
	addr, size uint64
	name       string
	limit      uint64 // for size-0 symbols: the end of their section
}

// global is a variable or function defined by DWARF.
type global struct {
	addr, size uint64
	typeOff    dwarf.Offset // 0: none
	die        dwarf.Offset // the subprogram's DIE, for functions
	isFunc     bool
}

// lineRow is one row of a line table.
type lineRow struct {
	addr   uint64
	file   string
	line   int
	endSeq bool
	stmt   bool // a recommended breakpoint location (is_stmt)
}

// module is one loaded ELF file at link-time addresses, with its bias.
type module struct {
	path string
	f    *elf.File
	bias uint64
	open Opener // for separate debug files

	once     sync.Once // guards the fields below, built on first use
	dw       *dwarf.Data
	dwErr    error
	funcs    []sym // DWARF subprograms, sorted
	subprogs []subprog
	cus      []cu  // in order
	elfFuncs []sym // ELF STT_FUNC (and untyped text) symbols, sorted
	elfData  []sym // ELF STT_OBJECT symbols, sorted
	globals  map[string][]global
	rows     []lineRow // all sequences, sorted by address, each ending in endSeq
	files    []string  // every file name the line tables mention

	cfiOnce sync.Once
	cfi     *cfiTable
}

func newModule(path string, f *elf.File, bias uint64) *module {
	return &module{path: path, f: f, bias: bias}
}

// init builds the symbol and line indexes once. Panics of debug/dwarf on
// malformed input become a recorded error and whatever was built so far.
func (m *module) init() {
	m.once.Do(func() {
		m.readELFSymbols()
		m.dw, m.dwErr = m.loadDWARF()
		if m.dw == nil {
			return
		}
		if err := guard(m.readDWARF); err != nil {
			m.dwErr = err
		}
		if err := guard(m.readLines); err != nil && m.dwErr == nil {
			m.dwErr = err
		}
	})
}

// guard runs f, converting a panic into an error.
func guard(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed debug info: %v", p)
		}
	}()
	f()
	return nil
}

// loadDWARF returns the module's DWARF, from the file itself or from a
// separate debug file found by build ID.
func (m *module) loadDWARF() (d *dwarf.Data, err error) {
	err = guard(func() { d, err = m.f.DWARF() })
	if err == nil && d != nil {
		return d, nil
	}
	if m.open != nil {
		if id := buildID(m.f); len(id) > 1 {
			p := fmt.Sprintf("/usr/lib/debug/.build-id/%x/%x.debug", id[:1], id[1:])
			if r, size, oerr := m.open(p); oerr == nil {
				if df, ferr := openELF(r, size); ferr == nil {
					var dd *dwarf.Data
					var derr error
					if gerr := guard(func() { dd, derr = df.DWARF() }); gerr == nil && derr == nil {
						return dd, nil
					}
				}
			}
		}
	}
	if err == nil {
		err = errors.New("no DWARF")
	}
	return nil, err
}

// buildID returns the GNU build ID note of f, or nil.
func buildID(f *elf.File) []byte {
	s := f.Section(".note.gnu.build-id")
	if s == nil || s.Size > 1024 {
		return nil
	}
	b, err := s.Data()
	if err != nil || len(b) < 16 {
		return nil
	}
	namesz := le.Uint32(b[0:])
	descsz := le.Uint32(b[4:])
	off := 12 + (uint64(namesz)+3)&^3
	if off+uint64(descsz) > uint64(len(b)) {
		return nil
	}
	return b[off : off+uint64(descsz)]
}

// readELFSymbols indexes .symtab and .dynsym.
func (m *module) readELFSymbols() {
	var all []elf.Symbol
	if err := guard(func() {
		if s, err := m.f.Symbols(); err == nil {
			all = append(all, s...)
		}
		if s, err := m.f.DynamicSymbols(); err == nil {
			all = append(all, s...)
		}
	}); err != nil {
		return
	}
	if len(all) > maxSymbols {
		all = all[:maxSymbols]
	}
	for _, s := range all {
		if s.Value == 0 || s.Section == elf.SHN_UNDEF || s.Name == "" {
			continue
		}
		t := elf.ST_TYPE(s.Info)
		e := sym{addr: s.Value, size: s.Size, name: s.Name, limit: m.sectionEnd(s)}
		switch {
		case t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC:
			m.elfFuncs = append(m.elfFuncs, e)
		case t == elf.STT_OBJECT:
			m.elfData = append(m.elfData, e)
		case t == elf.STT_NOTYPE && m.inText(s):
			m.elfFuncs = append(m.elfFuncs, e)
		}
	}
	m.elfFuncs = append(m.elfFuncs, m.pltSymbols()...)
	sortSyms(m.elfFuncs)
	sortSyms(m.elfData)
}

// sectionEnd returns the end address of a symbol's section, or 0.
func (m *module) sectionEnd(s elf.Symbol) uint64 {
	i := int(s.Section)
	if s.Section >= elf.SHN_LORESERVE || i >= len(m.f.Sections) {
		return 0
	}
	return m.f.Sections[i].Addr + m.f.Sections[i].Size
}

// inText reports whether a symbol lies in an executable section.
func (m *module) inText(s elf.Symbol) bool {
	i := int(s.Section)
	if s.Section >= elf.SHN_LORESERVE || i >= len(m.f.Sections) {
		return false
	}
	return m.f.Sections[i].Flags&elf.SHF_EXECINSTR != 0 && !strings.HasPrefix(s.Name, ".L")
}

// sortSyms sorts by address, preferring global-looking, sized names first
// among symbols at the same address (so "write" beats "__GI___libc_write"
// only by order of appearance, which keeps the choice stable).
func sortSyms(ss []sym) {
	sort.SliceStable(ss, func(i, j int) bool {
		if ss[i].addr != ss[j].addr {
			return ss[i].addr < ss[j].addr
		}
		return ss[i].size > ss[j].size
	})
}

// findSym returns the symbol covering addr: the last one starting at or
// before addr whose size covers it, or, for size-0 symbols, the nearest one
// when no sized symbol lies between (the assembly-label case).
func findSym(ss []sym, addr uint64, allowUnsized bool) (sym, bool) {
	i := sort.Search(len(ss), func(i int) bool { return ss[i].addr > addr })
	// Look back a little for a sized symbol covering addr (nested or overlapping ones).
	for j := i - 1; j >= 0 && j >= i-8; j-- {
		s := ss[j]
		if s.size > 0 && addr < s.addr+s.size {
			return s, true
		}
	}
	if allowUnsized && i > 0 {
		s := ss[i-1]
		if s.size == 0 && addr < s.limit {
			return s, true
		}
	}
	return sym{}, false
}

// funcAt names the function containing the link-time address addr.
func (m *module) funcAt(addr uint64) (string, uint64, bool) {
	m.init()
	if s, ok := findSym(m.funcs, addr, false); ok {
		return s.name, s.addr, true
	}
	if s, ok := findSym(m.elfFuncs, addr, true); ok {
		return s.name, s.addr, true
	}
	return "", 0, false
}

// dataAt names the data object containing the link-time address addr.
func (m *module) dataAt(addr uint64) (string, uint64, bool) {
	m.init()
	if s, ok := findSym(m.elfData, addr, false); ok {
		return s.name, s.addr, true
	}
	return "", 0, false
}

// readDWARF indexes subprograms and global variables.
func (m *module) readDWARF() {
	m.globals = map[string][]global{}
	r := m.dw.Reader()
	for n := 0; n < maxDIEs; n++ {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			u := cu{off: e.Offset}
			u.base, _ = e.Val(dwarf.AttrLowpc).(uint64)
			if b, ok := e.Val(dwarf.AttrAddrBase).(int64); ok {
				u.addrBase = uint64(b)
			}
			m.cus = append(m.cus, u)
		case dwarf.TagSubprogram:
			m.addSubprogram(e)
		case dwarf.TagVariable:
			m.addVariable(e)
		}
	}
	sortSyms(m.funcs)
}

// entryAt reads the DIE at off.
func (m *module) entryAt(off dwarf.Offset) *dwarf.Entry {
	r := m.dw.Reader()
	r.Seek(off)
	e, err := r.Next()
	if err != nil {
		return nil
	}
	return e
}

// nameOf returns a DIE's name, following DW_AT_specification and
// DW_AT_abstract_origin a few levels.
func (m *module) nameOf(e *dwarf.Entry) (string, dwarf.Offset) {
	var typ dwarf.Offset
	for depth := 0; e != nil && depth < maxInlineDep; depth++ {
		if t, ok := e.Val(dwarf.AttrType).(dwarf.Offset); ok && typ == 0 {
			typ = t
		}
		if n, ok := e.Val(dwarf.AttrName).(string); ok {
			return n, typ
		}
		next, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		if !ok {
			next, ok = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		}
		if !ok {
			break
		}
		e = m.entryAt(next)
	}
	return "", typ
}

// addSubprogram records a subprogram's address ranges.
func (m *module) addSubprogram(e *dwarf.Entry) {
	if len(m.funcs) >= maxSymbols {
		return
	}
	ranges, err := m.dw.Ranges(e)
	if err != nil || len(ranges) == 0 {
		return
	}
	name, _ := m.nameOf(e)
	if name == "" {
		return
	}
	for _, rg := range ranges {
		if rg[1] > rg[0] && rg[0] != 0 {
			m.funcs = append(m.funcs, sym{addr: rg[0], size: rg[1] - rg[0], name: name})
			m.subprogs = append(m.subprogs, subprog{lo: rg[0], hi: rg[1], die: e.Offset})
		}
	}
	if len(ranges) > 0 && ranges[0][0] != 0 {
		m.globals[name] = append(m.globals[name], global{addr: ranges[0][0], size: ranges[0][1] - ranges[0][0], die: e.Offset, isFunc: true})
	}
}

// addVariable records a variable located at a fixed address (DW_OP_addr).
func (m *module) addVariable(e *dwarf.Entry) {
	loc, ok := e.Val(dwarf.AttrLocation).([]byte)
	if !ok || len(loc) != 9 || loc[0] != opAddr {
		return
	}
	name, typ := m.nameOf(e)
	if name == "" {
		return
	}
	g := global{addr: le.Uint64(loc[1:]), typeOff: typ}
	m.globals[name] = append(m.globals[name], g)
}

// readLines reads every compilation unit's line table into m.rows.
func (m *module) readLines() {
	r := m.dw.Reader()
	seen := map[string]bool{}
	for n := 0; n < maxDIEs; n++ {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit && e.Tag != dwarf.TagPartialUnit {
			r.SkipChildren()
			continue
		}
		lr, err := m.dw.LineReader(e)
		r.SkipChildren()
		if err != nil || lr == nil {
			continue
		}
		for _, f := range lr.Files() {
			if f != nil && !seen[f.Name] {
				seen[f.Name] = true
				m.files = append(m.files, f.Name)
			}
		}
		var ent dwarf.LineEntry
		var seq []lineRow
		for len(m.rows)+len(seq) < maxLineRows {
			if err := lr.Next(&ent); err != nil {
				if err != io.EOF {
					seq = nil
				}
				break
			}
			row := lineRow{addr: ent.Address, line: ent.Line, endSeq: ent.EndSequence, stmt: ent.IsStmt}
			if ent.File != nil {
				row.file = ent.File.Name
			}
			seq = append(seq, row)
			if ent.EndSequence {
				// Sequences at address 0 are discarded functions (gc'd sections).
				if len(seq) > 0 && seq[0].addr != 0 {
					m.rows = append(m.rows, seq...)
				}
				seq = seq[:0:0]
			}
		}
	}
	sortSequences(m.rows)
}

// sortSequences orders sequences by their first address, keeping each intact.
func sortSequences(rows []lineRow) {
	var seqs [][]lineRow
	start := 0
	for i, r := range rows {
		if r.endSeq {
			seqs = append(seqs, rows[start:i+1])
			start = i + 1
		}
	}
	sort.SliceStable(seqs, func(i, j int) bool { return seqs[i][0].addr < seqs[j][0].addr })
	out := make([]lineRow, 0, len(rows))
	for _, s := range seqs {
		out = append(out, s...)
	}
	copy(rows, out)
}

// lineAt returns the file and line of the link-time address addr.
func (m *module) lineAt(addr uint64) (string, int) {
	m.init()
	rows := m.rows
	i := sort.Search(len(rows), func(i int) bool { return rows[i].addr > addr })
	// rows[i-1] is the last row at or before addr; it must not end a sequence.
	for j := i - 1; j >= 0; j-- {
		r := rows[j]
		if r.endSeq {
			return "", 0
		}
		if r.line > 0 {
			return r.file, r.line
		}
		if j < i-16 {
			break
		}
	}
	return "", 0
}

// lookup finds a global or function by name in this module.
func (m *module) lookup(name string) (Var, bool) {
	m.init()
	if gs := m.globals[name]; len(gs) > 0 {
		g := gs[0]
		v := Var{Name: name, Addr: g.addr + m.bias, Size: g.size, Module: m.path}
		if g.isFunc {
			v.Type = &Type{Kind: KindFunc, Name: m.funcSignature(g.die)}
		} else if g.typeOff != 0 {
			v.Type = m.convertType(g.typeOff)
			if v.Type != nil && v.Type.Size > 0 {
				v.Size = uint64(v.Type.Size)
			}
		}
		return v, true
	}
	for _, s := range m.elfData {
		if s.name == name {
			return Var{Name: name, Addr: s.addr + m.bias, Size: s.size, Module: m.path}, true
		}
	}
	for _, s := range m.elfFuncs {
		if s.name == name {
			v := Var{Name: name, Addr: s.addr + m.bias, Size: s.size, Module: m.path}
			v.Type = &Type{Kind: KindFunc, Name: "<text variable, no debug info>"}
			return v, true
		}
	}
	return Var{}, false
}
