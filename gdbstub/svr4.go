package gdbstub

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// The shared-library list (qXfer:libraries-svr4:read) is the dynamic
// linker's own: the program's auxiliary vector leads to its program
// headers, those to its dynamic section, whose DT_DEBUG entry ld.so points
// at its struct r_debug, whose r_map heads the chain of struct link_map
// (<link.h>), one per loaded object, the program first.

// Auxiliary vector types (<elf.h>).
const (
	atNull  = 0
	atPHDR  = 3
	atPHENT = 4
	atPHNUM = 5
)

// ELF constants (<elf.h>).
const (
	ptDynamic = 2
	ptPHDR    = 6
	dtNull    = 0
	dtDebug   = 21

	phdrSize   = 56 // sizeof(Elf64_Phdr)
	maxPhnum   = 0xffff
	maxDynamic = 4096 // dynamic entries we look through
	maxLibs    = 4096 // link_map entries we follow
	maxName    = 4096 // bytes of a library's name we read
)

// readMemFunc reads target memory like Target.ReadMemory.
type readMemFunc func(addr uint64, b []byte) (int, error)

// svr4Library is one link_map entry.
type svr4Library struct {
	name           string
	lm, lAddr, lLD uint64
}

// auxvValue finds type typ in an auxiliary vector.
func auxvValue(auxv []byte, typ uint64) (uint64, bool) {
	le := binary.LittleEndian
	for i := 0; i+16 <= len(auxv); i += 16 {
		t := le.Uint64(auxv[i:])
		if t == atNull {
			break
		}
		if t == typ {
			return le.Uint64(auxv[i+8:]), true
		}
	}
	return 0, false
}

// readExact reads exactly len(b) bytes at addr.
func readExact(read readMemFunc, addr uint64, b []byte) error {
	n, err := read(addr, b)
	if n == len(b) {
		return nil
	}
	if err == nil {
		err = errors.New("short read")
	}
	return fmt.Errorf("read %d bytes at %#x: %w", len(b), addr, err)
}

// readU64 reads a little-endian uint64 at addr.
func readU64(read readMemFunc, addr uint64) (uint64, error) {
	var b [8]byte
	if err := readExact(read, addr, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// readCString reads a NUL-terminated string of at most max bytes at addr.
func readCString(read readMemFunc, addr uint64, max int) string {
	var out []byte
	buf := make([]byte, 256)
	for len(out) < max {
		n, _ := read(addr, buf)
		if n == 0 {
			break
		}
		if i := strings.IndexByte(string(buf[:n]), 0); i >= 0 {
			return string(append(out, buf[:i]...))
		}
		out = append(out, buf[:n]...)
		addr += uint64(n)
	}
	if len(out) > max {
		out = out[:max]
	}
	return string(out)
}

// rDebugAddr finds the address of the dynamic linker's r_debug from the
// auxiliary vector: 0 when the program has no dynamic section or ld.so
// has not filled DT_DEBUG in yet.
func rDebugAddr(auxv []byte, read readMemFunc) (uint64, error) {
	slot, err := dtDebugSlot(auxv, read)
	if err != nil || slot == 0 {
		return 0, err
	}
	return readU64(read, slot)
}

// dtDebugSlot finds where the program's DT_DEBUG entry keeps its value
// (the pointer to r_debug that ld.so fills in): 0 when the program has
// no dynamic section or no DT_DEBUG.
func dtDebugSlot(auxv []byte, read readMemFunc) (uint64, error) {
	phdr, ok1 := auxvValue(auxv, atPHDR)
	phnum, ok2 := auxvValue(auxv, atPHNUM)
	if !ok1 || !ok2 {
		return 0, errors.New("auxv has no AT_PHDR or AT_PHNUM")
	}
	phent := uint64(phdrSize)
	if v, ok := auxvValue(auxv, atPHENT); ok && v >= phdrSize && v < 1024 {
		phent = v
	}
	if phnum > maxPhnum {
		return 0, fmt.Errorf("AT_PHNUM %d is too big", phnum)
	}
	le := binary.LittleEndian
	var bias, dynVaddr, dynSize uint64
	haveDyn := false
	var ph [phdrSize]byte
	for i := range phnum {
		if err := readExact(read, phdr+i*phent, ph[:]); err != nil {
			return 0, fmt.Errorf("program header %d: %w", i, err)
		}
		switch le.Uint32(ph[0:]) {
		case ptPHDR:
			bias = phdr - le.Uint64(ph[16:])
		case ptDynamic:
			dynVaddr, dynSize, haveDyn = le.Uint64(ph[16:]), le.Uint64(ph[40:]), true
		}
	}
	if !haveDyn {
		return 0, nil // a static executable
	}
	var ent [16]byte
	for i := uint64(0); i < maxDynamic && (i+1)*16 <= dynSize; i++ {
		if err := readExact(read, bias+dynVaddr+16*i, ent[:]); err != nil {
			return 0, fmt.Errorf("dynamic entry %d: %w", i, err)
		}
		switch le.Uint64(ent[0:]) {
		case dtNull:
			return 0, nil
		case dtDebug:
			return bias + dynVaddr + 16*i + 8, nil
		}
	}
	return 0, nil
}

// svr4Libraries walks the link_map chain. mainLM is the program's own
// entry (0 when there is no chain yet); libs are the entries after it.
func svr4Libraries(auxv []byte, read readMemFunc) (mainLM uint64, libs []svr4Library, err error) {
	rdebug, err := rDebugAddr(auxv, read)
	if err != nil || rdebug == 0 {
		return 0, nil, err
	}
	rmap, err := readU64(read, rdebug+8) // r_debug.r_map
	if err != nil {
		return 0, nil, fmt.Errorf("r_debug: %w", err)
	}
	if rmap == 0 {
		return 0, nil, nil
	}
	seen := map[uint64]bool{}
	for lm := rmap; lm != 0 && !seen[lm] && len(seen) < maxLibs; {
		seen[lm] = true
		var ent [32]byte // l_addr, l_name, l_ld, l_next
		if err := readExact(read, lm, ent[:]); err != nil {
			return 0, nil, fmt.Errorf("link_map: %w", err)
		}
		le := binary.LittleEndian
		if lm != rmap {
			libs = append(libs, svr4Library{
				name:  readCString(read, le.Uint64(ent[8:]), maxName),
				lm:    lm,
				lAddr: le.Uint64(ent[0:]),
				lLD:   le.Uint64(ent[16:]),
			})
		}
		lm = le.Uint64(ent[24:])
	}
	return rmap, libs, nil
}

// svr4XML is the qXfer:libraries-svr4:read document.
func svr4XML(mainLM uint64, libs []svr4Library) string {
	var b strings.Builder
	b.WriteString(`<library-list-svr4 version="1.0"`)
	if mainLM != 0 {
		fmt.Fprintf(&b, ` main-lm="%#x"`, mainLM)
	}
	if len(libs) == 0 {
		b.WriteString("/>")
		return b.String()
	}
	b.WriteString(">")
	for _, l := range libs {
		fmt.Fprintf(&b, `<library name="%s" lm="%#x" l_addr="%#x" l_ld="%#x" lmid="0x0"/>`,
			xmlEscape(l.name), l.lm, l.lAddr, l.lLD)
	}
	b.WriteString("</library-list-svr4>")
	return b.String()
}
