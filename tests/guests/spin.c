/* spin.c: the main thread spins, without syscalls, on a flag that only a
 * second thread sets. Under a serialized scheduler without a PMU the second
 * thread never gets a turn until hermit's watchdog preempts the spinner;
 * the guest then finishes and prints "flag seen". */
#include "guest.h"
#include <pthread.h>

static volatile int flag;

static void *setter(void *arg) {
	(void)arg;
	say("setter running");
	flag = 1;
	return NULL;
}

int main(void) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, setter, NULL) == 0);
	while (!flag)
		; /* no syscall here */
	CHECK(pthread_join(th, NULL) == 0);
	say("flag seen");
	return 0;
}
