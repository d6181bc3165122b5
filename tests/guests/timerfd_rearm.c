/* timerfd_rearm: a timerfd that fired is set again without being read,
 * as BEAM (Erlang) does: timerfd_settime drops the expirations not read,
 * so the descriptor is no longer readable, and the next epoll_wait waits
 * for the new deadline (under hermit it returned at once, and BEAM spun).
 * Prints, for each of three rounds of 10 ms, in whole milliseconds, when
 * epoll_wait returned and whether the disarmed descriptor polls ready. */
#include "guest.h"
#include <poll.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>

static long long now_ms(void) {
	struct timespec t;
	CHECK(clock_gettime(CLOCK_MONOTONIC, &t) == 0);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

int main(void) {
	int tfd = timerfd_create(CLOCK_MONOTONIC, 0), ep = epoll_create1(0);
	CHECK(tfd >= 0 && ep >= 0);
	struct epoll_event ev = {.events = EPOLLIN}, out[4];
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) == 0);
	struct itimerspec arm = {{0, 0}, {0, 10 * 1000000}}, zero = {0};
	long long t0 = now_ms();
	for (int i = 0; i < 3; i++) {
		CHECK(timerfd_settime(tfd, 0, &arm, NULL) == 0);
		int n = epoll_wait(ep, out, 4, -1);
		long long at = now_ms() - t0;
		CHECK(timerfd_settime(tfd, 0, &zero, NULL) == 0);
		struct pollfd p = {tfd, POLLIN, 0};
		say("round %d: %d ready at %lld ms; disarmed, %d ready\n", i, n, at, poll(&p, 1, 0));
	}
	return 0;
}
