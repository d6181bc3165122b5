/* barrier: 4 threads pass a pthread barrier 50 times.
 *
 * Checks barrier semantics under the tracer: in each round every thread
 * publishes the round number, waits at the barrier, then sees all threads'
 * entries for that round; exactly one thread per round gets
 * PTHREAD_BARRIER_SERIAL_THREAD. The output is deterministic.
 */
#include "guest.h"

#include <pthread.h>
#include <stdatomic.h>

enum { NTHREADS = 4, ROUNDS = 50 };

static pthread_barrier_t barrier;
static atomic_int slot[NTHREADS];
static atomic_int serials;

static void *worker(void *arg) {
	int id = (int)(long)arg;

	for (int r = 1; r <= ROUNDS; r++) {
		atomic_store(&slot[id], r);
		int ret = pthread_barrier_wait(&barrier);
		CHECK(ret == 0 || ret == PTHREAD_BARRIER_SERIAL_THREAD);
		if (ret == PTHREAD_BARRIER_SERIAL_THREAD)
			atomic_fetch_add(&serials, 1);
		for (int i = 0; i < NTHREADS; i++)
			CHECK(atomic_load(&slot[i]) == r);
		/* Nobody may start the next round before everyone has checked. */
		ret = pthread_barrier_wait(&barrier);
		CHECK(ret == 0 || ret == PTHREAD_BARRIER_SERIAL_THREAD);
	}
	return NULL;
}

int main(void) {
	pthread_t th[NTHREADS];

	CHECK(pthread_barrier_init(&barrier, NULL, NTHREADS) == 0);
	for (long i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
	for (int i = 0; i < NTHREADS; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	say("%d threads passed %d barrier rounds, %d serial threads\n", NTHREADS, ROUNDS, atomic_load(&serials));
	CHECK(atomic_load(&serials) == ROUNDS);
	return 0;
}
