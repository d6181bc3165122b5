/* sleep_signal: a 5 s nanosleep and a 5 s relative clock_nanosleep, each
 * interrupted after 1 s by SIGALRM (a handler, no SA_RESTART): both
 * return EINTR and write about 4 s left into rem (rounded to the second,
 * so natively and under hermit's virtual clock alike).
 */
#include "guest.h"

#include <signal.h>
#include <string.h>
#include <time.h>

static void onalarm(int sig) { (void)sig; }

static long rounded(struct timespec ts) { return ts.tv_sec + (ts.tv_nsec >= 500000000); }

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = onalarm;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	struct timespec req = {5, 0}, rem = {0, 0};

	alarm(1);
	int r = nanosleep(&req, &rem);
	say("nanosleep: %s, %ld s left\n", r == -1 && errno == EINTR ? "EINTR" : "not interrupted", rounded(rem));

	rem.tv_sec = rem.tv_nsec = 0;
	alarm(1);
	r = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
	say("clock_nanosleep: %s, %ld s left\n", r == EINTR ? "EINTR" : "not interrupted", rounded(rem));
	return 0;
}
