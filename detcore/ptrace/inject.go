package ptrace

import (
	"fmt"

	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/sys/unix"
)

// An injector makes a thread stopped at an exec event execute syscalls of
// hermit's own before its new program runs, one at a time (call: the
// first takes it through execve's own exit stop, each runs at the syscall
// instruction insn) or as code of hermit's written into its memory
// (start, cont: it runs from int3 to int3, one stop each); done restores
// the registers. The engine never sees these calls (nor does a journal):
// they are the same in every run.
type injector struct {
	tid     int
	insn    uint64
	saved   abi.Regs
	started bool
	// atExit: the thread was taken to execve's own exit stop.
	atExit bool
	// signals came for the thread while hermit's code ran.
	signals []unix.Signal
	// r15 is what start puts in r15.
	r15 uint64
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
		in.started, in.atExit = true, true
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

// start runs the code at addr (hermit's, written there) from the
// thread's registers, to its first int3.
func (in *injector) start(addr uint64) (abi.Regs, error) {
	if !in.started {
		if err := getRegs(in.tid, &in.saved); err != nil {
			return abi.Regs{}, gone(err)
		}
		if !in.atExit {
			// At the exec event execve has not returned yet: the program
			// starts with its result, 0, in rax.
			in.saved.Rax = 0
		}
		in.started = true
	}
	r := in.saved
	r.Rip = addr
	r.R15 = in.r15
	if err := setRegs(in.tid, &r); err != nil {
		return r, gone(err)
	}
	return in.cont()
}

// cont resumes the thread to its next int3 and returns its registers
// there, passing over the seccomp stops of calls hermit's filter traces.
func (in *injector) cont() (abi.Regs, error) {
	var r abi.Regs
	for {
		if err := ptraceRaw(unix.PTRACE_CONT, in.tid, 0, 0); err != nil {
			return r, gone(err)
		}
		_, ws, err := wait4(in.tid, unix.WALL)
		if err != nil {
			return r, err
		}
		switch {
		case !ws.Stopped():
			return r, fmt.Errorf("hermit's code in the guest: the thread ended (status %#x)", int(ws))
		case ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == unix.PTRACE_EVENT_SECCOMP:
			continue
		case ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() <= 0:
			return r, gone(getRegs(in.tid, &r))
		case ws.TrapCause() <= 0:
			// A signal for the thread: it is sent again once its
			// registers are back (done).
			in.signals = append(in.signals, ws.StopSignal())
			continue
		}
		return r, fmt.Errorf("hermit's code in the guest: unexpected stop %#x", int(ws))
	}
}

// done restores the thread's registers, if a call changed them.
func (in *injector) done() error {
	if !in.started {
		return nil
	}
	if err := setRegs(in.tid, &in.saved); err != nil {
		return gone(err)
	}
	for _, sig := range in.signals {
		// At an exec the thread leads its group: tgid = tid.
		if err := unix.Tgkill(in.tid, in.tid, sig); err != nil {
			return fmt.Errorf("sending %v again to thread %d: %w", sig, in.tid, gone(err))
		}
	}
	return nil
}
