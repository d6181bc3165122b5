/* stale_ready: the main thread waits, again and again, on a descriptor
 * that is ready (poll, ppoll with a timeout, select, epoll_wait, or recv
 * with MSG_PEEK, none of
 * which takes the data), while a second thread sleeps 1 ms, takes the
 * byte that makes it ready, sleeps 10 ms, sets a flag and sends a byte
 * again. The main thread's last wait ends when that byte comes. Under
 * hermit the main thread's call, found ready at its stop, must not run
 * later on that old answer after the other thread took the byte (it
 * waited in the kernel while the thread that would end its wait was
 * parked: a hang).
 */
#include "guest.h"
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>

static int sv[2];
static volatile int done;

static void *taker(void *arg) {
	(void)arg;
	char c;
	usleep(1000);
	CHECK(read(sv[0], &c, 1) == 1);
	usleep(10000);
	done = 1;
	CHECK(write(sv[1], "y", 1) == 1);
	return NULL;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	const char *mode = argv[1];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(write(sv[1], "x", 1) == 1);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN};
	CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev) == 0);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, taker, NULL) == 0);
	long waits = 0;
	while (!done) {
		waits++;
		if (!strcmp(mode, "poll")) {
			struct pollfd p = {.fd = sv[0], .events = POLLIN};
			CHECK(poll(&p, 1, -1) == 1);
		} else if (!strcmp(mode, "ppoll")) {
			// With a timeout, which the call writes back at its exit.
			struct pollfd p = {.fd = sv[0], .events = POLLIN};
			struct timespec ts = {100, 0};
			CHECK(ppoll(&p, 1, &ts, NULL) == 1);
		} else if (!strcmp(mode, "select")) {
			fd_set r;
			FD_ZERO(&r);
			FD_SET(sv[0], &r);
			CHECK(select(sv[0] + 1, &r, NULL, NULL, NULL) == 1);
		} else if (!strcmp(mode, "epoll")) {
			struct epoll_event out;
			CHECK(epoll_wait(ep, &out, 1, -1) == 1);
		} else {
			char c;
			CHECK(recv(sv[0], &c, 1, MSG_PEEK) == 1);
		}
	}
	CHECK(pthread_join(th, NULL) == 0);
	char c;
	CHECK(read(sv[0], &c, 1) == 1 && c == 'y');
	say("%s: the last wait ended with the second byte\n", mode);
	return 0;
}
