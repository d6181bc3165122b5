/* sigpipe: writes to a pipe, a Unix socket and a TCP connection whose
 * other end is closed, under a SIGPIPE handler that says so (a write of
 * its own), and a send with MSG_NOSIGNAL, which raises none. Each failed
 * write says EPIPE after its handler's line; the kernel's SIGPIPE must
 * come in a replay too, where hermit answers the writes to sockets from
 * the recording.
 */
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>

#include "guest.h"

static void on_pipe(int sig) {
	(void)sig;
	static const char msg[] = "  handler: SIGPIPE\n";
	if (write(1, msg, sizeof msg - 1) < 0) {
	}
}

static void try_write(const char *what, int fd, int nosignal) {
	/* A TCP peer's close is seen at the first write (the peer answers it
	 * with a reset); the next fails. */
	for (int i = 0; i < 2; i++) {
		ssize_t n = nosignal ? send(fd, "x", 1, MSG_NOSIGNAL) : write(fd, "x", 1);
		if (n < 0) {
			say("%s: write %d: %s\n", what, i, errno == EPIPE ? "EPIPE" : strerror(errno));
			return;
		}
		usleep(10000);
	}
	say("%s: no error\n", what);
}

int main(void) {
	struct sigaction sa = {.sa_handler = on_pipe};
	CHECK(sigaction(SIGPIPE, &sa, NULL) == 0);

	int p[2];
	CHECK(pipe(p) == 0 && close(p[0]) == 0);
	try_write("pipe", p[1], 0);

	int u[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, u) == 0 && close(u[1]) == 0);
	try_write("unix socket", u[0], 0);

	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0);
	CHECK(getsockname(l, (struct sockaddr *)&a, &len) == 0);
	for (int nosignal = 0; nosignal < 2; nosignal++) {
		int c = socket(AF_INET, SOCK_STREAM, 0);
		CHECK(c >= 0 && connect(c, (struct sockaddr *)&a, sizeof a) == 0);
		int s = accept(l, NULL, NULL);
		CHECK(s >= 0 && close(s) == 0);
		try_write(nosignal ? "tcp, MSG_NOSIGNAL" : "tcp", c, nosignal);
		close(c);
	}
	return 0;
}
