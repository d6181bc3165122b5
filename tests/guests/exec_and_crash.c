/* exec_and_crash: forks a child that execs /bin/echo and then a child
 * that dies of a NULL store, and waits for both (tests/gdb_cli_test.go:
 * going back from the end of the echo process, whose exit the other
 * child's crash follows in the recording).
 */
#include "guest.h"

#include <sys/wait.h>

int main(void) {
	pid_t echo = fork();
	CHECK(echo >= 0);
	if (echo == 0) {
		execl("/bin/echo", "echo", "child says hi", (char *)NULL);
		_exit(127);
	}
	CHECK(waitpid(echo, NULL, 0) == echo);
	pid_t crash = fork();
	CHECK(crash >= 0);
	if (crash == 0) {
		volatile int *volatile p = NULL;
		*p = 1;
		_exit(0);
	}
	int st;
	CHECK(waitpid(crash, &st, 0) == crash);
	say("crash child: signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return 0;
}
