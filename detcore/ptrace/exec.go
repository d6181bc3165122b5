package ptrace

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/detcore"
	"golang.org/x/sys/unix"
)

// atRandomTag is AT_RANDOM from <linux/auxvec.h>.
const atRandomTag = 25

// OnExec implements detcore.Tracer.OnExec.
func (t *Tracer) OnExec(tid int, atRandom [16]byte, filtered bool) (detcore.Exec, error) {
	t.dropHeld() // the thread runs code of hermit's
	var x detcore.Exec
	auxv, err := readProcFile(fmt.Sprintf("/proc/%d/auxv", tid))
	if err != nil {
		return x, fmt.Errorf("reading the auxiliary vector: %w", gone(err))
	}
	v, err := t.readVDSO(tid, auxvValue(auxv, atSysinfoEhdr))
	if err != nil {
		return x, fmt.Errorf("reading the vDSO: %w", err)
	}
	defer v.close()
	in := &injector{tid: tid}
	if v == nil {
		x.NoClock = "it has no vDSO"
	} else {
		if in.insn, err = v.writeStubs(); err != nil {
			return x, fmt.Errorf("patching the vDSO: %w", err)
		}
	}
	if err := v.flush(); err != nil {
		return x, fmt.Errorf("patching the vDSO: %w", err)
	}
	if t.trapCPUID && in.insn != 0 {
		if err := enableCPUIDFaulting(in); err != nil {
			return x, fmt.Errorf("making CPUID trap: %w", err)
		}
	}
	switch {
	case v == nil:
	case filtered:
		// A filter of the guest's own could refuse (or kill for) the
		// calls that map the page.
		x.NoClock = "it runs under a seccomp filter of its own"
	default:
		// Last: it replaces stubs whose syscall instruction in uses.
		var exe uint64
		if ph := auxvValue(auxv, atPhdr); ph >= 64 {
			exe = ph - 64
		}
		if x.Clock, x.NoClock, err = t.clockPage(in, v, exe); err != nil {
			return x, fmt.Errorf("mapping the clock page: %w", err)
		}
	}
	if err := in.done(); err != nil {
		return x, err
	}
	x.Returned = in.started
	x.Images[0] = auxvValue(auxv, atBase)
	if ph := auxvValue(auxv, atPhdr); ph >= 64 {
		x.Images[1] = ph - 64
	}
	if addr := auxvValue(auxv, atRandomTag); addr != 0 {
		return x, t.WriteMem(tid, addr, atRandom[:])
	}
	return x, nil
}

// atSysinfoEhdr is AT_SYSINFO_EHDR: where the vDSO's ELF header is.
const atSysinfoEhdr = 33

// atPhdr and atBase are AT_PHDR, where the executable's program headers
// are, and AT_BASE, where the interpreter's ELF header is (0: none).
const (
	atPhdr = 3
	atBase = 7
)

// auxvValue returns the value of tag in an auxiliary vector, 0 if absent.
func auxvValue(b []byte, tag uint64) uint64 {
	for i := 0; i+16 <= len(b); i += 16 {
		if binary.LittleEndian.Uint64(b[i:]) == tag {
			return binary.LittleEndian.Uint64(b[i+8:])
		}
	}
	return 0
}

// vdsoStubs maps each vDSO function hermit replaces to its 8-byte stub.
// The time functions make the real syscall (which the seccomp filter sends
// to the engine) unless the clock page's code replaces them (vclock.go);
// getrandom returns -ENOSYS so that callers fall back to the getrandom
// syscall.
var vdsoStubs = map[string][8]byte{
	"__vdso_clock_gettime": syscallStub(unix.SYS_CLOCK_GETTIME),
	"__vdso_gettimeofday":  syscallStub(unix.SYS_GETTIMEOFDAY),
	"__vdso_time":          syscallStub(unix.SYS_TIME),
	"__vdso_clock_getres":  syscallStub(unix.SYS_CLOCK_GETRES),
	"__vdso_getcpu":        syscallStub(unix.SYS_GETCPU),
	// mov rax, -ENOSYS; ret
	"__vdso_getrandom": {0x48, 0xc7, 0xc0, 0xda, 0xff, 0xff, 0xff, 0xc3},
}

// syscallStub is `mov eax, nr; syscall; ret`.
func syscallStub(nr int) [8]byte {
	return [8]byte{0xb8, byte(nr), byte(nr >> 8), 0, 0, 0x0f, 0x05, 0xc3}
}

// vdso is a process's vDSO: its functions by name.
type vdso struct {
	tid  int
	syms map[string]elf.Symbol // Value: the address in the process
	// mem is the process's /proc/PID/mem, opened by the first flush.
	mem *os.File
	// img is a copy of the vDSO, from start, that write changes; flush
	// writes its bytes from lo to hi into the process in one go (a write
	// of /proc/PID/mem each cost about 6 µs, eight at every exec).
	start, lo, hi uint64
	img           []byte
}

// vdsoImage is a parsed vDSO: every process of one kernel has the same one
// (at the same address, ASLR being off), so the tracer parses it once.
type vdsoImage struct {
	start uint64
	img   []byte
	syms  map[string]elf.Symbol
}

