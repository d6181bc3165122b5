/* stale_reap: two threads wait for any child, while one child has
 * exited and another exits 10 ms later: each thread reaps one. Under
 * hermit, both calls can find the first child ready at their stops; the
 * one that runs second must not wait in the kernel on that old answer
 * (the other child, parked, would never exit), and with a timeslice of
 * one the two must not hand the turn back and forth without end.
 */
#include "guest.h"
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>

static void *reaper(void *arg) {
	(void)arg;
	struct rusage ru; // which the call fills at its exit
	CHECK(wait4(-1, NULL, 0, &ru) > 0);
	say("the thread reaped a child\n");
	return NULL;
}

int main(void) {
	if (fork() == 0)
		_exit(0);
	if (fork() == 0) {
		usleep(10000);
		_exit(0);
	}
	usleep(1000);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, reaper, NULL) == 0);
	CHECK(wait(NULL) > 0);
	CHECK(pthread_join(th, NULL) == 0);
	say("the main thread reaped a child\n");
	return 0;
}
