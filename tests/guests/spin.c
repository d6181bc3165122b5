/* spin.c: the main thread spins, without syscalls, on a flag that only a
 * second thread sets. Under a serialized scheduler without a PMU the second
 * thread never gets a turn until hermit's watchdog preempts the spinner;
 * the guest then finishes and prints "flag seen". With an argument the
 * setter sleeps first: the spinner is then all that can run, and virtual
 * time must move on to the sleep's end. */
#include "guest.h"
#include <pthread.h>

static volatile int flag;
static int sleep_first;

static void *setter(void *arg) {
	(void)arg;
	if (sleep_first)
		usleep(100000); /* then no thread waits to run: a timer is due */
	say("setter running");
	flag = 1;
	return NULL;
}

int main(int argc, char **argv) {
	sleep_first = argc > 1; /* "sleep": the setter sleeps before it sets */
	(void)argv;
	pthread_t th;
	CHECK(pthread_create(&th, NULL, setter, NULL) == 0);
	while (!flag)
		; /* no syscall here */
	CHECK(pthread_join(th, NULL) == 0);
	say("flag seen");
	return 0;
}
