/* named_fault: a thread the program names "worker-1" loads through the
 * address 0x10 and the process dies of the SIGSEGV (status 139). A
 * debugger's stop line names the thread and the fault: lldb shows
 * "name = 'worker-1', stop reason = signal SIGSEGV: address not mapped to
 * object (fault address: 0x10)", as natively.
 */
#include "guest.h"

#include <pthread.h>

static void *worker(void *arg) {
	volatile int *volatile p = arg;
	CHECK(pthread_setname_np(pthread_self(), "worker-1") == 0);
	say("loading through %p\n", (void *)p);
	return (void *)(long)*p;
}

int main(void) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, worker, (void *)0x10) == 0);
	CHECK(pthread_join(th, NULL) == 0);
	say("not reached\n");
	return 0;
}
