package ptrace

import (
	"bufio"
	"debug/elf"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// What spin detection (detcore/spin.go) needs beyond the general
// registers: the vector registers, which a loop may count in, and a name
// for the code a warning points at.

// ntX86Xstate is NT_X86_XSTATE (<linux/elf.h>): the XSAVE area, x87, SSE
// and AVX state together.
const ntX86Xstate = 0x202

// VectorRegs implements detcore.SpinTracer.VectorRegs with
// PTRACE_GETREGSET NT_X86_XSTATE.
func (t *Tracer) VectorRegs(tid int, b []byte) ([]byte, error) {
	if cap(b) < 4096 {
		b = make([]byte, 4096)
	}
	b = b[:cap(b)]
	iov := unix.Iovec{Base: &b[0], Len: uint64(len(b))}
	if err := ptracePtr(unix.PTRACE_GETREGSET, tid, ntX86Xstate, unsafe.Pointer(&iov)); err != nil {
		return nil, gone(err)
	}
	return b[:iov.Len], nil
}

// Symbolize implements detcore.SpinTracer.Symbolize: "main+0x16 in
// /path/prog" for an address in a symbol of an ELF file mapped in tid's
// address space, "/path/prog+0x1136" without a symbol, "" when the
// address is in no file. The file is opened through /proc/TID/map_files,
// which reaches it whatever root the guest sees.
func (t *Tracer) Symbolize(tid int, addr uint64) string {
	f, err := procOpen(fmt.Sprintf("/proc/%d/maps", tid))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.HasPrefix(fields[5], "/") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(fields[2], 16, 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil || addr < start || addr >= end {
			continue
		}
		name := fields[5]
		fileOff := addr - start + off
		if sym := elfSymbol(fmt.Sprintf("/proc/%d/map_files/%s", tid, fields[0]), fileOff); sym != "" {
			return sym + " in " + filepath.Base(name)
		}
		return fmt.Sprintf("%s+%#x", name, fileOff)
	}
	return ""
}

// elfSymbol names the function holding file offset off of ELF file path.
func elfSymbol(path string, off uint64) string {
	ef, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer ef.Close()
	// Turn the file offset into a virtual address through the segment
	// that maps it.
	var vaddr uint64
	found := false
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && off >= p.Off && off < p.Off+p.Filesz {
			vaddr, found = off-p.Off+p.Vaddr, true
			break
		}
	}
	if !found {
		return ""
	}
	syms, _ := ef.Symbols()
	dyn, _ := ef.DynamicSymbols()
	for _, s := range append(syms, dyn...) {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && vaddr >= s.Value && vaddr < s.Value+max(s.Size, 1) {
			return fmt.Sprintf("%s+%#x", s.Name, vaddr-s.Value)
		}
	}
	return ""
}
