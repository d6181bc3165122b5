/* lost_wakeup: the consumer tests `ready` without the lock, logs a few
 * lines, then waits on the condition variable without testing again. The
 * producer logs, then sets `ready` and signals under the lock. When the
 * consumer is already waiting by then, as in hermit's default schedule, it
 * prints "woken, ok"; when the producer runs between the consumer's test
 * and its wait, the signal is lost and the consumer gives up after 1 s
 * (virtual) and exits 1 with "lost wakeup".
 */
#include "guest.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int ready;
static int devnull;
static int lost;

static void logline(int n) {
	for (int i = 0; i < n; i++)
		CHECK(write(devnull, "log\n", 4) == 4);
}

static void *consumer(void *arg) {
	(void)arg;
	if (!ready) { /* the bug: tested outside the lock */
		logline(4);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_mutex_lock(&mu);
		if (pthread_cond_timedwait(&cv, &mu, &until) != 0)
			lost = 1;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *producer(void *arg) {
	(void)arg;
	logline(8);
	pthread_mutex_lock(&mu);
	ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(void) {
	devnull = open("/dev/null", O_WRONLY);
	CHECK(devnull >= 0);
	pthread_t c, p;
	CHECK(pthread_create(&c, NULL, consumer, NULL) == 0);
	CHECK(pthread_create(&p, NULL, producer, NULL) == 0);
	CHECK(pthread_join(c, NULL) == 0);
	CHECK(pthread_join(p, NULL) == 0);
	if (lost) {
		sayfd(2, "lost wakeup: the consumer waited 1 s for a signal sent before its wait\n");
		return 1;
	}
	say("woken, ok\n");
	return 0;
}
