/* crunch: a long computation without a system call between two that
 * print (tests/repl_tty_test.go): the debugger's interrupt must stop it
 * inside the computation, not at the call after it.
 */
#include "guest.h"

__attribute__((noinline)) unsigned long crunch(unsigned long n) {
	unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + (i ^ (x >> 29));
	return x;
}

__attribute__((noinline)) void report(unsigned long x) { say("crunched %lx\n", x); }

int main(int argc, char **argv) {
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000000UL;
	say("crunching %lu rounds\n", n);
	report(crunch(n));
	return 0;
}
