/* selfpipe: a daemon's wait for a signal: its SIGUSR1 handler writes to a
 * pipe of its own, which its only thread reads. Prints "ready", then,
 * once a signal from outside has come, "woken by SIGUSR1". Every thread
 * waits on the guest itself, yet a signal from outside ends the wait:
 * hermit called it a deadlock after 2 s.
 */
#include "guest.h"
#include <signal.h>
#include <string.h>

static int p[2];

static void wake(int sig) {
	(void)sig;
	char c = 'w';
	(void)!write(p[1], &c, 1);
}

int main(void) {
	CHECK(pipe(p) == 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = wake;
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	printf("ready\n");
	fflush(stdout);
	char c;
	CHECK(read(p[0], &c, 1) == 1);
	printf("woken by SIGUSR1\n");
	return 0;
}
