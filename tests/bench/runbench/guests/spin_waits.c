/* spin_waits: argv[1] times, the main thread starts a thread that sets a
 * flag, and spins on the flag (no syscall, no pause) until it is set.
 * Under hermit each spin is found only once it has run for the spin
 * budget (20 ms the first time, 2 ms once the thread has been found
 * spinning), then examined and stopped at its loop's head so the setter
 * can run: (hermit - native) / argv[1] is the cost of one spin
 * detection, budget included.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int flag;

static void *setter(void *arg) {
	(void)arg;
	flag = 1;
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 2)
		return 2;
	long n = strtol(argv[1], NULL, 10);
	for (long i = 0; i < n; i++) {
		pthread_t th;
		flag = 0;
		if (pthread_create(&th, NULL, setter, NULL) != 0)
			return 1;
		while (!flag)
			;
		pthread_join(th, NULL);
	}
	printf("%ld spins\n", n);
	return 0;
}
