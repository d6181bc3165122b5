/* fork_wait: forks 100 children; child i exits with status i.
 *
 * Checks fork and exit-status delivery under the tracer: wait(2) reaps each
 * child once, each status matches the child's index, and the statuses sum to
 * 0 + 1 + ... + 99 = 4950. The output is deterministic.
 */
#include "guest.h"

#include <sys/wait.h>

enum { NCHILDREN = 100 };

int main(void) {
	pid_t pids[NCHILDREN];
	int seen[NCHILDREN] = {0};
	int sum = 0;

	for (int i = 0; i < NCHILDREN; i++) {
		pids[i] = fork();
		CHECK(pids[i] >= 0);
		if (pids[i] == 0)
			_exit(i);
	}
	for (int n = 0; n < NCHILDREN; n++) {
		int st;
		pid_t pid = wait(&st);
		CHECK(pid > 0 && WIFEXITED(st));
		int idx = 0;
		while (idx < NCHILDREN && pids[idx] != pid)
			idx++;
		CHECK(idx < NCHILDREN && WEXITSTATUS(st) == idx && !seen[idx]);
		seen[idx] = 1;
		sum += WEXITSTATUS(st);
	}
	CHECK(wait(NULL) == -1 && errno == ECHILD);
	say("reaped %d children, each status once, sum %d\n", NCHILDREN, sum);
	CHECK(sum == NCHILDREN * (NCHILDREN - 1) / 2);
	return 0;
}
