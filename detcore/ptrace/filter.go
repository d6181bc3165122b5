package ptrace

import (
	"encoding/binary"
	"encoding/hex"
	"slices"
	"sort"

	"github.com/hermitdbg/hermit/detcore"
	"golang.org/x/sys/unix"
)

// seccomp_data offsets from <linux/seccomp.h>.
const (
	offNr   = 0
	offArch = 4
	offIP   = 8  // instruction_pointer: the low half, then the high
	offArgs = 16 // args[6], 8 bytes each; the low half first
)

// buildFilter returns a seccomp program that sends the syscalls in traced
// to the tracer (SECCOMP_RET_TRACE), and those in conditional that are
// not in traced under their condition, and allows everything else. The
// numbers are compared as a balanced binary tree, so an allowed syscall
// costs about log2(len(traced)) comparisons; negative numbers (no call:
// -1 is a call a tracer skipped) are allowed, and so is every call made
// from the fast-write page (fastio.go), which is looked at only where a
// call would go to the tracer: a syscall the program allows whatever its
// arguments is decided by its number alone, which the kernel's seccomp
// cache (Linux 5.11) then allows without running the program (it ran on
// every call when the page came first: 200k getppid cost 1.97x native,
// now 1.51x, startup excluded, on Linux 6.18 with its BPF JIT).
// Non-x86-64 (int $0x80) and x32 calls trap (SIGSYS): the
// engine says what they are and fails them with ENOSYS
// (detcore/signals.go).
func buildFilter(traced []int, conditional map[int]detcore.ArgCondition) []unix.SockFilter {
	nrs := append([]int(nil), traced...)
	conds := map[int]detcore.ArgCondition{}
	for nr, c := range conditional {
		if !slices.Contains(traced, nr) {
			conds[nr] = c
			nrs = append(nrs, nr)
		}
	}
	sort.Ints(nrs)
	nrs = slices.Compact(nrs)
	enosys := uint32(unix.SECCOMP_RET_TRAP)
	prog := []unix.SockFilter{
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.AUDIT_ARCH_X86_64, 1, 0),
		stmt(unix.BPF_RET|unix.BPF_K, enosys),
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
		// A negative number is no call (the kernel fails it with
		// ENOSYS; -1 is how a guest's tracer skips one).
		jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, 0x80000000, 0, 1),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, 0x40000000, 0, 1),
		stmt(unix.BPF_RET|unix.BPF_K, enosys),
	}
	prog = append(prog, tree(nrs, conds)...)
	// Each call the tree would trace comes here: one from the fast-write
	// page (fastio.go) runs.
	fast := len(prog)
	for i, f := range prog {
		if f == traceMark {
			prog[i] = stmt(unix.BPF_JMP|unix.BPF_JA, uint32(fast-i-1))
		}
	}
	return append(prog,
		// hermit's own calls, in code it runs in the guest at an exec
		// (testdata/vclock.S, vc_map), which carry injectedMark.
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArgs+8*3+4),
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, injectedMark, 0, 5),
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SYS_MMAP, 2, 0),
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SYS_MEMFD_CREATE, 1, 0),
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SYS_CLOSE, 0, 1),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offIP+4),
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, fioFast>>32, 0, 4),
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offIP),
		jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, fioFast&0xffffffff, 0, 2),
		jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, fioFast&0xffffffff+0x1000, 1, 0),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_TRACE))
}

// injectedMark is the high half of the fourth argument of the mmap,
// memfd_create and close calls hermit's code makes in the guest at an
// exec (INJECTED in testdata/vclock.S): the filter lets them through
// without a stop, which cost a tracer round trip each (four at every
// exec). No program's call has it there by chance: the argument is a
// flag word (mmap's, read by the kernel as an int), an address below
// 2^47, or unused, and an unused register would have to hold exactly this.
const injectedMark = 0x6865726d

// traceMark stands in the tree for "trace this call", which buildFilter
// makes a jump to its look at the fast-write page.
var traceMark = stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_TRACE|0xffff)

// tree emits the comparisons for a sorted, non-empty or empty list; a
// syscall with a condition in conds or from detcore.TracedWhen is traced
// only under it; one detcore.FilterErrno names is failed by the filter.
func tree(nrs []int, conds map[int]detcore.ArgCondition) []unix.SockFilter {
	allow := stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW)
	trace := traceMark
	switch len(nrs) {
	case 0:
		return []unix.SockFilter{allow}
	case 1:
		if c, ok := conds[nrs[0]]; ok {
			return condLeaf(nrs[0], c)
		}
		if c, ok := detcore.TracedWhen(nrs[0]); ok {
			return condLeaf(nrs[0], c)
		}
		if errno, ok := detcore.FilterErrno(nrs[0]); ok {
			return []unix.SockFilter{
				jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, uint32(nrs[0]), 0, 1),
				stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(errno)), allow,
			}
		}
		return []unix.SockFilter{
			jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, uint32(nrs[0]), 0, 1),
			trace, allow,
		}
	}
	mid := len(nrs) / 2
	left, right := tree(nrs[:mid], conds), tree(nrs[mid:], conds)
	var out []unix.SockFilter
	if len(left) <= 255 {
		// A >= nrs[mid]: skip the left subtree.
		out = []unix.SockFilter{jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, uint32(nrs[mid]), uint8(len(left)), 0)}
	} else {
		// Too far for a conditional jump's 8-bit offset: jump always.
		out = []unix.SockFilter{
			jump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, uint32(nrs[mid]), 0, 1),
			stmt(unix.BPF_JMP|unix.BPF_JA, uint32(len(left))),
		}
	}
	out = append(out, left...)
	return append(out, right...)
}

// condLeaf traces syscall nr only when the low 32 bits of its argument
// c.Arg are one of c.Values (or have one of the flags c.Mask).
func condLeaf(nr int, c detcore.ArgCondition) []unix.SockFilter {
	if c.Mask != 0 {
		return []unix.SockFilter{
			jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, uint32(nr), 0, 2),
			stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, uint32(offArgs+8*c.Arg)),
			jump(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, c.Mask, 1, 0),
			stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
			traceMark,
		}
	}
	n := len(c.Values)
	out := []unix.SockFilter{
		jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, uint32(nr), 0, uint8(n+1)),
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, uint32(offArgs+8*c.Arg)),
	}
	for i, v := range c.Values {
		out = append(out, jump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, v, uint8(n-i), 0))
	}
	return append(out,
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		traceMark)
}

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// encodeFilter serializes prog as the launcher reads it: struct
// sock_filter in host (little-endian) order, hex-encoded.
func encodeFilter(prog []unix.SockFilter) string {
	b := make([]byte, 0, 8*len(prog))
	for _, f := range prog {
		b = binary.LittleEndian.AppendUint16(b, f.Code)
		b = append(b, f.Jt, f.Jf)
		b = binary.LittleEndian.AppendUint32(b, f.K)
	}
	return hex.EncodeToString(b)
}
