/* racy_counter: 8 threads increment one shared counter without a lock,
 * yielding now and then between the read and the write.
 *
 * Checks determinism: each thread prints its tid and the order in which it
 * finished, and main prints the final count (lost updates make it fall short
 * of 8 * ITERS). Natively tids, finishing order and the count vary between
 * runs; under hermit the output is byte-identical on every run.
 */
#include "guest.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>

enum { NTHREADS = 8, ITERS = 20000, YIELD_EVERY = 1000 };

static volatile long counter;
static atomic_int finished;

static void *worker(void *arg) {
	int id = (int)(long)arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	say("thread %d started, tid %d\n", id, tid);
	for (int i = 0; i < ITERS; i++) {
		long v = counter;
		if (i % YIELD_EVERY == id)
			sched_yield(); /* whoever runs now makes our write a lost update */
		counter = v + 1;
	}
	int order = atomic_fetch_add(&finished, 1) + 1;
	say("thread %d (tid %d) finished #%d\n", id, tid, order);
	return NULL;
}

int main(void) {
	pthread_t th[NTHREADS];

	say("main pid %d\n", (int)getpid());
	for (long i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	say("counter = %ld of %d\n", counter, NTHREADS * ITERS);
	return 0;
}
