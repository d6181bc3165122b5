/* step_emulated: rdtsc, cpuid and rdtscp between labels, for a debugger
 * to single-step over. Where hermit traps them (PR_SET_TSC; CPUID
 * faulting with --virtualize-cpuid) it answers each without executing
 * it, and a step over one must still end right after it. */
#include "guest.h"

int main(void) {
	unsigned long a = 0, d = 0, c = 0, b = 0;
	__asm__ volatile(
	    ".globl L_rdtsc\nL_rdtsc: rdtsc\n"
	    ".globl L_after_rdtsc\nL_after_rdtsc: nop\nnop\n"
	    "xor %%ecx, %%ecx\nmov $1, %%eax\n"
	    ".globl L_cpuid\nL_cpuid: cpuid\n"
	    ".globl L_after_cpuid\nL_after_cpuid: nop\nnop\n"
	    ".globl L_rdtscp\nL_rdtscp: rdtscp\n"
	    ".globl L_after_rdtscp\nL_after_rdtscp: nop\nnop\n"
	    : "+a"(a), "+d"(d), "+c"(c), "+b"(b));
	say("done\n");
	return 0;
}
