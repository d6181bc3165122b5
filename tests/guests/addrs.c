/* addrs: 4 threads each print their tid, the address of a local variable
 * (their stack), of a fresh malloc block (their heap arena) and of a
 * thread-local variable, then race on a shared counter without a lock;
 * main prints its own, then the final count.
 *
 * Checks that a replay reproduces what a recording saw, including values
 * that natively change on every run: tids, ASLR'd stack, heap and TLS
 * addresses, and the outcome of a data race.
 */
#include "guest.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>

enum { NTHREADS = 4, ITERS = 20000, YIELD_EVERY = 1000 };

static volatile long counter;
static __thread int tls_var;

static void report(const char *who) {
	int local = 0;
	void *heap = malloc(64);
	CHECK(heap != NULL);
	say("%s: tid %d stack %p heap %p tls %p\n", who, (int)syscall(SYS_gettid),
	    (void *)&local, heap, (void *)&tls_var);
	/* Keep the block: freeing it would let the next thread reuse it. */
}

static void *worker(void *arg) {
	int id = (int)(intptr_t)arg;
	char who[32];

	snprintf(who, sizeof who, "thread %d", id);
	report(who);
	for (int i = 0; i < ITERS; i++) {
		long v = counter;
		if (i % YIELD_EVERY == id)
			sched_yield(); /* whoever runs now makes our write a lost update */
		counter = v + 1;
	}
	return NULL;
}

int main(void) {
	pthread_t th[NTHREADS];

	say("main pid %d\n", (int)getpid());
	report("main");
	for (intptr_t i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	say("counter = %ld of %d\n", counter, NTHREADS * ITERS);
	return 0;
}
