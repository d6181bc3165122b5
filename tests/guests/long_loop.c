/* long_loop: a long stretch without a system call between two that print
 * (replay/timeline_ptrace_test.go): going back one instruction from the
 * call after the loop must not single-step the whole loop.
 *
 * Built with -DASM_LOOP, the loop is three instructions. Going back counts
 * the loop's instructions in chunks and then by the arrivals at the one it
 * ran most often: with a body whose length divides the window it looks
 * at, each chunk ends with the thread at that instruction, which the
 * counting must not count twice.
 */
#include "guest.h"

enum { ITERATIONS = 50000 };

__attribute__((noinline)) long spin(long n) {
	long x = 0;
#ifdef ASM_LOOP
	__asm__ volatile("1:\n\t"
			 "add %%rcx, %0\n\t"
			 "dec %%rcx\n\t"
			 "jnz 1b"
			 : "+r"(x), "+c"(n)
			 :
			 : "cc");
#else
	for (long i = 0; i < n; i++)
		x += i ^ (x >> 3);
#endif
	return x;
}

__attribute__((noinline)) void after(long x) { say("spun %ld\n", x); }

int main(void) {
	say("start\n");
	after(spin(ITERATIONS));
	return 0;
}
