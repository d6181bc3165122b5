/* exec_threads.c: execve from a thread that is not the leader, while two
 * other threads wait in pause(): the kernel kills them and the exec'ing
 * thread takes over the leader's pid. Exits 3 after the exec. */
#include "guest.h"
#include <pthread.h>
#include <sys/syscall.h>

static char *self;

static void *execer(void *arg) {
	(void)arg;
	execl(self, self, "after", (char *)NULL);
	say("exec failed\n");
	_exit(1);
}

static void *waiter(void *arg) {
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv) {
	if (argc > 1) {
		say("after exec from a thread: pid == tid: %s\n", getpid() == syscall(SYS_gettid) ? "yes" : "no");
		return 3;
	}
	self = argv[0];
	pthread_t t[3];
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, waiter, NULL) == 0);
	CHECK(pthread_create(&t[2], NULL, execer, NULL) == 0);
	for (;;)
		pause();
}
