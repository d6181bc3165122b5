/* own_sud: a program sets up syscall user dispatch of its own, blocks
 * with its switch and makes a syscall: its SIGSYS handler answers it
 * (4242) and lets calls through again. Once in the main thread, then in
 * a second thread. hermit's fast futex code uses the same kernel feature
 * on its own; it took the program's SIGSYS for its own and made the call
 * again, for ever (a hang). */
#include "guest.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>

#define PR_SET_SYSCALL_USER_DISPATCH_ 59
#define PR_SYS_DISPATCH_ON_ 1

static volatile char sel;
static volatile int trapped;

static void on_sigsys(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)si;
	ucontext_t *u = uc;
	sel = 0; /* SYSCALL_DISPATCH_FILTER_ALLOW */
	trapped++;
	u->uc_mcontext.gregs[REG_RAX] = 4242;
}

static void *dispatch(void *arg) {
	const char *who = arg;
	sel = 0;
	CHECK(prctl(PR_SET_SYSCALL_USER_DISPATCH_, PR_SYS_DISPATCH_ON_, 0, 0, &sel) == 0);
	sel = 1; /* SYSCALL_DISPATCH_FILTER_BLOCK */
	long r = syscall(SYS_getppid);
	sel = 0;
	CHECK(prctl(PR_SET_SYSCALL_USER_DISPATCH_, 0, 0, 0, 0) == 0);
	say("%s: trapped %d, getppid answered %ld\n", who, trapped, r);
	return NULL;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	CHECK(sigaction(SIGSYS, &sa, NULL) == 0);
	dispatch("main thread");
	pthread_t th;
	CHECK(pthread_create(&th, NULL, dispatch, "second thread") == 0);
	CHECK(pthread_join(th, NULL) == 0);
	return 0;
}
