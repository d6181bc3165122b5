package debuginfo

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Mem reads the debugged process's memory at addr into b. At unmapped
// memory it returns the bytes read before it and an error.
type Mem func(addr uint64, b []byte) (int, error)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End, Offset uint64
	Perms              string // "r-xp" and the like
	Path               string // file path, "[vdso]", "[stack]", or "" for anonymous memory
}

// Opener opens a file of the recording by its path in the guest's view and
// returns its contents and size.
type Opener func(path string) (io.ReaderAt, int64, error)

// Location is what is known of a code address.
type Location struct {
	Func   string // function name, "" if unknown
	Off    uint64 // PC minus the function's start
	File   string // source file as the line table names it (usually absolute), "" if unknown
	Line   int    // source line, 0 if unknown
	Module string // path of the mapping holding the PC ("[vdso]" for memory-only modules)
}

// String formats l as gdb's frame lines do: "func (file:line)" or "func+off in module".
func (l Location) String() string {
	fn := l.Func
	if fn == "" {
		fn = "??"
	}
	if l.File != "" && l.Line > 0 {
		return fmt.Sprintf("%s at %s:%d", fn, l.File, l.Line)
	}
	switch {
	case l.Module != "" && l.Func == "":
		return "?? in " + l.Module
	case l.Module != "":
		return fmt.Sprintf("%s+%#x in %s", fn, l.Off, l.Module)
	}
	return fn
}

// ErrNotFound is returned (wrapped) by Lookup when no module defines the name.
var ErrNotFound = errors.New("no symbol")

// maxMaps caps how many maps lines ParseMaps keeps.
const maxMaps = 1 << 16

// ParseMaps parses the text of /proc/PID/maps. Lines it cannot parse are
// skipped. A path with spaces is kept whole; " (deleted)" stays part of it.
func ParseMaps(text string) []Mapping {
	var out []Mapping
	for line := range strings.Lines(text) {
		if len(out) >= maxMaps {
			break
		}
		line = strings.TrimRight(line, "\r\n")
		// address perms offset dev inode [path]
		fields := make([]string, 0, 5)
		rest := line
		for len(fields) < 5 {
			rest = strings.TrimLeft(rest, " \t")
			i := strings.IndexAny(rest, " \t")
			if i < 0 {
				fields = append(fields, rest)
				rest = ""
				break
			}
			fields = append(fields, rest[:i])
			rest = rest[i:]
		}
		if len(fields) < 5 || fields[4] == "" {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(fields[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || end < start {
			continue
		}
		out = append(out, Mapping{Start: start, End: end, Offset: off, Perms: fields[1], Path: strings.TrimLeft(rest, " \t")})
	}
	return out
}

// Space is a process's address space: its mapped ELF modules, loaded
// lazily and cached by path.
type Space struct {
	maps []Mapping // sorted by Start
	open Opener

	// noCFI makes Backtrace use only frame pointers (tests).
	noCFI bool

	mu   sync.Mutex
	mods map[string]*module // protected by mu; nil value: load failed
	errs map[string]error   // protected by mu; why a load failed
	vdso map[string]bool    // protected by mu; memory-only modules tried already
}

// NewSpace returns the address space described by maps whose files open opens.
func NewSpace(maps []Mapping, open Opener) *Space {
	ms := append([]Mapping(nil), maps...)
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Start < ms[j].Start })
	return &Space{maps: ms, open: open, mods: map[string]*module{}, errs: map[string]error{}, vdso: map[string]bool{}}
}

// mappingAt returns the mapping containing addr.
func (s *Space) mappingAt(addr uint64) (Mapping, bool) {
	i := sort.Search(len(s.maps), func(i int) bool { return s.maps[i].End > addr })
	if i < len(s.maps) && s.maps[i].Start <= addr {
		return s.maps[i], true
	}
	return Mapping{}, false
}

// fileBacked reports whether a mapping path names a file.
func fileBacked(path string) bool {
	return path != "" && !strings.HasPrefix(path, "[")
}

// moduleAt returns the module mapped at addr, loading it on first use, and
// the mapping holding addr. mem, when non-nil, lets memory-only ELF images
// such as [vdso] be read from the process.
func (s *Space) moduleAt(addr uint64, mem Mem) (*module, Mapping, bool) {
	m, ok := s.mappingAt(addr)
	if !ok {
		return nil, Mapping{}, false
	}
	if fileBacked(m.Path) {
		return s.module(m.Path), m, true
	}
	if m.Path == "[vdso]" {
		return s.memModule(m, mem), m, true
	}
	return nil, m, true
}

// Err returns why the module at path could not be loaded, or nil.
func (s *Space) Err(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs[path]
}

// module returns the loaded module of a mapped file, or nil if it cannot be loaded.
func (s *Space) module(path string) *module {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.mods[path]; ok {
		return m
	}
	m, err := s.load(path)
	if err != nil {
		s.errs[path] = err
		m = nil
	}
	s.mods[path] = m
	return m
}

// load opens and parses the module of a mapped file and computes its bias.
func (s *Space) load(path string) (*module, error) {
	if s.open == nil {
		return nil, fmt.Errorf("open %s: no opener", path)
	}
	r, size, err := s.open(strings.TrimSuffix(path, " (deleted)"))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f, err := openELF(r, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var maps []Mapping
	for _, m := range s.maps {
		if m.Path == path {
			maps = append(maps, m)
		}
	}
	mod := newModule(path, f, computeBias(f, maps))
	mod.open = s.open
	return mod, nil
}

// memModule parses an ELF image that lives only in memory ([vdso]), once.
func (s *Space) memModule(m Mapping, mem Mem) *module {
	s.mu.Lock()
	defer s.mu.Unlock()
	if mod, ok := s.mods[m.Path]; ok {
		return mod
	}
	if mem == nil || s.vdso[m.Path] {
		return nil
	}
	s.vdso[m.Path] = true
	const maxImage = 1 << 20
	n := m.End - m.Start
	if n > maxImage {
		n = maxImage
	}
	buf := make([]byte, n)
	got, _ := mem(m.Start, buf)
	f, err := openELF(bytes.NewReader(buf[:got]), int64(got))
	if err != nil {
		s.errs[m.Path] = err
		s.mods[m.Path] = nil
		return nil
	}
	mod := newModule(m.Path, f, computeBias(f, []Mapping{{Start: m.Start, End: m.End, Offset: 0, Path: m.Path}}))
	s.mods[m.Path] = mod
	return mod
}

// openELF parses an ELF file, turning a panic of debug/elf into an error.
func openELF(r io.ReaderAt, size int64) (f *elf.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("malformed ELF: %v", p)
		}
	}()
	f, err = elf.NewFile(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, fmt.Errorf("parse ELF: %w", err)
	}
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("not an x86-64 ELF64 file (%v %v)", f.Class, f.Machine)
	}
	return f, nil
}

