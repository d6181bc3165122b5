/* untraced_loops: threads that loop on syscalls hermit does not
 * intercept (gettid, getpid), which are no scheduling points of their
 * own, while what ends the loop needs virtual time or another thread's
 * turns. Each mode prints what it saw:
 *   timer    a 1 ms interval timer's SIGALRM, 20 times, ends a loop on
 *            gettid
 *   threads  a worker writes 100 times to a pipe, sleeps 10 ms, then
 *            sets the flag the main thread loops on getpid for
 */
#include "guest.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;
static void tick(int sig) { (void)sig; ticks++; }

static atomic_int done;
static int pfd[2];

static void *worker(void *arg) {
	(void)arg;
	for (int i = 0; i < 100; i++)
		CHECK(write(pfd[1], "x", 1) == 1);
	usleep(10000);
	atomic_store(&done, 1);
	return NULL;
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "timer") == 0) {
		signal(SIGALRM, tick);
		struct itimerval it = {{0, 1000}, {0, 1000}};
		CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
		while (ticks < 20)
			syscall(SYS_gettid);
		say("timer: %d ticks ended a loop on gettid\n", (int)ticks);
		return 0;
	}
	if (strcmp(mode, "threads") == 0) {
		CHECK(pipe(pfd) == 0);
		pthread_t th;
		CHECK(pthread_create(&th, NULL, worker, NULL) == 0);
		while (!atomic_load(&done))
			syscall(SYS_getpid);
		pthread_join(th, NULL);
		say("threads: the worker's flag ended a loop on getpid\n");
		return 0;
	}
	sayfd(2, "usage: untraced_loops timer|threads\n");
	return 2;
}
