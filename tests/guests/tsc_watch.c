/* tsc_watch: a store that hermit moves into a patched rdtsc site's stub
 * (the mov right after the rdtsc, which the site's jmp covers), made three
 * times, for a debugger's watchpoint on what it stores: each hit is
 * reported in the program's code, at L_after_tsc_store, not in hermit's
 * stub. */
#include "guest.h"

volatile unsigned int stamp;

__attribute__((noinline)) static void store(void) {
	__asm__ volatile(
	    ".globl L_tsc_store\nL_tsc_store: rdtsc\n"
	    "mov %%eax, stamp(%%rip)\n"
	    ".globl L_after_tsc_store\nL_after_tsc_store: nop\n"
	    ::: "rax", "rdx", "memory");
}

int main(void) {
	for (int i = 0; i < 3; i++)
		store();
	say("done\n");
	return 0;
}
