package strace

import (
	"strconv"
	"strings"
)

// Signal names from <asm/signal.h> (x86-64). Real-time signals run from
// the kernel's SIGRTMIN (32) to _NSIG (64).
var signals = [...]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP",
	6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1",
	11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM",
	16: "SIGSTKFLT", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP", 20: "SIGTSTP",
	21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ",
	26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR",
	31: "SIGSYS",
}

const (
	sigRTMin = 32
	sigRTMax = 64
)

// Signal returns the name of signal signo: "SIGSEGV", "SIGRTMIN",
// "SIGRTMIN+3", "SIGRTMAX" (64), or "signal 99" for a number that is no
// signal.
func Signal(signo int) string {
	if n, ok := signalName(signo); ok {
		return n
	}
	return "signal " + strconv.Itoa(signo)
}

func signalName(signo int) (string, bool) {
	switch {
	case signo > 0 && signo < len(signals):
		return signals[signo], true
	case signo == sigRTMin:
		return "SIGRTMIN", true
	case signo == sigRTMax:
		return "SIGRTMAX", true
	case signo > sigRTMin && signo < sigRTMax:
		return "SIGRTMIN+" + strconv.Itoa(signo-sigRTMin), true
	}
	return "", false
}

// sigArg formats a signal argument: its name, or the number.
func sigArg(v uint64) string {
	if v>>32 == 0 {
		if n, ok := signalName(int(int32(v))); ok {
			return n
		}
	}
	return strconv.FormatInt(int64(int32(v)), 10)
}

// sigsetString formats a 64-bit signal mask as strace does: [INT TERM],
// or ~[...] listing the signals not in it when most are.
func sigsetString(m uint64) string {
	set := 0
	for i := 0; i < 64; i++ {
		if m>>i&1 != 0 {
			set++
		}
	}
	prefix := "["
	if set > 32 {
		m = ^m
		prefix = "~["
	}
	var names []string
	for i := 0; i < 64; i++ {
		if m>>i&1 != 0 {
			n, _ := signalName(i + 1)
			names = append(names, strings.TrimPrefix(n, "SIG"))
		}
	}
	return prefix + strings.Join(names, " ") + "]"
}

// rt_sigprocmask's how from <asm-generic/signal-defs.h>.
var sigHows = map[int64]string{0: "SIG_BLOCK", 1: "SIG_UNBLOCK", 2: "SIG_SETMASK"}

// si_code values from <asm-generic/siginfo.h>.
var siCodes = map[int64]string{
	0: "SI_USER", 0x80: "SI_KERNEL", -1: "SI_QUEUE", -2: "SI_TIMER",
	-3: "SI_MESGQ", -4: "SI_ASYNCIO", -5: "SI_SIGIO", -6: "SI_TKILL",
	-7: "SI_DETHREAD", -60: "SI_ASYNCNL",
}

