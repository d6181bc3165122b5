/* splice_tcp_unix: 4 MiB from a TCP connection (which a recording keeps
 * as outside the guest) spliced into a pipe, and from the pipe into a
 * Unix socket that a thread drains. How much a splice into the socket takes depends on how the pipe
 * holds its data: a socket's pages in the recording, and in replay the
 * pages of the recorded bytes written again, so replay's splices took
 * other amounts and diverged (Go's TestSplice/tcp-to-unix).
 */
#include "guest.h"
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>

#define TOTAL (4 << 20)

static int tcpw, unixr;
static char wbuf[1 << 20];
static long got;

static void *writer(void *arg) {
	(void)arg;
	for (int i = 0; i < TOTAL / (int)sizeof wbuf; i++) {
		memset(wbuf, 'a' + i % 26, sizeof wbuf);
		writeall(tcpw, wbuf, sizeof wbuf);
	}
	close(tcpw);
	return NULL;
}

static void *reader(void *arg) {
	(void)arg;
	static char b[4096];
	ssize_t n;
	while ((n = read(unixr, b, sizeof b)) > 0)
		got += n;
	return NULL;
}

int main(void) {
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	CHECK(l >= 0 && bind(l, (void *)&a, sizeof a) == 0 && listen(l, 1) == 0 && getsockname(l, (void *)&a, &al) == 0);
	tcpw = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(tcpw >= 0 && connect(tcpw, (void *)&a, sizeof a) == 0);
	int tcpr = accept(l, NULL, NULL);
	CHECK(tcpr >= 0);
	int u[2], p[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, u) == 0 && pipe(p) == 0);
	CHECK(fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= 0);
	int sndbuf = 100000;
	CHECK(setsockopt(u[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) == 0);
	unixr = u[1];
	pthread_t tw, tr;
	CHECK(pthread_create(&tw, NULL, writer, NULL) == 0 && pthread_create(&tr, NULL, reader, NULL) == 0);
	long moved = 0;
	for (;;) {
		ssize_t n = splice(tcpr, NULL, p[1], NULL, 1 << 20, 0);
		CHECK(n >= 0);
		if (n == 0)
			break;
		while (n > 0) {
			ssize_t m = splice(p[0], NULL, u[0], NULL, n, 0);
			CHECK(m > 0);
			n -= m, moved += m;
		}
	}
	close(u[0]);
	CHECK(pthread_join(tw, NULL) == 0 && pthread_join(tr, NULL) == 0);
	say("moved %ld, the reader got %ld\n", moved, got);
	return 0;
}
