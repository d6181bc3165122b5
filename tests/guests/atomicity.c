/* atomicity: two threads each add 1 to a shared counter ten times, reading
 * it, logging to /dev/null, then writing it back (check-then-act across a
 * syscall, with no lock). When each thread's additions run without the
 * other's in between, as in hermit's default schedule, main prints
 * "counter 20, ok"; an interleaving inside the window loses updates and
 * main exits 1 with "lost updates".
 */
#include "guest.h"

#include <fcntl.h>
#include <pthread.h>

enum { ITERS = 10 };

static volatile int counter;
static int devnull;

static void *adder(void *arg) {
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		int v = counter;
		CHECK(write(devnull, "add\n", 4) == 4);
		counter = v + 1;
	}
	return NULL;
}

int main(void) {
	devnull = open("/dev/null", O_WRONLY);
	CHECK(devnull >= 0);
	pthread_t a, b;
	CHECK(pthread_create(&a, NULL, adder, NULL) == 0);
	CHECK(pthread_create(&b, NULL, adder, NULL) == 0);
	CHECK(pthread_join(a, NULL) == 0);
	CHECK(pthread_join(b, NULL) == 0);
	if (counter != 2 * ITERS) {
		sayfd(2, "lost updates: counter %d, want %d\n", counter, 2 * ITERS);
		return 1;
	}
	say("counter %d, ok\n", counter);
	return 0;
}
