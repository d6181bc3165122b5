/* mt_stop SIG|caught: a parent stops its child, which has a second thread
 * waiting in pause, with signal SIG (its default action stops the
 * process) and sees the stop in waitpid; or, "caught", sends SIGTSTP to a
 * child that catches it and sees its handler run. Under hermit the
 * child's threads, resumed to join the stop, made their calls again and
 * again while the thread that took the signal waited for a turn: a hang.
 */
#include "guest.h"
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

static int handled[2];

static void on_tstp(int sig) {
	(void)sig;
	CHECK(write(handled[1], "h", 1) == 1);
}

static void *waiter(void *arg) {
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	int caught = !strcmp(argv[1], "caught");
	int sig = caught ? SIGTSTP : atoi(argv[1]);
	int ready[2];
	CHECK(pipe(ready) == 0 && pipe(handled) == 0);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		if (caught)
			signal(SIGTSTP, on_tstp);
		pthread_t th;
		CHECK(pthread_create(&th, NULL, waiter, NULL) == 0);
		CHECK(write(ready[1], "r", 1) == 1);
		for (;;)
			pause();
	}
	char b;
	CHECK(read(ready[0], &b, 1) == 1);
	usleep(10000);
	CHECK(kill(c, sig) == 0);
	int st;
	if (caught) {
		CHECK(read(handled[0], &b, 1) == 1);
		say("the handler ran\n");
	} else {
		CHECK(waitpid(c, &st, WUNTRACED) == c);
		say("stopped by %s\n", WIFSTOPPED(st) ? strsignal(WSTOPSIG(st)) : "nothing");
		CHECK(kill(c, SIGCONT) == 0);
	}
	CHECK(kill(c, SIGKILL) == 0 && waitpid(c, &st, 0) == c);
	say("killed: %d\n", WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	return 0;
}
