/* prctl_self: what prctl tells a process about its own confinement:
 * seccomp mode, rdtsc mode and no_new_privs; then it sets the rdtsc mode
 * and no_new_privs itself and asks again. Under hermit, an unconfined
 * process's answers: hermit's own filter, rdtsc trap and no_new_privs do
 * not show.
 */
#include "guest.h"

#include <linux/prctl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <ucontext.h>

static volatile int faults;

/* skip steps over the rdtsc that faulted. */
static void skip(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)si;
	((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP] += 2;
	faults++;
}

int main(void) {
	int tsc = -1;
	CHECK(prctl(PR_GET_TSC, &tsc, 0, 0, 0) == 0);
	say("seccomp %d, tsc %d, no_new_privs %d\n", prctl(PR_GET_SECCOMP, 0, 0, 0, 0), tsc, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	CHECK(prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0) == 0);
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHECK(prctl(PR_GET_TSC, &tsc, 0, 0, 0) == 0);
	say("after setting: tsc %d, no_new_privs %d\n", tsc, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));

	/* The guest's own rdtsc trap: rdtsc faults, in a child too. */
	struct sigaction sa = {.sa_sigaction = skip, .sa_flags = SA_SIGINFO};
	CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
	CHECK(prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) == 0);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		CHECK(prctl(PR_GET_TSC, &tsc, 0, 0, 0) == 0);
		__asm__ volatile("rdtsc" ::: "eax", "edx");
		say("child: tsc %d, rdtsc faulted %d time(s)\n", tsc, faults);
		_exit(0);
	}
	int st;
	CHECK(waitpid(c, &st, 0) == c);
	__asm__ volatile("rdtsc" ::: "eax", "edx");
	say("PR_TSC_SIGSEGV: rdtsc faulted %d time(s)\n", faults);
	return 0;
}
