/* futex_pingpong: two threads hand a turn back and forth argv[1] times (round
 * trips) through one futex word, with raw FUTEX_WAIT/FUTEX_WAKE. Measures
 * thread switches through the deterministic scheduler.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int turn;
static long rounds;

/* play waits for its turn (me) and hands it to the other side, rounds times. */
static void play(int me) {
	int other = 1 - me;
	for (long i = 0; i < rounds; i++) {
		while (atomic_load(&turn) != me)
			syscall(SYS_futex, &turn, FUTEX_WAIT_PRIVATE, other, NULL, NULL, 0);
		atomic_store(&turn, other);
		syscall(SYS_futex, &turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

static void *second(void *arg) {
	(void)arg;
	play(1);
	return NULL;
}

int main(int argc, char **argv) {
	pthread_t th;

	if (argc != 2)
		return 2;
	rounds = atol(argv[1]);
	if (pthread_create(&th, NULL, second, NULL) != 0)
		return 1;
	play(0);
	pthread_join(th, NULL);
	printf("%ld round trips\n", rounds);
	return 0;
}
