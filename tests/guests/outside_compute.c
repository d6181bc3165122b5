/* outside_compute: prints "ready", then computes without a syscall until
   a SIGUSR1 from outside runs its handler, which only sets a flag; then
   says so. Under hermit record the signal reaches the thread as it runs,
   at a point no replay can find exactly: the replay gives it after as
   much CPU time, and the loop ends there too. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
static volatile sig_atomic_t got;
static void on_usr1(int s) { (void)s; got = 1; }
int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	unsigned long x = 1;
	while (!got)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	printf("the loop ended at SIGUSR1\n");
	return x == 0;
}
