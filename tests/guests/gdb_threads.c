/* gdb_threads: a small multi-threaded program to debug over the GDB remote
 * protocol (tests/gdb_test.go).
 *
 * main prints its pid, its tid and the address of `global`, then starts
 * NWORKERS threads. They all wait at a barrier with main, so that every
 * thread exists before any of them enters worker(); then each prints its
 * tid, adds its id+1 to `global` under a mutex (the store a watchpoint
 * catches), and spins a while in a call-free loop (what stepi walks
 * through). main joins them, prints the final value and exits with status
 * 3, so that a debugger's "exited with code" is meaningful.
 *
 * Under hermit the output (tids, address, order) is the same on every run.
 */
#include "guest.h"

#include <pthread.h>
#include <sys/syscall.h>

enum { NWORKERS = 3, SPIN = 2000 };

long global;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;

/* worker is where the debugger stops: break worker, print tid. */
__attribute__((noinline)) void *worker(int id) {
	pid_t tid = (pid_t)syscall(SYS_gettid);
	volatile long sum = 0;

	say("worker %d tid %d\n", id, tid);
	pthread_mutex_lock(&mu);
	global += id + 1;
	for (int i = 0; i < SPIN; i++)
		sum += (long)i * (id + 1);
	pthread_mutex_unlock(&mu);
	say("worker %d done, sum %ld\n", id, sum);
	return NULL;
}

static void *thread_main(void *arg) {
	pthread_barrier_wait(&start);
	return worker((int)(long)arg);
}

int main(void) {
	pthread_t th[NWORKERS];

	say("main pid %d tid %d &global %p\n", (int)getpid(), (int)syscall(SYS_gettid), (void *)&global);
	CHECK(pthread_barrier_init(&start, NULL, NWORKERS + 1) == 0);
	for (long i = 0; i < NWORKERS; i++)
		CHECK(pthread_create(&th[i], NULL, thread_main, (void *)i) == 0);
	pthread_barrier_wait(&start);
	for (int i = 0; i < NWORKERS; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	say("global = %ld\n", global);
	return 3;
}
