/* timer_overrun: a POSIX timer whose real-time signal is blocked expires
 * five times before the program takes the signal: the kernel queues one
 * signal, counts the other expirations as overruns, and timer_getoverrun
 * says 4 once that signal is taken. Under hermit each expiration queued a
 * signal of its own, and timer_getoverrun said 0.
 * Prints what timer_getoverrun says before and after the signal is taken,
 * and whether another signal was queued. */
#include "guest.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

int main(void) {
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN};
	timer_t tm;
	CHECK(timer_create(CLOCK_MONOTONIC, &ev, &tm) == 0);
	struct itimerspec every = {{0, 10 * 1000000}, {0, 10 * 1000000}};
	CHECK(timer_settime(tm, 0, &every, NULL) == 0);
	struct timespec d = {0, 55 * 1000000};
	CHECK(nanosleep(&d, NULL) == 0);
	say("before: overrun %d\n", timer_getoverrun(tm));
	siginfo_t si;
	CHECK(sigwaitinfo(&set, &si) == SIGRTMIN);
	say("taken: overrun %d\n", timer_getoverrun(tm));
	struct timespec zero = {0, 0};
	int more = sigtimedwait(&set, &si, &zero);
	say("another signal: %s\n", more == SIGRTMIN ? "yes" : errno == EAGAIN ? "no" : "error");
	struct itimerspec off = {0};
	CHECK(timer_settime(tm, 0, &off, NULL) == 0);
	return 0;
}
