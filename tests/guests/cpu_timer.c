/* cpu_timer: arms ITIMER_PROF (or, with argv[1] "virtual",
 * ITIMER_VIRTUAL) every 10 ms of CPU time and computes without a system
 * call until 20 of its signals came, as a sampling profiler's program
 * does; then prints how many came. Under hermit the thread's CPU time
 * moved only at its stops: the timer never expired, and the loop never
 * ended.
 */
#include "guest.h"

#include <signal.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t got;

static void on_signal(int sig) {
	(void)sig;
	got++;
}

int main(int argc, char **argv) {
	int virt = argc > 1 && strcmp(argv[1], "virtual") == 0;
	int sig = virt ? SIGVTALRM : SIGPROF;
	CHECK(signal(sig, on_signal) != SIG_ERR);
	struct itimerval it = {{0, 10000}, {0, 10000}};
	CHECK(setitimer(virt ? ITIMER_VIRTUAL : ITIMER_PROF, &it, NULL) == 0);
	volatile unsigned long x = 0;
	while (got < 20)
		x++;
	say("%d %s\n", (int)got, virt ? "SIGVTALRM" : "SIGPROF");
	return 0;
}
