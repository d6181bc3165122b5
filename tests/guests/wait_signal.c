/* wait_signal: a signal comes while the process waits for a child, in
 * the waits that hermit cannot judge from its tables and probes with
 * WNOHANG (waitpid with WUNTRACED, waitid on a pidfd as Go's os/exec
 * does since Go 1.23). The child sleeps 2 s; SIGALRM comes after 1 s.
 *
 *   eintr    the handler has no SA_RESTART: waitpid fails with EINTR, as
 *            natively (hermit made the call again after the handler, and
 *            it went on waiting)
 *   restart  SA_RESTART: waitid(P_PIDFD) is made again and reaps the
 *            child (hermit made that second wait in the kernel, where it
 *            blocked while the child waited for its turn)
 */
#include "guest.h"
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static volatile sig_atomic_t alarms;

static void onalarm(int sig) {
	(void)sig;
	alarms++;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	int restart = strcmp(argv[1], "restart") == 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = onalarm;
	sa.sa_flags = restart ? SA_RESTART : 0;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		sleep(2);
		_exit(7);
	}
	alarm(1);
	if (!restart) {
		int st;
		pid_t r = waitpid(c, &st, WUNTRACED);
		say("waitpid: %d (%s), %d alarm\n", r == c ? 0 : (int)r, r < 0 ? strerror(errno) : "the child", (int)alarms);
		CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st));
		say("then the child exited %d\n", WEXITSTATUS(st));
		return 0;
	}
	int pidfd = (int)syscall(SYS_pidfd_open, c, 0);
	CHECK(pidfd >= 0);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	CHECK(waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) == 0);
	say("waitid(P_PIDFD): the child exited %d, %d alarm\n", si.si_status, (int)alarms);
	return 0;
}
