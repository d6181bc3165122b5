package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// prctl options (<linux/prctl.h>) that would show hermit's own
// machinery: its seccomp filter, its rdtsc trap and no_new_privs, which
// the launcher sets. The guest is told what an unconfined process is
// told; every other option runs natively.
const (
	prGetSeccomp = 21
	prSetSeccomp = 22
	// PR_SET_SYSCALL_USER_DISPATCH
	prSetSyscallUserDispatch = 59
	seccompSetStrict         = 0 // seccomp(2) operations (<linux/seccomp.h>)
	seccompSetFilter         = 1
	seccompModeStrict        = 1
	seccompModeFilter        = 2
	seccompFilterTsync       = 1 // SECCOMP_FILTER_FLAG_TSYNC
	prGetTSC                 = 25
	prSetTSC                 = 26
	prGetNoNewPrivs          = 39
	prTSCEnable              = 1
	prTSCSigsegv             = 2
	prSetNoNewPrivs          = 38
	noNewPrivsUnset          = 0
	tscModeUnchanged         = 0
)

func sysPrctl(e *Engine, t *thread) {
	switch r := &t.regs; r.Rdi {
	case prGetSeccomp:
		t.emulate(int64(t.seccompMode))
	case prSetSyscallUserDispatch:
		// Its own replaces hermit's (fastfutex.go): no more wakes
		// answered in the process, and the engine leaves the thread's
		// dispatch alone (offSUD would turn the program's off).
		t.proc.ownSUD = true
		t.sudOn = false
	case prSetSeccomp:
		// The guest's own filter goes on top of hermit's (the kernel
		// runs both); PR_GET_SECCOMP then tells its mode.
		noteSeccomp(t, int(r.Rsi), false)
	case prGetNoNewPrivs:
		if t.noNewPrivs {
			t.emulate(1)
			return
		}
		t.emulate(noNewPrivsUnset)
	case prSetNoNewPrivs:
		// Already set by the launcher: remember that the guest asked.
		if r.Rsi != 1 || r.Rdx|r.R10|r.R8 != 0 {
			t.emulate(-abi.EINVAL)
			return
		}
		t.noNewPrivs = true
		t.emulate(0)
	case prGetTSC:
		mode := t.tscMode
		if mode == tscModeUnchanged {
			mode = prTSCEnable
		}
		if !e.writeU32(t, r.Rsi, uint32(mode)) {
			t.emulate(-abi.EFAULT)
			return
		}
		t.emulate(0)
	case prSetTSC:
		// rdtsc stays trapped by hermit; the guest's setting is what
		// PR_GET_TSC reports, and with PR_TSC_SIGSEGV its rdtsc faults
		// (emulateInsn passes the SIGSEGV on). Without hermit's trap the
		// call is the guest's own.
		if r.Rsi != prTSCEnable && r.Rsi != prTSCSigsegv {
			t.emulate(-abi.EINVAL)
			return
		}
		t.tscMode = int(r.Rsi)
		if e.cfg.TrapTSC {
			t.emulate(0)
		}
	}
}

// arch_prctl codes (<asm/prctl.h>) of CPUID faulting.
const (
	archGetCPUID = 0x1011
	archSetCPUID = 0x1012
)

// sysArchPrctl is arch_prctl, which the filter sends to the engine for
// ARCH_GET_CPUID and ARCH_SET_CPUID only (ConditionalSyscalls). Under
// --virtualize-cpuid hermit keeps CPUID faulting on for itself: the
// guest's own setting is what ARCH_GET_CPUID reports, and with cpuid
// turned off its cpuid faults (emulateInsn passes the SIGSEGV on), as
// PR_SET_TSC is kept. Without it the call is the guest's own.
func sysArchPrctl(e *Engine, t *thread) {
	if e.cfg.CPUID == nil {
		return
	}
	switch r := &t.regs; r.Rdi {
	case archGetCPUID:
		if t.noCPUID {
			t.emulate(0)
			return
		}
		t.emulate(1)
	case archSetCPUID:
		t.noCPUID = r.Rsi == 0
		t.emulate(0)
	}
}

// noteSeccomp lets the guest's own seccomp call run and, if it succeeds,
// remembers the mode it set (at its exit: one more stop, for this call).
// With tsync (SECCOMP_FILTER_FLAG_TSYNC) the filter reaches every
// thread of the process.
func noteSeccomp(t *thread, mode int, tsync bool) {
	if mode != seccompModeStrict && mode != seccompModeFilter {
		return
	}
	t.act = actExitStop
	t.onExit = func(e *Engine, t *thread) {
		if t.regs.Rax != 0 {
			return
		}
		t.seccompMode = mode
		e.ownFilter(t)
		if !tsync {
			return
		}
		for _, o := range e.ordered() {
			if o.proc == t.proc {
				o.seccompMode = mode
				e.ownFilter(o)
			}
		}
	}
}

// FilterTracer is implemented by tracers that must know which threads
// run under a seccomp filter of the guest's own (ptrace/count.go).
type FilterTracer interface {
	OwnFilter(tid int)
}

// ownFilter tells the tracer that t runs under a filter of its own, if
// it does.
func (e *Engine) ownFilter(t *thread) {
	if ft, ok := e.t.(FilterTracer); ok && t.seccompMode != 0 {
		ft.OwnFilter(t.tid)
	}
}

// sysSeccomp is seccomp(2): SECCOMP_SET_MODE_STRICT and _FILTER are
// noted as prctl's PR_SET_SECCOMP is.
func sysSeccomp(e *Engine, t *thread) {
	switch t.regs.Rdi {
	case seccompSetStrict:
		noteSeccomp(t, seccompModeStrict, false)
	case seccompSetFilter:
		noteSeccomp(t, seccompModeFilter, t.regs.Rsi&seccompFilterTsync != 0)
	}
}
