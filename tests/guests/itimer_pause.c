/* itimer_pause: a repeating ITIMER_REAL of 10 ms, and pause() until five
   SIGALRMs have come. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
static volatile sig_atomic_t ticks;
static void on_alarm(int s) { (void)s; ticks++; }
int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 10000}, {0, 10000}};
	setitimer(ITIMER_REAL, &it, NULL);
	while (ticks < 5)
		pause();
	printf("ticks %d\n", (int)ticks);
	return 0;
}
