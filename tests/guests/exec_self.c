/* exec_self: execs its own binary (/proc/self/exe) with a different argv.
 *
 * Checks execve under the tracer: stage 1 passes its pid to stage 2, which
 * must run in the same process (same pid), see the new argv, and exit with
 * status 7. The output is deterministic.
 */
#include "guest.h"

#include <string.h>

int main(int argc, char **argv) {
	if (argc == 1) {
		char pid[32];
		snprintf(pid, sizeof pid, "%d", (int)getpid());
		say("stage 1: argc %d, exec self\n", argc);
		execl("/proc/self/exe", argv[0], "stage2", pid, (char *)NULL);
		CHECK(!"execl failed");
	}
	CHECK(argc == 3 && strcmp(argv[1], "stage2") == 0);
	say("stage 2: argc %d, argv[1] %s, same pid: %s\n", argc, argv[1],
	    atoi(argv[2]) == (int)getpid() ? "yes" : "no");
	return 7;
}
