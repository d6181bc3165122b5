/* yield_loop: makes many events (sched_yield is a scheduling point hermit
 * intercepts), so that replaying it takes a while: long enough to
 * interrupt a continue. argv[1] is how many (default 200000).
 */
#include "guest.h"

#include <sched.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 200000;
	say("yielding %ld times\n", n);
	for (long i = 0; i < n; i++)
		sched_yield();
	say("done\n");
	return 0;
}
