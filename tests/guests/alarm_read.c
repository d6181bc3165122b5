/* alarm_read: a SIGALRM handler (SA_RESTART) fires while the program waits
   in read(2) on stdin; the read restarts and prints what it gets. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void on_alarm(int s) {
	(void)s;
	if (write(1, "alarm\n", 6) < 0) _exit(3);
}
int main(void) {
	struct sigaction sa; memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm; sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	char buf[64];
	ssize_t n = read(0, buf, sizeof buf);
	printf("read %zd: %.*s", n, (int)(n > 0 ? n : 0), buf);
	return 0;
}
