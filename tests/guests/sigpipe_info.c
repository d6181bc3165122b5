/* sigpipe_info: writes 4 KiB blocks to stdout until a write fails or
 * its SIGPIPE handler (SA_SIGINFO) has run, then says on stderr how the
 * write ended and what the handler's siginfo held. Run with a stdout
 * whose reader goes away: the kernel fails the write with EPIPE and sends
 * SIGPIPE from the writer itself (si_code SI_USER, si_pid its own pid).
 */
#include "guest.h"
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t code = 99, frompid = -1, fromuid = -1;

static void handler(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)uc;
	code = si->si_code;
	frompid = si->si_pid;
	fromuid = si->si_uid;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	CHECK(sigaction(SIGPIPE, &sa, NULL) == 0);
	static char buf[4096];
	memset(buf, 'x', sizeof buf);
	ssize_t n = 0;
	int err = 0;
	for (int i = 0; i < 100000 && code == 99; i++) {
		n = write(1, buf, sizeof buf);
		if (n < 0) {
			err = errno;
			break;
		}
		usleep(1000);
	}
	sayfd(2, "write: %s; SIGPIPE si_code %d, from %s, uid %s\n", err ? strerror(err) : "no error", (int)code,
	      frompid == getpid() ? "itself" : "elsewhere", fromuid == (int)getuid() ? "its own" : "another");
	return 0;
}