// computeBias returns the load bias of f given its mappings: mapping start
// minus the page-aligned p_vaddr of the PT_LOAD whose page-aligned p_offset
// equals the mapping's offset. With no match, an ET_EXEC file has bias 0 and
// anything else is assumed mapped from its lowest segment at its lowest mapping.
func computeBias(f *elf.File, maps []Mapping) uint64 {
	const page = 0xfff
	for _, m := range maps {
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Off&^page == m.Offset {
				return m.Start - p.Vaddr&^page
			}
		}
	}
	if f.Type == elf.ET_EXEC || len(maps) == 0 {
		return 0
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			return maps[0].Start - p.Vaddr&^page
		}
	}
	return maps[0].Start
}

// modules returns the file-backed modules in the order they first appear
// in the maps (the executable first, as the kernel maps it lowest for
// non-PIE and before the libraries for PIE).
func (s *Space) modules() []*module {
	seen := map[string]bool{}
	var out []*module
	for _, m := range s.maps {
		if !fileBacked(m.Path) || seen[m.Path] {
			continue
		}
		seen[m.Path] = true
		if mod := s.module(m.Path); mod != nil {
			out = append(out, mod)
		}
	}
	return out
}

// Symbol returns the function, file and line of pc. It reports false when
// no mapping holds pc. For memory-only mappings and files that cannot be
// loaded, Location names only the module.
func (s *Space) Symbol(pc uint64) (Location, bool) {
	return s.symbol(pc, nil, false)
}

// symbol is Symbol; caller asks for the line of the call before a return
// address, and mem allows memory-only modules.
func (s *Space) symbol(pc uint64, mem Mem, caller bool) (Location, bool) {
	mod, m, ok := s.moduleAt(pc, mem)
	if !ok {
		return Location{}, false
	}
	loc := Location{Module: m.Path}
	if mod == nil {
		return loc, true
	}
	addr := pc - mod.bias
	// A return address: the call is the byte before, which is in the
	// caller even when the call is its last instruction (a noreturn
	// call: abort, __cxa_throw's terminate), and the return address is
	// past its end.
	at := addr
	if caller && at > 0 {
		at--
	}
	if name, start, ok := mod.funcAt(at); ok {
		loc.Func, loc.Off = name, addr-start
	}
	loc.File, loc.Line = mod.lineAt(at)
	return loc, true
}

// symbolName returns "name" or "name+off" for any code or data address, for
// disassembly operands and pointer values.
func (s *Space) symbolName(addr uint64, mem Mem) string {
	mod, _, ok := s.moduleAt(addr, mem)
	if !ok || mod == nil {
		return ""
	}
	a := addr - mod.bias
	name, start, ok := mod.funcAt(a)
	if !ok {
		name, start, ok = mod.dataAt(a)
	}
	if !ok {
		return ""
	}
	if a == start {
		return name
	}
	return fmt.Sprintf("%s+%d", name, a-start)
}
