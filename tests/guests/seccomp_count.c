/* seccomp_count: a program's own seccomp filter (TSYNC: every thread)
 * fails getppid with EPERM and traps uname (SIGSYS), then two threads
 * hand a condvar back and forth and make those calls. hermit counts a
 * thread's calls while another is ready to run (count mode), and there
 * it skipped each call at its entry and answered uname itself: the
 * guest's filter never saw it, and no SIGSYS came. */
#include "guest.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

static volatile int sigsys;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn;

static void on_sigsys(int sig) {
	(void)sig;
	sigsys++;
}

/* handoff passes the turn back and forth n times. */
static void handoff(int me, int n) {
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&mu);
		while (turn != me)
			pthread_cond_wait(&cv, &mu);
		turn = 1 - me;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
}

static void *other(void *arg) {
	(void)arg;
	handoff(1, 5);
	long eperm = 0;
	for (int i = 0; i < 100; i++)
		if (syscall(SYS_getppid) == -1 && errno == EPERM)
			eperm++;
	return (void *)eperm;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigsys;
	CHECK(sigaction(SIGSYS, &sa, NULL) == 0);
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_uname, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, other, NULL) == 0);
	CHECK(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0);
	handoff(0, 5);
	struct utsname u;
	for (int i = 0; i < 50; i++)
		syscall(SYS_uname, &u);
	void *eperm;
	CHECK(pthread_join(th, &eperm) == 0);
	say("getppid failed with EPERM %ld times of 100; uname trapped %d times of 50\n", (long)eperm, sigsys);
	return 0;
}
