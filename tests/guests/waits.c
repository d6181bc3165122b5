/* waits: the wait family under the tracer.
 *
 * Four children: A exits 11, B exits 12, C exits 13 after reading a byte from
 * a pipe, D sleeps in pause() until killed by SIGTERM. main checks
 * waitpid(C, WNOHANG) (C still running), waitpid(B), waitid(P_PID, A),
 * waitid(D) reporting CLD_KILLED, waitid(WNOWAIT) peeking at C without
 * reaping it, wait() reaping C, and wait() failing with ECHILD.
 * The output is deterministic.
 */
#include "guest.h"

#include <signal.h>
#include <sys/wait.h>

static pid_t spawn(int status, int readfd) {
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid != 0)
		return pid;
	if (readfd >= 0) {
		char c;
		CHECK(read(readfd, &c, 1) == 1);
	}
	if (status < 0)
		for (;;)
			pause();
	_exit(status);
}

int main(void) {
	int fds[2], st;
	siginfo_t si;

	CHECK(pipe(fds) == 0);
	pid_t a = spawn(11, -1), b = spawn(12, -1), c = spawn(13, fds[0]), d = spawn(-1, -1);

	CHECK(waitpid(c, &st, WNOHANG) == 0);
	say("waitpid(C, WNOHANG): still running\n");

	CHECK(waitpid(b, &st, 0) == b && WIFEXITED(st));
	say("waitpid(B): exited %d\n", WEXITSTATUS(st));

	CHECK(waitid(P_PID, (id_t)a, &si, WEXITED) == 0);
	CHECK(si.si_pid == a && si.si_code == CLD_EXITED);
	say("waitid(A): CLD_EXITED status %d\n", si.si_status);

	CHECK(kill(d, SIGTERM) == 0);
	CHECK(waitid(P_PID, (id_t)d, &si, WEXITED) == 0);
	CHECK(si.si_pid == d && si.si_code == CLD_KILLED);
	say("waitid(D): CLD_KILLED by signal %d\n", si.si_status);

	CHECK(write(fds[1], "x", 1) == 1);
	CHECK(waitid(P_PID, (id_t)c, &si, WEXITED | WNOWAIT) == 0 && si.si_pid == c);
	say("waitid(C, WNOWAIT): status %d\n", si.si_status);
	CHECK(wait(&st) == c && WIFEXITED(st));
	say("wait(): C exited %d\n", WEXITSTATUS(st));

	CHECK(wait(&st) == -1 && errno == ECHILD);
	say("wait(): ECHILD\n");
	return 0;
}
