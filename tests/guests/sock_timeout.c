/* sock_timeout: a blocking recv with SO_RCVTIMEO on a socket whose peer
 * never writes, an accept with it on a listener nobody connects to, and a
 * send with SO_SNDTIMEO on a socket whose buffer is full, each fail with
 * EAGAIN once the timeout has passed (socket(7)). Under hermit the waits
 * had no end: the run ended as deadlocked. Prints each call's result and
 * how long it waited, in whole milliseconds. */
#include "guest.h"
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

static long long now_ms(void) {
	struct timespec t;
	CHECK(clock_gettime(CLOCK_MONOTONIC, &t) == 0);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static void timeout(int fd, int opt, long ms) {
	struct timeval tv = {0, ms * 1000};
	CHECK(setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv) == 0);
}

static void report(const char *what, long r, long long t0) {
	int e = errno;
	say("%s: %ld (%s) after %lld ms\n", what, r, r < 0 && e == EAGAIN ? "EAGAIN" : "?", now_ms() - t0);
}

int main(void) {
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	char buf[4096] = {0};
	timeout(sv[0], SO_RCVTIMEO, 50);
	long long t0 = now_ms();
	report("recv", recv(sv[0], buf, sizeof buf, 0), t0);

	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "hermit-sock-timeout-%d", getpid());
	CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0);
	timeout(l, SO_RCVTIMEO, 30);
	t0 = now_ms();
	report("accept", accept(l, NULL, NULL), t0);

	timeout(sv[1], SO_SNDTIMEO, 20);
	int small = 4096;
	CHECK(setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0);
	long r;
	while ((r = send(sv[1], buf, sizeof buf, MSG_DONTWAIT)) > 0) {
	}
	CHECK(r < 0 && errno == EAGAIN);
	t0 = now_ms();
	report("send", send(sv[1], buf, sizeof buf, 0), t0);
	return 0;
}
