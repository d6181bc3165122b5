// timed_wait_busy: one thread waits 5 ms on a condition variable (as
// CPython's GIL does) and then asks the other to stop; the other loops on
// sigaction, a call hermit lets through, until asked. It prints how many
// calls the loop made and how long it took.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static atomic_int stop;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *waiter(void *arg) {
	(void)arg;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 5000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&mu);
	int r = pthread_cond_timedwait(&cv, &mu, &ts);
	pthread_mutex_unlock(&mu);
	stop = 1;
	return (void *)(long)r;
}

int main(void) {
	struct sigaction sa = {0};
	sa.sa_handler = SIG_IGN;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t t;
	pthread_create(&t, 0, waiter, 0);
	long n = 0;
	while (!stop) {
		sigaction(SIGUSR1, &sa, 0);
		n++;
	}
	void *r;
	pthread_join(t, &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("timed out: %s; %ld calls; %ld us\n", (long)r == ETIMEDOUT ? "yes" : "no", n,
	       (long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000));
	return 0;
}
