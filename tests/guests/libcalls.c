/* libcalls: calls puts, a function of libc (a shared library the dynamic
 * loader maps after the program starts), three times, each with its own
 * string, so that a debugger's breakpoint on puts tells its calls apart.
 *
 * Checks breakpoints in shared libraries in a replay that starts again
 * from the beginning (reverse execution, goto start): they must hit.
 */
#include <stdio.h>

int main(void) {
	char buf[32];
	for (int i = 0; i < 3; i++) {
		snprintf(buf, sizeof buf, "call %d", i);
		puts(buf);
	}
	return 0;
}
