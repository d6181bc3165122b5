package abi

import (
	"encoding/binary"
	"testing"
)

// TestRegsBytes: the registers a guest's PTRACE_GETREGS reads are laid
// out as struct user_regs_struct, and SETREGS reads them back the same.
func TestRegsBytes(t *testing.T) {
	r := Regs{R15: 1, Rax: 11, OrigRax: 16, Rip: 17, Rsp: 20, Gs: 27}
	b := r.Bytes()
	if len(b) != 27*8 {
		t.Fatalf("len = %d, want %d", len(b), 27*8)
	}
	for i, want := range map[int]uint64{0: 1, 10: 11, 15: 16, 16: 17, 19: 20, 26: 27, 1: 0} {
		if got := binary.LittleEndian.Uint64(b[8*i:]); got != want {
			t.Errorf("word %d = %d, want %d", i, got, want)
		}
	}
	var back Regs
	back.SetBytes(b)
	if back != r {
		t.Errorf("SetBytes(Bytes()) = %+v, want %+v", back, r)
	}
	short := Regs{Rip: 5}
	short.SetBytes(b[:8*11])
	if short.R15 != 1 || short.Rax != 11 || short.Rip != 5 {
		t.Errorf("a short buffer sets only the registers it holds: %+v", short)
	}
}

// TestNumArgs spot-checks the argument counts against the calls' C
// declarations.
func TestNumArgs(t *testing.T) {
	for nr, want := range map[int]int{
		SYS_READ: 3, SYS_MMAP: 6, SYS_ACCESS: 2, SYS_CLOSE: 1, SYS_GETPID: 0, SYS_FUTEX: 6,
		SYS_OPENAT: 4, SYS_NEWFSTATAT: 4, SYS_WAIT4: 4, SYS_WAITID: 5, SYS_PRCTL: 5, SYS_CLONE: 5,
		SYS_EXIT_GROUP: 1, SYS_RSEQ: 4, SYS_PRLIMIT64: 4, SYS_STATX: 5, SYS_GETRANDOM: 3,
		SYS_CLONE3: 2, SYS_OPENAT2: 4, SYS_EPOLL_PWAIT2: 6, SYS_FACCESSAT2: 4, 100000: 6,
	} {
		if got := NumArgs(nr); got != want {
			t.Errorf("NumArgs(%s) = %d, want %d", SyscallName(nr), got, want)
		}
	}
}
