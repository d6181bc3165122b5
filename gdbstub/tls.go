package gdbstub

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// qGetTLSAddr:THREAD,OFFSET,LM asks where thread THREAD's instance of the
// thread-local variable at OFFSET in the TLS block of the object whose
// struct link_map is at LM is (gdb's `print` of a __thread variable, or
// of errno). gdbserver asks libthread_db; we do what it does, from the
// same source: the C library describes the layout of its private
// structures for libthread_db in symbols named _thread_db_* (three
// uint32s each: the size in bits, the count, the offset), and with them
//
//   - the object's TLS module id and static TLS offset are in its
//     link_map (l_tls_modid, l_tls_offset);
//   - an object loaded at the start has its block in static TLS, at the
//     thread pointer (fs_base) minus l_tls_offset on x86-64;
//   - another's block is where the thread's dtv (struct pthread's
//     header.dtv) points for its module id, once the thread touched it.

// The _thread_db_* descriptors we use.
var tlsDescNames = [...]string{
	"_thread_db_link_map_l_tls_modid",
	"_thread_db_link_map_l_tls_offset",
	"_thread_db_pthread_dtvp",
	"_thread_db_dtv_dtv",
	"_thread_db_dtv_t_pointer_val",
}

const (
	descModid = iota
	descTLSOffset
	descDtvp
	descDtvSlot
	descPointerVal
)

// tlsDesc is one descriptor: a field's size in bits, its count (for an
// array) and its offset in its structure.
type tlsDesc struct{ bits, count, offset uint32 }

// tlsLayout is what a C library's descriptors say.
type tlsLayout [len(tlsDescNames)]tlsDesc

// noTLSOffset and forcedDynamicTLSOffset are l_tls_offset's values for
// an object without a static TLS block (glibc's NO_TLS_OFFSET and
// FORCED_DYNAMIC_TLS_OFFSET on x86-64).
const (
	noTLSOffset            = 0
	forcedDynamicTLSOffset = ^uint64(0)
	dtvUnallocated         = ^uint64(0) // TLS_DTV_UNALLOCATED
)

var errNoThreadDB = errors.New("no _thread_db_* symbols in the program or its libraries (a C library other than glibc, or a static program without a symbol table)")

// getTLSAddr answers qGetTLSAddr.
func (s *session) getTLSAddr(r *request) []byte {
	addr, err := s.tlsAddress(strings.TrimPrefix(string(r.args), ":"))
	if err != nil {
		return s.refused(fmt.Errorf("qGetTLSAddr: %w", err))
	}
	return []byte(strconv.FormatUint(addr, 16))
}

func (s *session) tlsAddress(args string) (uint64, error) {
	f := strings.Split(args, ",")
	if len(f) != 3 {
		return 0, fmt.Errorf("want THREAD,OFFSET,LM, got %q", args)
	}
	tid, err := parseThreadID(f[0])
	if err != nil {
		return 0, err
	}
	if tid <= 0 {
		tid = s.resolve(s.gThread)
	}
	off, err1 := strconv.ParseUint(f[1], 16, 64)
	lm, err2 := strconv.ParseUint(f[2], 16, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad offset or link map in %q", args)
	}
	regs, err := s.t.Registers(tid)
	if err != nil {
		return 0, err
	}
	tp := regs.FsBase
	if tp == 0 {
		return 0, fmt.Errorf("thread %d has no thread pointer yet", tid)
	}
	if lm == 0 {
		// A static program: gdb has no link map to name. Its block is
		// the only one in static TLS, right below the thread pointer.
		size, err := s.staticTLSSize()
		if err != nil {
			return 0, err
		}
		return tp - size + off, nil
	}
	layout, err := s.tlsLayout()
	if err != nil {
		return 0, err
	}
	read := s.t.ReadMemory
	modid, err := readField(read, lm, layout[descModid])
	if err != nil {
		return 0, err
	}
	if modid == 0 {
		return 0, errors.New("that object has no thread-local storage")
	}
	static, err := readField(read, lm, layout[descTLSOffset])
	if err != nil {
		return 0, err
	}
	if static != noTLSOffset && static != forcedDynamicTLSOffset {
		return tp - static + off, nil
	}
	dtv, err := readField(read, tp, layout[descDtvp])
	if err != nil {
		return 0, err
	}
	slot := dtv + uint64(layout[descDtvSlot].bits/8)*modid
	base, err := readField(read, slot, layout[descPointerVal])
	if err != nil {
		return 0, err
	}
	if base == dtvUnallocated || base == 0 {
		return 0, fmt.Errorf("thread %d has not allocated that object's thread-local storage yet", tid)
	}
	return base + off, nil
}

