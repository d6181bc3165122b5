/* prodcons: one producer and three consumers share a bounded buffer guarded
 * by a pthread mutex and two condition variables.
 *
 * Checks determinism: each consumer prints every item it takes together with
 * its tid, so the output shows which consumer won each item. Natively that
 * assignment and the tids vary; under hermit they are the same on every run.
 * It also checks that every item is consumed exactly once.
 */
#include "guest.h"

#include <pthread.h>
#include <sys/syscall.h>

enum { NCONSUMERS = 3, NITEMS = 60, CAP = 4, DONE = -1 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t notempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t notfull = PTHREAD_COND_INITIALIZER;
static int buf[CAP], head, count; /* protected by mu */
static int taken[NITEMS];         /* protected by mu */

static void put(int item) {
	pthread_mutex_lock(&mu);
	while (count == CAP)
		pthread_cond_wait(&notfull, &mu);
	buf[(head + count) % CAP] = item;
	count++;
	pthread_cond_signal(&notempty);
	pthread_mutex_unlock(&mu);
}

static int get(void) {
	pthread_mutex_lock(&mu);
	while (count == 0)
		pthread_cond_wait(&notempty, &mu);
	int item = buf[head];
	head = (head + 1) % CAP;
	count--;
	if (item != DONE)
		taken[item]++;
	pthread_cond_signal(&notfull);
	pthread_mutex_unlock(&mu);
	return item;
}

static void *producer(void *arg) {
	(void)arg;
	for (int i = 0; i < NITEMS; i++)
		put(i);
	for (int i = 0; i < NCONSUMERS; i++)
		put(DONE);
	return NULL;
}

static void *consumer(void *arg) {
	int id = (int)(long)arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int item, n = 0;

	while ((item = get()) != DONE) {
		say("consumer %d (tid %d) got item %d\n", id, tid, item);
		n++;
	}
	return (void *)(long)n;
}

int main(void) {
	pthread_t prod, cons[NCONSUMERS];
	int total = 0;

	for (long i = 0; i < NCONSUMERS; i++)
		CHECK(pthread_create(&cons[i], NULL, consumer, (void *)i) == 0);
	CHECK(pthread_create(&prod, NULL, producer, NULL) == 0);
	CHECK(pthread_join(prod, NULL) == 0);
	for (int i = 0; i < NCONSUMERS; i++) {
		void *n;
		CHECK(pthread_join(cons[i], &n) == 0);
		say("consumer %d took %ld items\n", i, (long)n);
		total += (int)(long)n;
	}
	for (int i = 0; i < NITEMS; i++)
		CHECK(taken[i] == 1);
	say("%d items consumed, each exactly once\n", total);
	CHECK(total == NITEMS);
	return 0;
}
