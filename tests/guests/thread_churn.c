/* thread_churn: creates and joins 100 threads, 10 at a time.
 *
 * Checks thread creation and exit under the tracer: every thread runs, and
 * its return value reaches pthread_join. The output is deterministic, so it
 * must match the native run.
 */
#include "guest.h"

#include <pthread.h>

enum { BATCH = 10, ROUNDS = 10 };

static void *square(void *arg) {
	long n = (long)arg;
	return (void *)(n * n);
}

int main(void) {
	long sum = 0;

	for (int r = 0; r < ROUNDS; r++) {
		pthread_t th[BATCH];
		for (long i = 0; i < BATCH; i++)
			CHECK(pthread_create(&th[i], NULL, square, (void *)(r * BATCH + i)) == 0);
		for (int i = 0; i < BATCH; i++) {
			void *ret;
			CHECK(pthread_join(th[i], &ret) == 0);
			sum += (long)ret;
		}
	}
	say("joined %d threads, sum of squares %ld\n", BATCH * ROUNDS, sum);
	CHECK(sum == 328350); /* 0^2 + ... + 99^2 */
	return 0;
}
