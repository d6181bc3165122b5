/* ymm: loads eight known 32-bit integers, 1 to 8, into ymm1 and calls
 * mark(), where a debugger stops and reads ymm1 whole: the upper four come
 * from the XSAVE area's AVX state, not the FXSAVE area. Needs AVX.
 */
#include "guest.h"

__attribute__((noinline)) void mark(void) { __asm__ volatile("" ::: "memory"); }

int main(void) {
	static const int vals[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx")) {
		say("no avx\n");
		return 2;
	}
	__asm__ volatile("vmovdqu %0, %%ymm1" ::"m"(vals) : "xmm1");
	mark();
	__asm__ volatile("vzeroupper" ::: "xmm1");
	say("marked\n");
	return 0;
}
