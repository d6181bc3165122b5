/* tcp_big: one blocking write of 16 MiB, far more than a loopback TCP
 * connection buffers, to a reader that is another guest thread (over
 * 127.0.0.1) and then another guest process (over ::1). Natively the
 * reader drains it as it comes; under hermit, whose guest threads run one
 * at a time, a write that waited in the kernel for room would hold the
 * turn the reader needs for ever.
 */
#include "guest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

#define N (16 << 20)

static char *data;

/* drain reads from fd until N bytes or end of file and returns how many,
 * checking each byte against the pattern written. */
static long drain(int fd) {
	static char buf[1 << 16];
	long n = 0;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		CHECK(r >= 0);
		if (r == 0)
			return n;
		for (ssize_t i = 0; i < r; i++)
			CHECK(buf[i] == (char)((n + i) % 251));
		n += r;
	}
}

static void *reader(void *arg) {
	long n = drain(*(int *)arg);
	say("a thread read %ld bytes over 127.0.0.1\n", n);
	return NULL;
}

/* connected makes a listener on the loopback address of family fam,
 * connects to it, and returns both ends. */
static void connected(int fam, int *client, int *server) {
	int l = socket(fam, SOCK_STREAM, 0);
	CHECK(l >= 0);
	struct sockaddr_storage ss = {0};
	socklen_t len;
	if (fam == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof *in;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		len = sizeof *in6;
	}
	CHECK(bind(l, (struct sockaddr *)&ss, len) == 0);
	CHECK(listen(l, 1) == 0);
	CHECK(getsockname(l, (struct sockaddr *)&ss, &len) == 0);
	*client = socket(fam, SOCK_STREAM, 0);
	CHECK(*client >= 0);
	CHECK(connect(*client, (struct sockaddr *)&ss, len) == 0);
	*server = accept(l, NULL, NULL);
	CHECK(*server >= 0);
	close(l);
}

int main(void) {
	data = malloc(N);
	CHECK(data != NULL);
	for (long i = 0; i < N; i++)
		data[i] = (char)(i % 251);

	int c, s;
	connected(AF_INET, &c, &s);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, reader, &c) == 0);
	CHECK(write(s, data, N) == N);
	close(s);
	CHECK(pthread_join(th, NULL) == 0);
	close(c);

	connected(AF_INET6, &c, &s);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(s);
		say("a child read %ld bytes over ::1\n", drain(c));
		_exit(0);
	}
	close(c);
	CHECK(send(s, data, N, 0) == N);
	close(s);
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	say("both writes returned %d\n", N);
	return 0;
}
