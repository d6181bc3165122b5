/* fork_pipe: 20 forked children each write one line into a shared pipe;
 * the parent prints the lines in the order it reads them, then reaps all.
 *
 * Checks determinism across processes: natively the read order and the
 * children's pids vary between runs; under hermit they are the same on every
 * run. Each line is one write below PIPE_BUF, so lines never tear.
 */
#include "guest.h"

#include <sched.h>
#include <string.h>
#include <sys/wait.h>

enum { NCHILDREN = 20 };

static void child(int idx, int wfd) {
	for (int i = 0; i < idx % 4; i++)
		sched_yield();
	sayfd(wfd, "child %d pid %d\n", idx, (int)getpid());
	_exit(0);
}

int main(void) {
	int fds[2];
	pid_t pids[NCHILDREN];

	CHECK(pipe(fds) == 0);
	for (int i = 0; i < NCHILDREN; i++) {
		pids[i] = fork();
		CHECK(pids[i] >= 0);
		if (pids[i] == 0) {
			close(fds[0]);
			child(i, fds[1]);
		}
	}
	close(fds[1]);

	/* Read everything, then split into lines: one read may hold several. */
	char data[NCHILDREN * 64];
	size_t len = 0;
	ssize_t n;
	while ((n = read(fds[0], data + len, sizeof data - 1 - len)) > 0)
		len += (size_t)n;
	CHECK(n == 0);
	data[len] = '\0';

	int lines = 0;
	for (char *save, *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		say("read #%d: %s\n", ++lines, line);
	CHECK(lines == NCHILDREN);

	for (int i = 0; i < NCHILDREN; i++) {
		int st;
		CHECK(waitpid(pids[i], &st, 0) == pids[i]);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	say("reaped %d children\n", NCHILDREN);
	return 0;
}
