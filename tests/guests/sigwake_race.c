/* sigwake_race: a SIGINT from outside, for the whole process, whose
 * handler wakes the thread that waits for it, as a Go program's
 * signal.Notify does: the main thread waits on a futex word that the
 * handler sets and wakes (Go's signal_recv), while a second thread sleeps
 * 1 ms at a time (Go's sysmon). Under hermit, the signal that comes while
 * both wait ends the main thread's wait, but the sleeper, whose sleep is
 * over too, may run first and take it: its handler's wake must reach the
 * main thread, which then finds no signal left and would wait again.
 * Prints "ready", then "got interrupt" once the handler's wake came.
 */
#include "guest.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

static volatile int word;

static void on_int(int sig) {
	(void)sig;
	word = 1;
	syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *sleeper(void *arg) {
	(void)arg;
	struct timespec ts = {0, 20000};
	for (;;)
		nanosleep(&ts, NULL);
	return NULL;
}

static void *reader(void *arg) {
	(void)arg;
	char c;
	while (read(0, &c, 1) != 0) {
	}
	return NULL;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_int;
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGINT, &sa, NULL) == 0);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, sleeper, NULL) == 0);
	CHECK(pthread_create(&th, NULL, reader, NULL) == 0);
	printf("ready\n");
	fflush(stdout);
	while (word == 0)
		syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	printf("got interrupt\n");
	fflush(stdout);
	_exit(0);
}
