package ptrace

/*
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

// hermit_tsc_traps reports whether rdtsc faults in a process that asked
// for it with PR_SET_TSC(PR_TSC_SIGSEGV): 1 yes, 0 no, -1 unknown. The
// child is a vfork's (it shares the memory, not the signal actions, and
// PR_SET_TSC is its own): no copy of hermit's page tables, which costs
// milliseconds on a VM, for a probe --summary makes at every run. Every
// signal is blocked across it, so that none runs a Go handler in the
// child; the fault's SIGSEGV still kills it (the kernel forces a blocked
// synchronous signal to its default action).
static int hermit_tsc_traps(void) {
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t p = vfork();
	if (p == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = SIG_DFL;
		sigaction(SIGSEGV, &sa, 0);
		if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0)
			_exit(2);
		unsigned lo, hi;
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		_exit(0);
	}
	pthread_sigmask(SIG_SETMASK, &old, 0);
	if (p < 0)
		return -1;
	int st;
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(st))
		return WTERMSIG(st) == SIGSEGV;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static volatile long hermit_probe_word;

// hermit_write_breaks counts the hits of a hardware write breakpoint on a
// word this thread writes 4 times; -1 if none can be set here.
static long hermit_write_breaks(void) {
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof a;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (unsigned long)&hermit_probe_word;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		return -1;
	for (int i = 0; i < 4; i++)
		hermit_probe_word = i;
	long long n = -1;
	if (read(fd, &n, sizeof n) != sizeof n)
		n = -1;
	close(fd);
	return n;
}
*/
import "C"

import (
	"runtime"
	"sync"
)

// Machines differ in what their virtualization passes through: some trap
// rdtsc for a process that asks (PR_SET_TSC) and trigger the debug
// registers, others accept both requests and never act on them. hermit
// probes once and says so rather than act as if they worked.

// TSCTraps reports whether rdtsc faults, on this machine, in a process
// that asks for it with PR_SET_TSC: without it hermit cannot answer rdtsc
// from the virtual clock.
var TSCTraps = sync.OnceValue(func() bool { return C.hermit_tsc_traps() != 0 })

// DebugRegsTrigger reports whether a hardware watchpoint set in the debug
// registers stops the thread that writes the memory on this machine (a
// write breakpoint on a probe word counted its writes).
var DebugRegsTrigger = sync.OnceValue(func() bool {
	runtime.LockOSThread()
	n := C.hermit_write_breaks()
	runtime.UnlockOSThread()
	// Where no breakpoint can be set the debug registers are not known
	// to fail: ptrace's own use of them decides.
	return n != 0
})
