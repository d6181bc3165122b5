/* bump: five calls that add 1 to 5 to a counter, for going back through
 * them in a debugger: to each write (a watchpoint), to each call's first
 * instruction (a breakpoint gdb's next stepped onto). */
#include "guest.h"

long counter;

__attribute__((noinline)) void bump(int i) {
	counter += i;
}

int main(void) {
	/* One line: gdb's next runs the whole loop, stepping into each
	 * call and on to its return. */
	for (int i = 1; i <= 5; i++) bump(i);
	say("counter = %ld\n", counter);
	return 0;
}
