package debuginfo

import (
	"bytes"
	"debug/elf"
	"sort"
)

// What a debugger's "break FUNC" and completion need beyond lookups.

// AfterPrologue returns where a breakpoint on the function entered at pc
// goes, as gdb places it for gcc's code: when the function sets up a frame
// pointer (push %rbp; mov %rsp,%rbp, perhaps after endbr64), the first
// line-table row after the entry that starts another line of the
// function, where its frame and arguments are set up; otherwise (optimized,
// frameless code, or no line table) pc itself.
func (s *Space) AfterPrologue(pc uint64) uint64 {
	mod, _, ok := s.moduleAt(pc, nil)
	if !ok {
		return pc
	}
	mod.init()
	addr := pc - mod.bias
	if !setsUpFrame(mod, addr) {
		return pc
	}
	end := addr + 4096 // bounds the search where the function's size is unknown
	if f, ok := findSym(mod.funcs, addr, false); ok && f.addr == addr && f.size > 0 {
		end = f.addr + f.size
	}
	rows := mod.rows
	i := sort.Search(len(rows), func(i int) bool { return rows[i].addr >= addr })
	if i == len(rows) || rows[i].addr != addr {
		return pc
	}
	first := rows[i].line
	for _, r := range rows[i+1:] {
		if r.endSeq || r.addr >= end {
			break
		}
		if r.addr > addr && r.line != first && r.line > 0 {
			return r.addr + mod.bias
		}
	}
	return pc
}

// Names lists the functions of the loaded modules, the executable's
// first, each name once, for completion.
func (s *Space) Names() []string {
	return s.eachName(func(mod *module, add func(string)) {
		for _, list := range [][]sym{mod.funcs, mod.elfFuncs} {
			for _, f := range list {
				add(f.name)
			}
		}
	})
}

// eachName lists the names names gives for each loaded module, the
// executable's first, each module's sorted, each name once.
func (s *Space) eachName(names func(mod *module, add func(string))) []string {
	seen := map[string]bool{}
	var out []string
	for _, mod := range s.modules() {
		mod.init()
		var own []string
		names(mod, func(name string) {
			if name != "" && !seen[name] {
				seen[name] = true
				own = append(own, name)
			}
		})
		sort.Strings(own)
		out = append(out, own...)
	}
	return out
}

// setsUpFrame says whether the code at link-time address addr of mod
// begins with a frame pointer's setup.
func setsUpFrame(mod *module, addr uint64) bool {
	var code [8]byte
	for _, p := range mod.f.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr+uint64(len(code)) <= p.Vaddr+p.Filesz {
			if _, err := p.ReadAt(code[:], int64(addr-p.Vaddr)); err != nil {
				return false
			}
			b := code[:]
			if bytes.HasPrefix(b, []byte{0xf3, 0x0f, 0x1e, 0xfa}) { // endbr64
				b = b[4:]
			}
			return bytes.HasPrefix(b, []byte{0x55, 0x48, 0x89, 0xe5}) // push %rbp; mov %rsp,%rbp
		}
	}
	return false
}
