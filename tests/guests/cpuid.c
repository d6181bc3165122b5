/* cpuid.c: prints what CPUID says about RDRAND, RDSEED and the initial
 * APIC id (which names the CPU the instruction ran on). Under
 * `hermit run --virtualize-cpuid` all three read 0 on any CPU. */
#include "guest.h"
#include <cpuid.h>

int main(void) {
	unsigned a, b, c, d;
	CHECK(__get_cpuid(1, &a, &b, &c, &d));
	say("apic id %u rdrand %u\n", b >> 24, (c >> 30) & 1);
	__cpuid_count(7, 0, a, b, c, d);
	say("rdseed %u\n", (b >> 18) & 1);
	return 0;
}
