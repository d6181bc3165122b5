/* child_times: a child burns CPU and exits; the parent prints the CPU
 * times the kernel reports with it: in the SIGCHLD's siginfo, and in
 * waitid's. Natively they count the child's ticks (the user time at
 * least is not 0); under hermit they are 0, as in wait4's rusage: they
 * are the host's measure, which differs from run to run.
 */
#include "guest.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

static volatile sig_atomic_t got;
static siginfo_t info;

static void on_child(int sig, siginfo_t *si, void *ctx) {
	(void)sig;
	(void)ctx;
	info = *si;
	got = 1;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_child;
	sa.sa_flags = SA_SIGINFO;
	CHECK(sigaction(SIGCHLD, &sa, NULL) == 0);
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	CHECK(sigprocmask(SIG_BLOCK, &block, &old) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		volatile unsigned long x = 0;
		for (unsigned long i = 0; i < 300000000UL; i++) /* ~0.1 s natively */
			x += i;
		_exit(0);
	}
	while (!got)
		sigsuspend(&old);
	say("SIGCHLD: code %d, status %d, utime %ld, stime %ld\n", info.si_code, info.si_status, (long)info.si_utime, (long)info.si_stime);
	siginfo_t w;
	memset(&w, 0, sizeof w);
	CHECK(waitid(P_PID, pid, &w, WEXITED) == 0);
	say("waitid: code %d, status %d, utime %ld, stime %ld\n", w.si_code, w.si_status, (long)w.si_utime, (long)w.si_stime);
	return 0;
}
