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

	"golang.org/x/sys/unix"
)

// atRandomTag is AT_RANDOM from <linux/auxvec.h>.
const atRandomTag = 25

// OnExec implements detcore.Tracer.OnExec.
func (t *Tracer) OnExec(tid int, atRandom [16]byte) error {
	insn, err := t.patchVDSO(tid)
	if err != nil {
		return fmt.Errorf("patching the vDSO: %w", err)
	}
	if t.trapCPUID && insn != 0 {
		if err := t.enableCPUIDFaulting(tid, insn); err != nil {
			return fmt.Errorf("making CPUID trap: %w", err)
		}
	}
	addr, err := auxvValue(tid, atRandomTag)
	if err != nil {
		return fmt.Errorf("reading the auxiliary vector: %w", err)
	}
	if addr != 0 {
		return t.WriteMem(tid, addr, atRandom[:])
	}
	return nil
}

func auxvValue(tid int, tag uint64) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", tid))
	if err != nil {
		return 0, gone(err)
	}
	for i := 0; i+16 <= len(b); i += 16 {
		if binary.LittleEndian.Uint64(b[i:]) == tag {
			return binary.LittleEndian.Uint64(b[i+8:]), nil
		}
	}
	return 0, nil
}

// vdsoStubs maps each vDSO function hermit replaces to its 8-byte stub.
// The time functions make the real syscall (which the seccomp filter sends
// to the engine); getrandom returns -ENOSYS so that callers fall back to
// the getrandom syscall.
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

// patchVDSO overwrites the entry points of the vDSO's time functions in
// tid's address space with stubs that make the real syscall. It returns
// the address of one stub's syscall instruction, for injecting syscalls.
func (t *Tracer) patchVDSO(tid int) (uint64, error) {
	start, end, err := vdsoRange(tid)
	if err != nil || start == 0 {
		return 0, err
	}
	img := make([]byte, end-start)
	if err := t.ReadMem(tid, start, img); err != nil {
		return 0, err
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return 0, fmt.Errorf("parsing: %w", err)
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
		return 0, fmt.Errorf("reading symbols: %w", err)
	}
	mem, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", tid), os.O_WRONLY, 0)
	if err != nil {
		return 0, gone(err)
	}
	defer mem.Close()
	var insn uint64
	for _, s := range syms {
		stub, ok := vdsoStubs[s.Name]
		if !ok {
			continue
		}
		if s.Size != 0 && s.Size < uint64(len(stub)) {
			return 0, fmt.Errorf("%s is %d bytes, too small for a stub", s.Name, s.Size)
		}
		if _, err := mem.WriteAt(stub[:], int64(base+s.Value)); err != nil {
			return 0, fmt.Errorf("writing %s: %w", s.Name, err)
		}
		if stub[5] == 0x0f && stub[6] == 0x05 {
			insn = base + s.Value + 5
		}
	}
	return insn, nil
}

// vdsoRange finds the [vdso] mapping in /proc/TID/maps.
func vdsoRange(tid int) (uint64, uint64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", tid))
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
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", tid))
	if err != nil {
		return 0, 0, 0, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		// start-end perms offset major:minor inode path
		fs := strings.Fields(s.Text())
		if len(fs) < 5 {
			continue
		}
		lo, hi, _ := strings.Cut(fs[0], "-")
		start, _ := strconv.ParseUint(lo, 16, 64)
		end, _ := strconv.ParseUint(hi, 16, 64)
		if addr < start || addr >= end {
			continue
		}
		if len(fs[1]) < 4 || fs[1][3] != 's' {
			return 0, 0, 0, false
		}
		offset, _ := strconv.ParseUint(fs[2], 16, 64)
		maj, min, _ := strings.Cut(fs[3], ":")
		ma, _ := strconv.ParseUint(maj, 16, 64)
		mi, _ := strconv.ParseUint(min, 16, 64)
		inode, _ := strconv.ParseUint(fs[4], 10, 64)
		return ma<<32 | mi, inode, offset + addr - start, true
	}
	return 0, 0, 0, false
}
