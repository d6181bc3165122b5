package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Hardware debug registers, for watchpoints and for telling a single-step
// trap from a breakpoint: DR0–DR3 hold addresses, DR6 says what trapped,
// DR7 enables and shapes DR0–DR3. ptrace reaches them through the
// u_debugreg array of struct user (<sys/user.h>), at offset 848 on x86-64.
// The kernel keeps them per thread: a new thread starts with none, and
// execve clears them.
const debugRegOffset = 848

// dr7Enables are DR7's local and global enable bits of DR0–DR3.
const dr7Enables = 0xff

// ErrDebugRegsDead is SetDebugReg's refusal to enable a debug register on
// a machine where they never trigger (DebugRegsTrigger).
var ErrDebugRegsDead = errors.New("this machine's debug registers never trigger (a probe's hardware breakpoint did not fire: its hypervisor does not pass them through), so hermit cannot watch memory or set hardware breakpoints here")

// checkDebugReg rejects DR4 and DR5 (obsolete aliases of DR6 and DR7) and
// anything past DR7.
func checkDebugReg(i int) error {
	if i < 0 || i > 7 || i == 4 || i == 5 {
		return fmt.Errorf("no debug register DR%d", i)
	}
	return nil
}

// DebugReg returns debug register DRi of stopped thread tid. An error
// wraps detcore.ErrGone when the thread no longer exists.
func (t *Tracer) DebugReg(tid, i int) (uint64, error) {
	if err := checkDebugReg(i); err != nil {
		return 0, err
	}
	var b [8]byte
	if _, err := unix.PtracePeekUser(tid, uintptr(debugRegOffset+8*i), b[:]); err != nil {
		return 0, fmt.Errorf("reading DR%d of thread %d: %w", i, tid, gone(err))
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// SetDebugReg sets debug register DRi of stopped thread tid to v. The
// kernel validates the value: an address must be a user address, and DR7
// may only enable an address aligned to its length (EINVAL otherwise). An
// error wraps detcore.ErrGone when the thread no longer exists.
func (t *Tracer) SetDebugReg(tid, i int, v uint64) error {
	if err := checkDebugReg(i); err != nil {
		return err
	}
	if i == 7 && v&dr7Enables != 0 && !DebugRegsTrigger() {
		return ErrDebugRegsDead
	}
	// POKEUSER takes the word itself as its data argument.
	if err := ptraceRaw(unix.PTRACE_POKEUSR, tid, uintptr(debugRegOffset+8*i), uintptr(v)); err != nil {
		return fmt.Errorf("setting DR%d of thread %d to %#x: %w", i, tid, v, gone(err))
	}
	return nil
}
