// cputime: CPU-time clocks count the time the process and its threads
// run, not the time they sleep: across a 1 s sleep they barely move; a
// thread's own clock counts its own running; a forked child starts near
// zero. Prints what moved and what did not.
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double secs(clockid_t c) {
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg) {
	(void)arg;
	for (int i = 0; i < 2000; i++)
		sched_yield(); // under hermit, each one a turn of this thread
	return NULL;
}

int main(void) {
	double p0 = secs(CLOCK_PROCESS_CPUTIME_ID), t0 = secs(CLOCK_THREAD_CPUTIME_ID), m0 = secs(CLOCK_MONOTONIC);
	sleep(1);
	double p1 = secs(CLOCK_PROCESS_CPUTIME_ID), t1 = secs(CLOCK_THREAD_CPUTIME_ID), m1 = secs(CLOCK_MONOTONIC);
	printf("across a 1 s sleep: monotonic %s, process %s, thread %s\n", m1 - m0 >= 1 ? "moved 1 s" : "?",
	       p1 - p0 < 0.1 ? "still" : "moved", t1 - t0 < 0.1 ? "still" : "moved");
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	double p2 = secs(CLOCK_PROCESS_CPUTIME_ID), t2 = secs(CLOCK_THREAD_CPUTIME_ID);
	printf("a thread worked: process %s, the main thread %s\n", p2 > p1 ? "moved" : "still", t2 - t1 < p2 - p1 ? "less" : "as much");
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	struct tms tm;
	times(&tm);
	printf("getrusage and times within the process's clock: %s\n",
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 <= secs(CLOCK_PROCESS_CPUTIME_ID) ? "yes" : "no");
	fflush(stdout);
	if (fork() == 0) {
		printf("a forked child starts %s\n", secs(CLOCK_PROCESS_CPUTIME_ID) < p2 ? "below its parent" : "at its parent's");
		return 0;
	}
	wait(NULL);
	return 0;
}