// readVDSO parses tid's vDSO, whose ELF header is at ehdr (0: it has
// none, and readVDSO returns nil).
func (t *Tracer) readVDSO(tid int, ehdr uint64) (*vdso, error) {
	if ehdr == 0 {
		return nil, nil
	}
	if c := t.vdsoCache; c != nil && c.start == ehdr {
		img := make([]byte, len(c.img))
		if err := t.ReadMem(tid, ehdr, img); err != nil {
			return nil, err
		}
		if bytes.Equal(img, c.img) {
			return &vdso{tid: tid, syms: c.syms, start: ehdr, img: img}, nil
		}
	}
	start, end, err := vdsoRange(tid)
	if err != nil || start == 0 {
		return nil, err
	}
	img := make([]byte, end-start)
	if err := t.ReadMem(tid, start, img); err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("parsing: %w", err)
	}
	var base uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			base = start - p.Vaddr
			break
		}
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("reading symbols: %w", err)
	}
	v := &vdso{tid: tid, syms: map[string]elf.Symbol{}}
	for _, s := range syms {
		s.Value += base
		v.syms[s.Name] = s
	}
	t.vdsoCache = &vdsoImage{start: start, img: img, syms: v.syms}
	v.start, v.img = start, bytes.Clone(img)
	return v, nil
}

// write writes b at addr in the vDSO, for flush to put into the process.
func (v *vdso) write(addr uint64, b []byte) error {
	if addr < v.start || addr+uint64(len(b)) > v.start+uint64(len(v.img)) {
		return fmt.Errorf("writing %d bytes at %#x: out of the vDSO", len(b), addr)
	}
	copy(v.img[addr-v.start:], b)
	if v.hi == 0 {
		v.lo, v.hi = addr, addr
	}
	v.lo, v.hi = min(v.lo, addr), max(v.hi, addr+uint64(len(b)))
	return nil
}

// flush writes what write changed into the process's vDSO (through
// /proc/PID/mem: its pages are not writable); the code hermit runs there
// must be in place first. v may be nil.
func (v *vdso) flush() error {
	if v == nil || v.hi == 0 {
		return nil
	}
	if v.mem == nil {
		mem, err := procOpenFile(fmt.Sprintf("/proc/%d/mem", v.tid), os.O_WRONLY)
		if err != nil {
			return gone(err)
		}
		v.mem = mem
	}
	_, err := v.mem.WriteAt(v.img[v.lo-v.start:v.hi-v.start], int64(v.lo))
	v.lo, v.hi = 0, 0
	return err
}

// close closes what write opened; v may be nil.
func (v *vdso) close() {
	if v != nil && v.mem != nil {
		v.mem.Close()
		v.mem = nil
	}
}

// writeStubs overwrites the entry points of the vDSO's time functions
// with stubs that make the real syscall. It returns the address of one
// stub's syscall instruction, for injecting syscalls.
func (v *vdso) writeStubs() (uint64, error) {
	var insn uint64
	for name, stub := range vdsoStubs {
		s, ok := v.syms[name]
		if !ok {
			continue
		}
		if s.Size != 0 && s.Size < uint64(len(stub)) {
			return 0, fmt.Errorf("%s is %d bytes, too small for a stub", s.Name, s.Size)
		}
		if err := v.write(s.Value, stub[:]); err != nil {
			return 0, fmt.Errorf("writing %s: %w", s.Name, err)
		}
		if stub[5] == 0x0f && stub[6] == 0x05 && (insn == 0 || s.Value+5 < insn) {
			insn = s.Value + 5
		}
	}
	return insn, nil
}

// vdsoRange finds the [vdso] mapping in /proc/TID/maps.
func vdsoRange(tid int) (uint64, uint64, error) {
	f, err := procOpen(fmt.Sprintf("/proc/%d/maps", tid))
	if err != nil {
		return 0, 0, gone(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if !strings.HasSuffix(line, "[vdso]") {
			continue
		}
		lo, hi, _ := strings.Cut(strings.Fields(line)[0], "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("bad maps line %q", line)
		}
		return a, b, nil
	}
	return 0, 0, s.Err()
}

// SharedMapping implements detcore.Tracer.SharedMapping from
// /proc/TID/maps.
func (t *Tracer) SharedMapping(tid int, addr uint64) (dev, ino, off uint64, ok bool) {
	fs, start, ok := mappingAt(tid, addr)
	if !ok || len(fs[1]) < 4 || fs[1][3] != 's' {
		return 0, 0, 0, false
	}
	offset, _ := strconv.ParseUint(fs[2], 16, 64)
	maj, min, _ := strings.Cut(fs[3], ":")
	ma, _ := strconv.ParseUint(maj, 16, 64)
	mi, _ := strconv.ParseUint(min, 16, 64)
	inode, _ := strconv.ParseUint(fs[4], 10, 64)
	return ma<<32 | mi, inode, offset + addr - start, true
}

// FileCode implements detcore.SpinTrapTracer.FileCode from
// /proc/TID/maps: perms r-xp and a file's path.
func (t *Tracer) FileCode(tid int, addr uint64) bool {
	fs, _, ok := mappingAt(tid, addr)
	return ok && len(fs) >= 6 && fs[1] == "r-xp" && fs[4] != "0" && strings.HasPrefix(fs[5], "/")
}

// mappingAt returns the fields of the line of /proc/TID/maps that maps
// addr (start-end perms offset major:minor inode [path]), and its start.
func mappingAt(tid int, addr uint64) ([]string, uint64, bool) {
	f, err := procOpen(fmt.Sprintf("/proc/%d/maps", tid))
	if err != nil {
		return nil, 0, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fs := strings.Fields(s.Text())
		if len(fs) < 5 {
			continue
		}
		lo, hi, _ := strings.Cut(fs[0], "-")
		start, _ := strconv.ParseUint(lo, 16, 64)
		end, _ := strconv.ParseUint(hi, 16, 64)
		if addr >= start && addr < end {
			return fs, start, true
		}
	}
	return nil, 0, false
}
