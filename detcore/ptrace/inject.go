package ptrace

import (
	"fmt"

	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/sys/unix"
)

// An injector makes a thread stopped at an exec event execute syscalls of
// hermit's own before its new program runs: the first call takes it
// through execve's own exit stop and saves its registers, each call then
// runs at the syscall instruction insn, and done restores the registers.
// The engine never sees these calls (nor does a journal): they are the
// same in every run.
type injector struct {
	tid     int
	insn    uint64
	saved   abi.Regs
	started bool
}

// call executes syscall nr with args and returns its result (a negative
// errno on failure).
func (in *injector) call(nr int, args ...uint64) (int64, error) {
	if !in.started {
		// The exit of execve: from here the thread would return to the
		// new program, with these registers.
		if err := in.step(); err != nil {
			return 0, err
		}
		if err := getRegs(in.tid, &in.saved); err != nil {
			return 0, gone(err)
		}
		in.started = true
	}
	r := in.saved
	r.Rip, r.Rax = in.insn, uint64(nr)
	for i, a := range args {
		r.SetArg(i, a)
	}
	if err := setRegs(in.tid, &r); err != nil {
		return 0, gone(err)
	}
	// The call's entry and exit (a seccomp stop between them is passed).
	for i := 0; i < 2; i++ {
		if err := in.step(); err != nil {
			return 0, err
		}
	}
	if err := getRegs(in.tid, &r); err != nil {
		return 0, gone(err)
	}
	if r.OrigRax != uint64(nr) || r.Rip != in.insn+abi.SyscallInsnLen {
		return 0, fmt.Errorf("injected syscall: stopped in syscall %d at %#x", int64(r.OrigRax), r.Rip)
	}
	return int64(r.Rax), nil
}

// step resumes the thread to its next syscall stop, passing over the
// seccomp stop of a call hermit's filter traces.
func (in *injector) step() error {
	for {
		if err := ptraceRaw(unix.PTRACE_SYSCALL, in.tid, 0, 0); err != nil {
			return gone(err)
		}
		_, ws, err := wait4(in.tid, unix.WALL)
		if err != nil {
			return err
		}
		switch {
		case ws.Stopped() && int(ws.StopSignal()) == int(unix.SIGTRAP)|0x80:
			return nil
		case ws.Stopped() && ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == unix.PTRACE_EVENT_SECCOMP:
			continue
		}
		return fmt.Errorf("injected syscall: unexpected stop %#x", int(ws))
	}
}

// done restores the thread's registers, if a call changed them.
func (in *injector) done() error {
	if !in.started {
		return nil
	}
	return gone(setRegs(in.tid, &in.saved))
}
