package gdbstub

import (
	"errors"
	"strconv"
	"strings"
)

// Registers, memory and breakpoints.

// regsOf splits a register packet's arguments from its ";thread:" suffix
// and reads the registers of the thread it is for: the suffix's, else
// Hg's. ok is false when there is no such thread or it cannot be read.
func (s *session) regsOf(r *request) (args string, regs *Registers, ok bool) {
	args, tid, err := splitThreadSuffix(r.args)
	if err != nil {
		return "", nil, false
	}
	if tid <= 0 {
		tid = s.resolve(s.gThread)
	}
	if tid == 0 {
		return "", nil, false
	}
	regs, err = s.t.Registers(tid)
	if err != nil || regs == nil {
		s.logf("gdbstub: registers of %d: %v", tid, err)
		return "", nil, false
	}
	return args, regs, true
}

// regNum parses the number of a register target.xml described.
func (s *session) regNum(hexNum string) (int, bool) {
	n, err := strconv.ParseUint(hexNum, 16, 16)
	return int(n), err == nil && n < uint64(s.regCount())
}

// regCount is how many registers target.xml described: the ymm halves
// only when the client read a description that has them (a 'g' reply
// longer than target.xml says panics Delve).
func (s *session) regCount() int {
	if s.avx {
		return numAVXRegs
	}
	return numRegs
}

func (s *session) readRegisters(r *request) []byte {
	args, regs, ok := s.regsOf(r)
	if !ok || args != "" {
		return errReply
	}
	return appendAllRegsHex(nil, regs, s.regCount())
}

func (s *session) readRegister(r *request) []byte {
	args, regs, ok := s.regsOf(r)
	n, isReg := s.regNum(args)
	if !ok || !isReg {
		return errReply
	}
	return appendRegHex(nil, regs, n)
}

// A recording cannot change, so register writes are refused, with two
// exceptions that change nothing: writing the value a register already
// has, and orig_rax, which gdb sets to -1 whenever it starts a program
// (vRun) so that the kernel would not restart a syscall; the replay
// restarts none that the recording did not.

// writeRegisters answers G: OK when it writes what the registers hold.
func (s *session) writeRegisters(r *request) []byte {
	args, regs, ok := s.regsOf(r)
	switch {
	case !ok:
		return errReply
	case !strings.EqualFold(args, string(appendAllRegsHex(nil, regs, s.regCount()))):
		return s.refused(errRegReadOnly)
	}
	return []byte("OK")
}

// writeRegister answers P: OK for orig_rax or an unchanged value.
func (s *session) writeRegister(r *request) []byte {
	args, regs, ok := s.regsOf(r)
	num, val, _ := strings.Cut(args, "=")
	n, isReg := s.regNum(num)
	switch {
	case !isReg:
		return errReply
	case n == regOrigAX:
		return []byte("OK")
	case !ok:
		return errReply
	case !strings.EqualFold(val, string(appendRegHex(nil, regs, n))) && s.allocating:
		s.allocating = false // lldb gives up its call of mmap (allocate)
		return errReply
	case !strings.EqualFold(val, string(appendRegHex(nil, regs, n))):
		return s.refused(errRegReadOnly)
	}
	return []byte("OK")
}

// allocate answers lldb's _M: unsupported. lldb then writes registers to
// call mmap in the process, and gives up at the first that writeRegister
// refuses, quietly: the user asked for an expression, not a write.
func (s *session) allocate(*request) []byte {
	s.allocating = true
	return nil
}

// parseAddrLen parses "addr,length" in hex.
func parseAddrLen(s string) (addr uint64, n uint64, err error) {
	a, l, found := strings.Cut(s, ",")
	if !found {
		return 0, 0, errors.New("want addr,length")
	}
	if addr, err = strconv.ParseUint(a, 16, 64); err != nil {
		return 0, 0, err
	}
	if n, err = strconv.ParseUint(l, 16, 64); err != nil {
		return 0, 0, err
	}
	return addr, n, nil
}

// maxMemRead is the most an 'm' reads: its hex reply fills a packet.
const maxMemRead = (packetSize - 4) / 2

// readMem reads up to n bytes at addr; fewer where the range runs into
// unmapped memory.
func (s *session) readMem(addr, n uint64) []byte {
	buf := make([]byte, n)
	got, err := s.t.ReadMemory(addr, buf)
	if got < 0 || got > len(buf) {
		got = 0
	}
	if got < len(buf) && err != nil {
		s.logf("gdbstub: read %d bytes at %#x: %d, %v", n, addr, got, err)
	}
	return buf[:got]
}

// readMemory answers 'm addr,length' in hex: what could be read, an error
// when nothing could.
func (s *session) readMemory(r *request) []byte {
	addr, n, err := parseAddrLen(r.args)
	if err != nil {
		return errReply
	}
	n = min(n, maxMemRead)
	if n == 0 {
		return []byte{}
	}
	data := s.readMem(addr, n)
	if len(data) == 0 {
		return errReply
	}
	return appendHex(nil, data)
}

