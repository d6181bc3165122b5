/* vfork_exec: vfork, then exec /bin/sh in the child.
 *
 * Checks vfork under the tracer: the parent stays suspended until the child
 * execs, the exec'd shell prints and exits 5, and waitpid reports that
 * status. The output is deterministic.
 */
#include "guest.h"

#include <string.h>
#include <sys/wait.h>

int main(int argc, char **argv) {
	/* "access": a call before the vfork that record stops at and run
	   does not (a turn's digest must not take it for the vfork's). */
	if (argc > 1 && strcmp(argv[1], "access") == 0)
		CHECK(access("/", F_OK) == 0);
	pid_t pid = vfork();
	CHECK(pid >= 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "echo child: hello from sh; exit 5", (char *)NULL);
		_exit(127);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	say("parent: child exited with %d\n", WEXITSTATUS(st));
	CHECK(WEXITSTATUS(st) == 5);
	return 0;
}
