/* long_loop: a long stretch without a system call between two that print
 * (replay/timeline_ptrace_test.go): going back one instruction from the
 * call after the loop must not single-step the whole loop.
 */
#include "guest.h"

enum { ITERATIONS = 50000 };

__attribute__((noinline)) long spin(long n) {
	long x = 0;
	for (long i = 0; i < n; i++)
		x += i ^ (x >> 3);
	return x;
}

__attribute__((noinline)) void after(long x) { say("spun %ld\n", x); }

int main(void) {
	say("start\n");
	after(spin(ITERATIONS));
	return 0;
}
