/* tcp_split_reply: a client thread and a server thread talk over TCP on
 * loopback, request and reply, 20 rounds; the server writes each reply in
 * two pieces, as a line-by-line protocol server often does. Once the
 * exchange looks interactive to the kernel, it delays its ACKs, and Nagle's
 * algorithm holds the second piece until the first is acknowledged: the
 * rest of the reply comes when a TCP timer fires, while both threads wait.
 * On the host's network that timing is the host's (hermit warns); on
 * --network local hermit tunes TCP so that it repeats. Prints the rounds.
 */
#include "guest.h"

#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>

#define ROUNDS 20

static int listener;

static void readline(int fd, char *buf, size_t size) {
	size_t n = 0;
	while (n + 1 < size) {
		ssize_t r = read(fd, buf + n, 1);
		CHECK(r == 1);
		if (buf[n++] == '\n')
			break;
	}
	buf[n] = 0;
}

static void *server(void *arg) {
	(void)arg;
	int c = accept(listener, NULL, NULL);
	CHECK(c >= 0);
	char line[64];
	for (int i = 0; i < ROUNDS; i++) {
		readline(c, line, sizeof line);
		writeall(c, "250 ", 4);
		writeall(c, "ok\r\n", 4);
	}
	close(c);
	return NULL;
}

int main(void) {
	listener = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(listener >= 0);
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(listener, (struct sockaddr *)&a, sizeof a) == 0);
	CHECK(listen(listener, 1) == 0);
	socklen_t len = sizeof a;
	CHECK(getsockname(listener, (struct sockaddr *)&a, &len) == 0);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, server, NULL) == 0);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(s >= 0);
	CHECK(connect(s, (struct sockaddr *)&a, sizeof a) == 0);
	char line[64];
	int good = 0;
	for (int i = 0; i < ROUNDS; i++) {
		writeall(s, "NOOP\r\n", 6);
		readline(s, line, sizeof line);
		good += strcmp(line, "250 ok\r\n") == 0;
	}
	CHECK(pthread_join(th, NULL) == 0);
	say("%d rounds, %d replies whole\n", ROUNDS, good);
	return 0;
}
