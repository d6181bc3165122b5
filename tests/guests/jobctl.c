/* jobctl: job control between processes. A child (single-threaded, or
 * with four more threads) is stopped with SIGSTOP, seen stopped by
 * waitpid(WUNTRACED), writes nothing while stopped, is continued with
 * SIGCONT (seen by WCONTINUED), stopped again and killed while stopped.
 * In "self" mode the child stops itself with raise(SIGSTOP) and goes on
 * only once its parent continues it.
 */
#include "guest.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

static void *worker(void *arg) {
	(void)arg;
	for (;;)
		usleep(1000);
	return NULL;
}

static void report(const char *what, int st) {
	if (WIFSTOPPED(st))
		say("%s: stopped by signal %d\n", what, WSTOPSIG(st));
	else if (WIFCONTINUED(st))
		say("%s: continued\n", what);
	else if (WIFSIGNALED(st))
		say("%s: killed by signal %d\n", what, WTERMSIG(st));
	else
		say("%s: exited %d\n", what, WEXITSTATUS(st));
}

static int unread(int fd) {
	int n = -1;
	CHECK(ioctl(fd, FIONREAD, &n) == 0);
	return n;
}

static void self(void) {
	int go[2];
	CHECK(pipe(go) == 0);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		close(go[1]);
		raise(SIGSTOP);
		/* Exit only once the parent has seen it continue: an exit
		 * before the parent's waitpid(WCONTINUED) would replace the
		 * continued report (natively, under load). */
		char x;
		CHECK(read(go[0], &x, 1) == 0);
		_exit(4); /* its status tells it went on (a line could race the parent's) */
	}
	close(go[0]);
	int st;
	CHECK(waitpid(c, &st, WUNTRACED) == c);
	report("raise(SIGSTOP)", st);
	usleep(50000);
	CHECK(kill(c, SIGCONT) == 0);
	CHECK(waitpid(c, &st, WCONTINUED) == c);
	report("SIGCONT", st);
	close(go[1]);
	CHECK(waitpid(c, &st, 0) == c);
	report("child", st);
}

int main(int argc, char **argv) {
	int threads = argc > 1 && !strcmp(argv[1], "threads");
	if (argc > 1 && !strcmp(argv[1], "self")) {
		self();
		return 0;
	}
	int p[2];
	CHECK(pipe(p) == 0);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		close(p[0]);
		for (int i = 0; threads && i < 4; i++) {
			pthread_t t;
			CHECK(pthread_create(&t, NULL, worker, NULL) == 0);
		}
		for (;;) {
			usleep(1000);
			if (write(p[1], "x", 1) != 1)
				_exit(9);
		}
	}
	close(p[1]);
	char b[4096];
	int st;
	CHECK(read(p[0], b, 1) == 1);
	CHECK(kill(c, SIGSTOP) == 0);
	CHECK(waitpid(c, &st, WUNTRACED) == c);
	report("SIGSTOP", st);
	int n = unread(p[0]);
	if (n > 0)
		CHECK(read(p[0], b, (size_t)n) == n);
	usleep(50000);
	say("written while stopped: %d bytes\n", unread(p[0]));
	CHECK(kill(c, SIGCONT) == 0);
	CHECK(waitpid(c, &st, WCONTINUED) == c);
	report("SIGCONT", st);
	CHECK(read(p[0], b, 1) == 1);
	say("the child writes again\n");
	CHECK(kill(c, SIGSTOP) == 0);
	CHECK(waitpid(c, &st, WUNTRACED) == c);
	report("SIGSTOP again", st);
	CHECK(kill(c, SIGKILL) == 0);
	CHECK(waitpid(c, &st, 0) == c);
	report("SIGKILL while stopped", st);
	return 0;
}
