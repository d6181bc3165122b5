/* die: dies of a signal chosen by argv[1].
 *
 *   kill         raise(SIGKILL)                        status 137
 *   abort        abort() (SIGABRT)                     status 134
 *   segv         store through a NULL pointer          status 139
 *   thread-segv  a second thread does the NULL store   status 139
 *                while main blocks in pthread_join
 *   join-segv    main joins a thread that ended, then  status 139
 *                does the NULL store: the process's last
 *                system call is that thread's exit
 *
 * Checks that hermit reports death by signal N as exit status 128+N, also
 * when the whole thread group dies of one thread's fault.
 */
#include "guest.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

static void segv(void) {
	volatile int *volatile p = NULL; /* volatile twice: the store must happen */
	*p = 1;
}

static void *nothing(void *arg) { return arg; }

static void *segv_thread(void *arg) {
	(void)arg;
	segv();
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 2) {
		sayfd(2, "usage: die kill|abort|segv|thread-segv|join-segv\n");
		return 2;
	}
	say("dying by %s\n", argv[1]);
	if (strcmp(argv[1], "kill") == 0) {
		raise(SIGKILL);
	} else if (strcmp(argv[1], "abort") == 0) {
		abort();
	} else if (strcmp(argv[1], "segv") == 0) {
		segv();
	} else if (strcmp(argv[1], "thread-segv") == 0) {
		pthread_t th;
		CHECK(pthread_create(&th, NULL, segv_thread, NULL) == 0);
		pthread_join(th, NULL);
	} else if (strcmp(argv[1], "join-segv") == 0) {
		pthread_t th;
		CHECK(pthread_create(&th, NULL, nothing, NULL) == 0);
		pthread_join(th, NULL);
		segv();
	} else {
		sayfd(2, "die: unknown mode %s\n", argv[1]);
		return 2;
	}
	sayfd(2, "still alive after %s\n", argv[1]);
	return 1;
}
