/* ppoll_signal: SIGALRM is blocked except while ppoll(2) waits on stdin with
   an empty mask: the alarm interrupts ppoll (-1, EINTR), then a second
   ppoll and a read get the line. */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void on_alarm(int s) { (void)s; if (write(1, "alarm\n", 6) < 0) _exit(3); }
int main(void) {
	struct sigaction sa; memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sigset_t block, none; sigemptyset(&block); sigaddset(&block, SIGALRM); sigemptyset(&none);
	sigprocmask(SIG_BLOCK, &block, NULL); /* SIGALRM only reaches ppoll */
	alarm(1);
	struct pollfd p = {.fd = 0, .events = POLLIN};
	int n = ppoll(&p, 1, NULL, &none);
	printf("ppoll %d\n", n);
	n = ppoll(&p, 1, NULL, &none);
	char buf[64]; ssize_t k = read(0, buf, sizeof buf);
	printf("ppoll %d read %zd: %.*s", n, k, (int)(k > 0 ? k : 0), buf);
	return 0;
}
