/* pty_signal intr|quit|caught: a child in its own session reads its
 * controlling terminal, a pty's slave, while the parent writes ^C
 * ("intr", "caught") or ^\ ("quit") to the master; the line discipline
 * signals the child's process group. "caught": the child's handler runs
 * and its read fails with EINTR. Replay skips the write to the master, so
 * no terminal sent the signal there: the child's read waited for ever (or
 * the replay diverged).
 */
#include "guest.h"
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

static void onint(int sig) {
	(void)sig;
	say("the child's handler ran\n");
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	const char *mode = argv[1];
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	CHECK(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
	char *sn = ptsname(m);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		close(m);
		CHECK(setsid() > 0);
		int s = open(sn, O_RDWR);
		CHECK(s >= 0 && ioctl(s, TIOCSCTTY, 0) == 0);
		if (!strcmp(mode, "caught")) {
			struct sigaction sa = {.sa_handler = onint};
			CHECK(sigaction(SIGINT, &sa, NULL) == 0);
		}
		writeall(s, "r", 1);
		char ch;
		ssize_t n = read(s, &ch, 1);
		say("the child's read returned %zd (%s)\n", n, n < 0 ? strerror(errno) : "data");
		_exit(0);
	}
	char ch;
	CHECK(read(m, &ch, 1) == 1 && ch == 'r');
	usleep(100000); // the child is in its read by then
	writeall(m, strcmp(mode, "quit") ? "\x03" : "\x1c", 1);
	int st;
	CHECK(waitpid(c, &st, 0) == c);
	if (WIFSIGNALED(st))
		say("the child was killed by %s\n", strsignal(WTERMSIG(st)));
	else
		say("the child exited with %d\n", WEXITSTATUS(st));
	return 0;
}
