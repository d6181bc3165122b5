/* tls_vars: thread-local variables for a debugger to print (gdb's
 * qGetTLSAddr): the program's own (__thread), errno (the C library's),
 * and one of a library loaded with dlopen (argv[1], tls_lib.c), whose
 * block is not in static TLS. Each thread sets its own values, then
 * calls stop_here. Built also with -static (no library then).
 */
#include "guest.h"
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

__thread int counter = 7;
__thread char name[16] = "main";

static long (*lib_set)(long);

/* stop_here is where the debugger looks. */
__attribute__((noinline)) void stop_here(void) {
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg) {
	(void)arg;
	counter = 42;
	strcpy(name, "worker");
	if (lib_set)
		lib_set(2000);
	errno = 33;
	stop_here();
	return 0;
}

int main(int argc, char **argv) {
	if (argc > 1) {
		void *h = dlopen(argv[1], RTLD_NOW);
		CHECK(h != 0);
		lib_set = (long (*)(long))dlsym(h, "lib_set");
		CHECK(lib_set != 0);
		lib_set(1000);
	}
	pthread_t t;
	CHECK(pthread_create(&t, 0, worker, 0) == 0);
	CHECK(pthread_join(t, 0) == 0);
	errno = 11;
	stop_here();
	say("main: counter %d, name %s\n", counter, name);
	return 0;
}
