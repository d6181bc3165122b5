/* cond_loop: two threads each call tick() 300 times in a loop without a
 * system call, then finished(); main prints their sums. A debugger going
 * back over tick's breakpoint with a condition on i and id (gdb tests it
 * at every hit of both threads) must land at the one hit that meets it.
 */
#include "guest.h"

#include <pthread.h>

static volatile long acc[2];

__attribute__((noinline)) static void tick(int id, int i) {
	acc[id] += i;
}

__attribute__((noinline)) static void finished(int id) {
	acc[id] += 1000000;
}

static void *worker(void *arg) {
	int id = (int)(long)arg;
	for (int i = 0; i < 300; i++)
		tick(id, i);
	finished(id);
	return NULL;
}

int main(void) {
	pthread_t th[2];
	for (long id = 0; id < 2; id++)
		CHECK(pthread_create(&th[id], NULL, worker, (void *)id) == 0);
	for (int id = 0; id < 2; id++)
		CHECK(pthread_join(th[id], NULL) == 0);
	say("sums %ld %ld\n", acc[0], acc[1]);
	return 0;
}
