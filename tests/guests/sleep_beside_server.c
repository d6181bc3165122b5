/* sleep_beside_server: as runuser starts a server: the parent waits for
   its child with waitpid(WUNTRACED); the child starts a TCP server (a
   listener in select) and sleeps 10 x 100 ms. Under hermit, the wait for
   the outside world (the listener) was ended at every slice by the
   probed wait4, and the clock moved a microsecond a turn: the sleeps
   never ended. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
int main(void) {
	pid_t c = fork();
	if (c == 0) {
		pid_t srv = fork();
		if (srv == 0) {
			int s = socket(AF_INET, SOCK_STREAM, 0);
			struct sockaddr_in a = {.sin_family = AF_INET};
			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			if (bind(s, (void *)&a, sizeof a) || listen(s, 8))
				_exit(1);
			for (;;) {
				fd_set r;
				FD_ZERO(&r);
				FD_SET(s, &r);
				select(s + 1, &r, 0, 0, NULL);
				close(accept(s, 0, 0));
			}
		}
		double t0 = now();
		for (int i = 0; i < 10; i++)
			usleep(100000);
		printf("slept 10 x 100 ms: %s\n", now() - t0 >= 1.0 ? "1 s or more" : "less than 1 s");
		fflush(stdout);
		kill(srv, SIGKILL);
		waitpid(srv, 0, 0);
		_exit(0);
	}
	int st;
	while (waitpid(c, &st, WUNTRACED) == c && WIFSTOPPED(st))
		;
	printf("the child exited with %d\n", WEXITSTATUS(st));
	return 0;
}
