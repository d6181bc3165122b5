/* corrupt: one thread corrupts a global that another thread later reads
 * and aborts on, the bug reverse execution finds (tests/reverse_test.go).
 *
 * main prints the address of `balance`, starts a corrupter thread and
 * joins it, then checks balance and aborts when it is negative. The
 * corrupter prints a line (a system call, so that events separate the
 * write from the start of the thread), computes a new value in a function
 * of its own and stores its negation: the corrupting write, on the line
 * marked CORRUPT. Build it -O0, so that lines map one to one.
 */
#include "guest.h"

#include <pthread.h>

long balance = 100;

__attribute__((noinline)) long compute(long x) {
	long y = x * 3;
	return y - 7;
}

__attribute__((noinline)) void corrupt(void) {
	long v = compute(balance); /* COMPUTE */
	balance = -v;              /* CORRUPT */
	say("corrupter wrote %ld\n", balance);
}

static void *corrupter(void *arg) {
	(void)arg;
	say("corrupter starts\n");
	corrupt(); /* CALL */
	return NULL;
}

__attribute__((noinline)) void check(void) {
	if (balance < 0) { /* CHECK */
		say("balance is %ld: corrupted\n", balance);
		abort();
	}
}

int main(void) {
	pthread_t th;

	say("main &balance %p\n", (void *)&balance);
	CHECK(pthread_create(&th, NULL, corrupter, NULL) == 0);
	CHECK(pthread_join(th, NULL) == 0);
	check();
	say("balance %ld\n", balance);
	return 0;
}
