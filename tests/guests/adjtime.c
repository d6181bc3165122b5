/* adjtime: reads the time with adjtimex and clock_adjtime (modes 0: read
 * only) and with clock_gettime, and prints them: under hermit all three are
 * the same virtual time (natively the microseconds vary between runs).
 */
#include "guest.h"

#include <sys/timex.h>
#include <time.h>

static const char *agree(struct timeval tv, struct timespec ts) {
	long long a = (long long)tv.tv_sec * 1000000 + tv.tv_usec;
	long long b = (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	return a - b < 1000000 && b - a < 1000000 ? "yes" : "no";
}

int main(void) {
	struct timespec ts;
	struct timex tx = {0}, tx2 = {0};
	CHECK(clock_gettime(CLOCK_REALTIME, &ts) == 0);
	int r = adjtimex(&tx);
	CHECK(r >= 0);
	CHECK(clock_adjtime(CLOCK_REALTIME, &tx2) >= 0);
	say("clock_gettime %lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	say("adjtimex %lld.%06ld, agrees with clock_gettime: %s\n", (long long)tx.time.tv_sec, (long)tx.time.tv_usec, agree(tx.time, ts));
	say("clock_adjtime agrees with clock_gettime: %s\n", agree(tx2.time, ts));
	return 0;
}
