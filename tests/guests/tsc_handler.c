/* tsc_handler: thread A turns rdtsc faulting for itself (PR_TSC_SIGSEGV)
 * and reads it in rd(); its SIGSEGV handler steps over the instruction
 * and, before it returns, waits for thread B to read the counter in rd()
 * too. B's reads must leave rd()'s code as A's handler returns into it:
 * natively A faults once. */
#include "guest.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <ucontext.h>
#include <x86intrin.h>

static volatile int in_handler, b_done, faults;

__attribute__((noinline)) static uint64_t rd(void) { return __rdtsc(); }

static void skip(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)si;
	((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP] += 2;
	faults++;
	in_handler = 1;
	while (!b_done)
		sched_yield();
}

static void *a(void *arg) {
	(void)arg;
	CHECK(prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) == 0);
	rd();
	return NULL;
}

static void *b(void *arg) {
	(void)arg;
	while (!in_handler)
		sched_yield();
	uint64_t last = 0;
	for (int i = 0; i < 10; i++) {
		uint64_t v = rd();
		CHECK(v > last);
		last = v;
	}
	b_done = 1;
	return NULL;
}

int main(void) {
	struct sigaction sa = {.sa_sigaction = skip, .sa_flags = SA_SIGINFO};
	CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
	pthread_t ta, tb;
	CHECK(pthread_create(&ta, NULL, a, NULL) == 0);
	CHECK(pthread_create(&tb, NULL, b, NULL) == 0);
	CHECK(pthread_join(ta, NULL) == 0);
	CHECK(pthread_join(tb, NULL) == 0);
	say("A's rdtsc faulted %d time(s)\n", faults);
	return 0;
}
