/* raise_signals: the program sends itself SIGCHLD, then SIGUSR1, each
 * caught by a handler, and prints how many it caught. A debugger shows the
 * SIGUSR1 by its name (lldb reads signal numbers as Linux's, gdb as its
 * own); lldb passes the SIGCHLD on without a stop, as natively.
 */
#include "guest.h"

#include <signal.h>

static volatile sig_atomic_t caught;

static void on_signal(int sig) {
	(void)sig;
	caught++;
}

int main(void) {
	CHECK(signal(SIGCHLD, on_signal) != SIG_ERR);
	CHECK(signal(SIGUSR1, on_signal) != SIG_ERR);
	CHECK(raise(SIGCHLD) == 0);
	CHECK(raise(SIGUSR1) == 0);
	say("caught %d\n", (int)caught);
	return 0;
}