// staticTLSSize is the size of a static program's TLS block, rounded up
// to its alignment, as glibc's startup sets the main link map's
// l_tls_offset to.
func (s *session) staticTLSSize() (uint64, error) {
	exe, err := s.t.ExecFile()
	if err != nil {
		return 0, err
	}
	f, err := s.t.Open(exe)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	ra, ok := f.(io.ReaderAt)
	if !ok {
		return 0, errors.New("the program cannot be read")
	}
	ef, err := elf.NewFile(ra)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", exe, err)
	}
	var tls *elf.Prog
	for _, p := range ef.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			return 0, errors.New("no link map named, and the program is not static")
		case elf.PT_TLS:
			tls = p
		}
	}
	if tls == nil {
		return 0, errors.New("the program has no thread-local storage")
	}
	align := max(tls.Align, 1)
	return (tls.Memsz + align - 1) / align * align, nil
}

// readField reads field d of the structure at base.
func readField(read readMemFunc, base uint64, d tlsDesc) (uint64, error) {
	size := uint64(d.bits / 8)
	if size != 4 && size != 8 {
		return 0, fmt.Errorf("a _thread_db_ field of %d bits", d.bits)
	}
	var b [8]byte
	if err := readExact(read, base+uint64(d.offset), b[:size]); err != nil {
		return 0, err
	}
	if size == 4 {
		return uint64(binary.LittleEndian.Uint32(b[:])), nil
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// tlsLayout finds the C library's descriptors: in the program or one of
// its libraries (libc.so.6 from glibc 2.34, libpthread.so.0 before), read
// from the process's memory where that object is loaded.
func (s *session) tlsLayout() (*tlsLayout, error) {
	if s.tls != nil {
		return s.tls, nil
	}
	auxv, err := s.t.Auxv()
	if err != nil {
		return nil, err
	}
	_, libs, err := svr4Libraries(auxv, s.t.ReadMemory)
	if err != nil {
		libs = nil // the program's own symbols may do (a static one)
	}
	objs := libs
	if exe, err := s.t.ExecFile(); err == nil {
		objs = append([]svr4Library{{name: exe}}, libs...)
	}
	for _, o := range objs {
		addrs := s.threadDBSymbols(o.name)
		if addrs == nil {
			continue
		}
		var l tlsLayout
		for i, a := range addrs {
			var b [12]byte
			if err := readExact(s.t.ReadMemory, o.lAddr+a, b[:]); err != nil {
				return nil, fmt.Errorf("%s: %w", tlsDescNames[i], err)
			}
			le := binary.LittleEndian
			l[i] = tlsDesc{le.Uint32(b[0:]), le.Uint32(b[4:]), le.Uint32(b[8:])}
		}
		s.tls = &l
		return s.tls, nil
	}
	return nil, errNoThreadDB
}

// threadDBSymbols returns the values of the descriptors' symbols in
// file name, or nil if it lacks one.
func (s *session) threadDBSymbols(name string) []uint64 {
	if name == "" {
		return nil
	}
	f, err := s.t.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	ra, ok := f.(io.ReaderAt)
	if !ok {
		return nil
	}
	ef, err := elf.NewFile(ra)
	if err != nil {
		return nil
	}
	found := map[string]uint64{}
	for _, get := range []func() ([]elf.Symbol, error){ef.DynamicSymbols, ef.Symbols} {
		syms, _ := get()
		for _, sym := range syms {
			if strings.HasPrefix(sym.Name, "_thread_db_") {
				found[sym.Name] = sym.Value
			}
		}
	}
	addrs := make([]uint64, len(tlsDescNames))
	for i, n := range tlsDescNames {
		v, ok := found[n]
		if !ok {
			return nil
		}
		addrs[i] = v
	}
	return addrs
}
