/* step_emulated: rdtsc, cpuid and rdtscp between labels, for a debugger
 * to single-step over. Where hermit traps them (PR_SET_TSC; CPUID
 * faulting with --virtualize-cpuid) it answers each without executing
 * it, and a step over one must still end right after it. The rdtsc and
 * rdtscp are followed by a jmp, so hermit leaves their sites trapping;
 * the one at L_tsc_patched is followed by instructions its stub can make,
 * so hermit patches its site: a step over it ends after them. */
#include "guest.h"

int main(void) {
	unsigned long a = 0, d = 0, c = 0, b = 0;
	__asm__ volatile(
	    ".globl L_rdtsc\nL_rdtsc: rdtsc\n"
	    ".globl L_after_rdtsc\nL_after_rdtsc: jmp 1f\n1: nop\nnop\n"
	    "xor %%ecx, %%ecx\nmov $1, %%eax\n"
	    ".globl L_cpuid\nL_cpuid: cpuid\n"
	    ".globl L_after_cpuid\nL_after_cpuid: nop\nnop\n"
	    ".globl L_rdtscp\nL_rdtscp: rdtscp\n"
	    ".globl L_after_rdtscp\nL_after_rdtscp: jmp 2f\n2: nop\nnop\n"
	    ".globl L_tsc_patched\nL_tsc_patched: rdtsc\nnop\nnop\nxor %%ecx, %%ecx\n"
	    ".globl L_after_tsc_patched\nL_after_tsc_patched: nop\nnop\n"
	    : "+a"(a), "+d"(d), "+c"(c), "+b"(b));
	say("done\n");
	return 0;
}
