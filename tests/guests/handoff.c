/* handoff: two threads hand a turn back and forth through one futex word
 * (raw FUTEX_WAIT and FUTEX_WAKE), argv[1] times. hermit answers both
 * calls itself; while one thread runs the other is ready, so the runner
 * counts its calls (count mode), which must cost no extra stop for calls
 * hermit intercepts and answers. "handoff writes N" instead writes a byte
 * to /dev/null N times with an alarm armed (which makes the thread count
 * its calls too): calls hermit lets run in the kernel.
 */
#include "guest.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>

static atomic_int turn;
static long rounds;

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
	if (argc > 2 && strcmp(argv[1], "writes") == 0) {
		long n = atol(argv[2]);
		int fd = open("/dev/null", O_WRONLY);
		CHECK(fd >= 0);
		alarm(1000);
		for (long i = 0; i < n; i++)
			CHECK(write(fd, "x", 1) == 1);
		say("%ld writes\n", n);
		return 0;
	}
	rounds = argc > 1 ? atol(argv[1]) : 100;
	pthread_t th;
	CHECK(pthread_create(&th, NULL, second, NULL) == 0);
	play(0);
	CHECK(pthread_join(th, NULL) == 0);
	say("%ld handoffs\n", rounds);
	return 0;
}
