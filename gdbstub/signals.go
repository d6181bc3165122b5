package gdbstub

// GDB numbers signals its own way (gdb/gdbsupport/signals.def), and the
// stop replies use that numbering, except to lldb: told by qHostInfo that
// the host is Linux, lldb (14 and 19 alike) reads them as Linux's (a GDB
// SIGUSR1, 30, showed as SIGPWR).

// Signals as gdb numbers them.
const (
	gdbSIGINT     = 2
	gdbSIGTRAP    = 5
	gdbSIGKILL    = 9
	gdbSIGUnknown = 143 // GDB_SIGNAL_UNKNOWN

	gdbRealtime33 = 45 // GDB_SIGNAL_REALTIME_33; 34…63 follow it
	gdbRealtime32 = 77 // GDB_SIGNAL_REALTIME_32
	gdbRealtime64 = 78 // GDB_SIGNAL_REALTIME_64
)

// linuxToGDB maps Linux x86-64 signals 1–31 (asm/signal.h) to gdb's
// numbers. SIGSTKFLT has no gdb number.
var linuxToGDB = [32]int{
	0,             // 0: no signal
	1,             // SIGHUP
	2,             // SIGINT
	3,             // SIGQUIT
	4,             // SIGILL
	5,             // SIGTRAP
	6,             // SIGABRT
	10,            // SIGBUS
	8,             // SIGFPE
	9,             // SIGKILL
	30,            // SIGUSR1
	11,            // SIGSEGV
	31,            // SIGUSR2
	13,            // SIGPIPE
	14,            // SIGALRM
	15,            // SIGTERM
	gdbSIGUnknown, // SIGSTKFLT
	20,            // SIGCHLD
	19,            // SIGCONT
	17,            // SIGSTOP
	18,            // SIGTSTP
	21,            // SIGTTIN
	22,            // SIGTTOU
	16,            // SIGURG
	24,            // SIGXCPU
	25,            // SIGXFSZ
	26,            // SIGVTALRM
	27,            // SIGPROF
	28,            // SIGWINCH
	23,            // SIGIO (SIGPOLL)
	32,            // SIGPWR
	12,            // SIGSYS
}

// linuxSIGSTOP is SIGSTOP as Linux numbers it.
const linuxSIGSTOP = 19

// signal numbers Linux signal sig for the client (see above). SIGINT and
// SIGTRAP have the same number in both.
func (s *session) signal(sig int) int {
	if s.native {
		return sig
	}
	return gdbSignal(sig)
}

// gdbSignal converts Linux signal sig to gdb's numbering.
func gdbSignal(sig int) int {
	switch {
	case sig >= 0 && sig < len(linuxToGDB):
		return linuxToGDB[sig]
	case sig == 32:
		return gdbRealtime32
	case sig >= 33 && sig <= 63:
		return gdbRealtime33 + sig - 33
	case sig == 64:
		return gdbRealtime64
	}
	return gdbSIGUnknown
}
