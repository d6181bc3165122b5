/* pipe_signal: a signal handler (no SA_RESTART) interrupts read(2) of a
   pipe that has no data. The reads of a file before make hermit patch
   libc's read site, so that the read waits in hermit's code in the guest
   (its slow path): the signal must still interrupt it, as natively (and
   as CPython's signal tests and a Ctrl-C at input() expect).
   No argument: SIGALRM, twice, on a pipe whose only writer is the
   program itself. "stdin": prints "ready", then reads stdin until a
   SIGINT from outside interrupts it. "poll": the same with a poll(2) of
   stdin with a 20 s timeout (one that hermit waits for in slices). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static volatile sig_atomic_t handled;
static void on_signal(int s) { (void)s; handled++; }
static void report(const char *what, ssize_t n) {
	printf("%s: %zd (%s), handler ran %d times\n", what, n, n < 0 ? strerror(errno) : "data", (int)handled);
	fflush(stdout);
}
int main(int argc, char **argv) {
	char buf[64];
	for (int i = 0; i < 3; i++) {
		int fd = open("/etc/passwd", O_RDONLY);
		if (fd < 0) return 2;
		while (read(fd, buf, sizeof buf) > 0) {}
		close(fd);
	}
	struct sigaction sa; memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	if (argc > 1 && (strcmp(argv[1], "stdin") == 0 || strcmp(argv[1], "poll") == 0)) {
		sigaction(SIGINT, &sa, NULL);
		printf("ready\n");
		fflush(stdout);
		if (argv[1][0] == 'p') {
			struct pollfd pfd = {.fd = 0, .events = POLLIN};
			report("poll stdin", poll(&pfd, 1, 20000));
		} else {
			report("read stdin", read(0, buf, sizeof buf));
		}
		return 0;
	}
	int p[2];
	if (pipe(p) < 0) return 2;
	sigaction(SIGALRM, &sa, NULL);
	for (int i = 0; i < 2; i++) {
		alarm(1);
		report(i == 0 ? "read 0" : "read 1", read(p[0], buf, 1));
	}
	return 0;
}
