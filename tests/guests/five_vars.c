/* five_vars: five globals written in turn, three rounds, for more
 * watchpoints than the four debug registers hold over a session. */
#include "guest.h"

long a, b, c, d, e;

__attribute__((noinline)) void setall(long v) {
	a = v;
	b = v + 1;
	c = v + 2;
	d = v + 3;
	e = v + 4;
}

int main(void) {
	for (long v = 1; v <= 3; v++)
		setall(v);
	say("a = %ld, e = %ld\n", a, e);
	return 0;
}