var sigCodes = map[int][]string{
	4: {1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP",
		5: "ILL_PRVOPC", 6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK", 9: "ILL_BADIADDR"},
	8: {1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF",
		5: "FPE_FLTUND", 6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB",
		14: "FPE_FLTUNK", 15: "FPE_CONDTRAP"},
	11: {1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR",
		5: "SEGV_ACCADI", 6: "SEGV_ADIDERR", 7: "SEGV_ADIPERR", 8: "SEGV_MTEAERR",
		9: "SEGV_MTESERR", 10: "SEGV_CPERR"},
	7: {1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR", 4: "BUS_MCEERR_AR", 5: "BUS_MCEERR_AO"},
	5: {1: "TRAP_BRKPT", 2: "TRAP_TRACE", 3: "TRAP_BRANCH", 4: "TRAP_HWBKPT",
		5: "TRAP_UNK", 6: "TRAP_PERF"},
	17: {1: "CLD_EXITED", 2: "CLD_KILLED", 3: "CLD_DUMPED", 4: "CLD_TRAPPED",
		5: "CLD_STOPPED", 6: "CLD_CONTINUED"},
	29: {1: "POLL_IN", 2: "POLL_OUT", 3: "POLL_MSG", 4: "POLL_ERR", 5: "POLL_PRI", 6: "POLL_HUP"},
	31: {1: "SYS_SECCOMP", 2: "SYS_USER_DISPATCH"},
}

// siCodeString names si_code for signal signo.
func siCodeString(signo int, code int32) string {
	if code > 0 && code < 0x80 {
		if names, ok := sigCodes[signo]; ok && int(code) < len(names) && names[code] != "" {
			return names[code]
		}
	}
	return enum(int64(code), siCodes)
}

// FormatSiginfo returns strace's line for a signal delivery from a raw
// x86-64 siginfo_t (128 bytes; a shorter slice reads as zero-padded):
//
//	--- SIGSEGV {si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=0x0} ---
func FormatSiginfo(si []byte) string {
	var b [128]byte
	copy(b[:], si)
	signo := int(int32(le32(b[0:])))
	errno := int32(le32(b[4:]))
	code := int32(le32(b[8:]))
	i32 := func(off int) string { return itoa(int64(int32(le32(b[off:])))) }
	u32 := func(off int) string { return utoa(uint64(le32(b[off:]))) }
	u64 := func(off int) uint64 { return le64(b[off:]) }

	fields := []string{"si_signo=" + Signal(signo), "si_code=" + siCodeString(signo, code)}
	if errno != 0 {
		n, _ := Errno(int(errno))
		if n == "" {
			n = itoa(int64(errno))
		}
		fields = append(fields, "si_errno="+n)
	}
	switch {
	case code == -2: // SI_TIMER
		fields = append(fields, "si_timerid="+hex(uint64(le32(b[16:]))), "si_overrun="+i32(20),
			"si_int="+i32(24), "si_ptr="+ptr(u64(24)))
	case code <= 0 || code == 0x80 && signo != 11 && signo != 7:
		// Sent by a process (SI_USER, SI_TKILL, SI_QUEUE ...) or the kernel.
		if code != 0x80 {
			fields = append(fields, "si_pid="+i32(16), "si_uid="+u32(20))
			if code == -1 { // SI_QUEUE
				fields = append(fields, "si_int="+i32(24), "si_ptr="+ptr(u64(24)))
			}
		}
	case signo == 17: // SIGCHLD
		status := "si_status=" + i32(24)
		if code == 2 || code == 3 || code == 4 || code == 5 {
			status = "si_status=" + sigArg(uint64(le32(b[24:])))
		}
		fields = append(fields, "si_pid="+i32(16), "si_uid="+u32(20), status,
			"si_utime="+ticks(int64(u64(32))), "si_stime="+ticks(int64(u64(40))))
	case signo == 4 || signo == 8 || signo == 11 || signo == 7 || signo == 5:
		fields = append(fields, "si_addr="+"0x"+strconv.FormatUint(u64(16), 16))
	case signo == 29: // SIGPOLL
		fields = append(fields, "si_band="+itoa(int64(u64(16))), "si_fd="+i32(24))
	case signo == 31: // SIGSYS
		nr := int(int32(le32(b[24:])))
		sc := name(nr)
		if !strings.HasPrefix(sc, "syscall_") {
			sc = "__NR_" + sc
		} else {
			sc = itoa(int64(nr))
		}
		arch := hex(uint64(le32(b[28:])))
		if le32(b[28:]) == 0xc000003e {
			arch = "AUDIT_ARCH_X86_64"
		}
		fields = append(fields, "si_call_addr="+ptr(u64(16)), "si_syscall="+sc, "si_arch="+arch)
	}
	return "--- " + Signal(signo) + " {" + strings.Join(fields, ", ") + "} ---"
}

// ticks formats a count of clock ticks (USER_HZ, 100 on x86-64) with the
// seconds as a comment when nonzero: 1 /* 0.01 s */.
func ticks(t int64) string {
	if t == 0 {
		return "0"
	}
	sec, frac := t/100, t%100
	if frac < 0 {
		frac = -frac
	}
	f := strconv.FormatInt(frac, 10)
	if frac < 10 {
		f = "0" + f
	}
	return itoa(t) + " /* " + itoa(sec) + "." + f + " s */"
}
