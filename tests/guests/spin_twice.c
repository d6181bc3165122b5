/* spin_twice: main runs the same loop twice, 3,000 rounds each without a
 * system call, with a call of target() between. Going back over both
 * loops from the end counts the thread's instructions by its arrivals at
 * the loop's busiest instruction; a reverse continue to target() then
 * stops part way through that count, and a step back from there must
 * come to the call in main (it counted from the arrival before the
 * count's end, in the second loop, and went forwards).
 */
#include "guest.h"

__attribute__((noinline)) static long spin(long n) {
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i ^ (s >> 3);
	return s;
}

__attribute__((noinline)) static long target(long x) {
	return x * 3;
}

int main(void) {
	long a = spin(3000);
	long b = target(a);
	long c = spin(3000);
	say("%ld\n", a + b + c);
	return 0;
}
