/* spin.c: the main thread spins, without syscalls, on a flag that only a
 * second thread sets. With "sleep" as argv[1] the setter sleeps first: the
 * spinner is then all that can run, and virtual time must move on to the
 * sleep's end. The loop counts while it waits, so no state of it repeats
 * and hermit cannot stop it at a deterministic point: its watchdog
 * preempts it (nondeterministically, and says so). With "pure" as argv[2]
 * the loop does not count: a pure spin, which hermit stops at its head
 * deterministically. Either way the guest finishes and prints "flag seen". */
#include "guest.h"
#include <pthread.h>
#include <string.h>

static volatile int flag;
static int sleep_first;
static volatile long rounds;

static void *setter(void *arg) {
	(void)arg;
	if (sleep_first)
		usleep(100000); /* then no thread waits to run: a timer is due */
	say("setter running\n");
	flag = 1;
	return NULL;
}

int main(int argc, char **argv) {
	sleep_first = argc > 1 && strcmp(argv[1], "sleep") == 0;
	int pure = argc > 2 && strcmp(argv[2], "pure") == 0;
	pthread_t th;
	CHECK(pthread_create(&th, NULL, setter, NULL) == 0);
	long n = 0;
	if (pure)
		while (!flag)
			; /* no syscall here */
	else
		while (!flag)
			n++; /* nor here */
	rounds = n;
	CHECK(pthread_join(th, NULL) == 0);
	say("flag seen\n");
	return 0;
}