// readMemoryBinary answers 'x addr,length'. Without binary-upload it is
// lldb's: "x0,0" gives OK (so lldb and Delve know x works) and data goes
// raw. With binary-upload negotiated it is gdb 16's: the data follows a
// 'b'. Either way the data is escaped.
func (s *session) readMemoryBinary(r *request) []byte {
	addr, n, err := parseAddrLen(r.args)
	if err != nil {
		return errReply
	}
	if n == 0 {
		if s.binaryUpload {
			return []byte("b")
		}
		return []byte("OK")
	}
	n = min(n, maxReply)
	data := s.readMem(addr, n)
	if len(data) == 0 {
		return errReply
	}
	var b []byte
	if s.binaryUpload {
		b = append(b, 'b')
	} else if data[0] == 'E' {
		// Delve takes any reply that starts with 'E' for an error. An
		// escaped byte decodes the same for everyone, so escape this one.
		b, data = append(b, escapeChar, 'E'^0x20), data[1:]
	}
	return escapeBinary(b, data)
}

// parseBreak parses "type,addr,kind" of a Z or z packet, without the
// conditions after it.
func parseBreak(args string) (BreakKind, uint64, int, error) {
	args, _, _ = strings.Cut(args, ";")
	f := strings.Split(args, ",")
	if len(f) != 3 || len(f[0]) != 1 || f[0][0] < '0' || f[0][0] > '4' {
		return 0, 0, 0, errors.New("want type,addr,kind")
	}
	addr, err := strconv.ParseUint(f[1], 16, 64)
	if err != nil {
		return 0, 0, 0, err
	}
	size, err := strconv.ParseUint(f[2], 16, 16)
	if err != nil {
		return 0, 0, 0, err
	}
	return BreakKind(f[0][0] - '0'), addr, int(size), nil
}

func (s *session) insertBreak(r *request) []byte {
	return s.breakpoint(r, s.t.SetBreakpoint, true)
}

func (s *session) removeBreak(r *request) []byte {
	return s.breakpoint(r, s.t.ClearBreakpoint, false)
}

// breakpoint answers Z (insert) or z with op; why an insert failed goes
// to Options.Refused.
func (s *session) breakpoint(r *request, op func(BreakKind, uint64, int) error, insert bool) []byte {
	kind, addr, size, err := parseBreak(r.args)
	if err != nil {
		return errReply
	}
	var conds []condition
	if _, c, ok := strings.Cut(r.args, ";"); ok && insert {
		if kind != BreakSoftware && kind != BreakHardware {
			return errReply
		}
		if conds, err = parseConditions(c); err != nil {
			s.logf("gdbstub: breakpoint at %#x: %v", addr, err)
			return errReply
		}
	}
	switch err := op(kind, addr, size); {
	case err == nil:
		key := breakpoint{kind, addr, size}
		ck := condKey{kind, addr}
		delete(s.conds, ck)
		if insert {
			s.inserted[key] = true
			if len(conds) > 0 {
				// Only conditional ones: with none, a reverse continue
				// keeps the cache of the stops its search passed.
				s.conds[ck] = conds
			}
		} else {
			delete(s.inserted, key)
		}
		return []byte("OK")
	case errors.Is(err, ErrUnsupported):
		return nil
	default:
		s.logf("gdbstub: breakpoint %d at %#x: %v", kind, addr, err)
		if !insert || addr < lowestMappable {
			// Below mmap_min_addr nothing is mapped, and what asked is
			// a client's guess, not its user: lldb 14 sets Z0,0 on a
			// static program, from a _r_debug it found zeroed.
			return errReply
		}
		return s.refused(err)
	}
}

// lowestMappable is Linux's default vm.mmap_min_addr.
const lowestMappable = 0x10000

// breakpoint is one a client inserted (Z).
type breakpoint struct {
	kind BreakKind
	addr uint64
	size int
}

// clearClient takes out of the target what the session's client put in
// and did not take out: its breakpoints, watchpoints and syscall
// catching. A client that went away without detaching (killed) leaves
// them, and the next one (--keep-listening) would stop where it asked
// for none.
func (s *session) clearClient() {
	for b := range s.inserted {
		if err := s.t.ClearBreakpoint(b.kind, b.addr, b.size); err != nil {
			s.logf("gdbstub: clearing breakpoint %d at %#x: %v", b.kind, b.addr, err)
		}
	}
	clear(s.inserted)
	clear(s.conds)
	if sc, ok := s.t.(SyscallCatcher); ok && s.catching {
		_ = sc.CatchSyscalls(false, nil)
		s.catching = false
	}
}
