/* dnotify: fcntl(F_NOTIFY) on a directory the program made, with a
 * real-time signal (F_SETSIG) for each change it then makes there. The
 * kernel sends the same signals in the replay.
 */
#include "guest.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

static volatile sig_atomic_t got;
static volatile sig_atomic_t fd_seen = -1;

static void onsig(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)uc;
	got++;
	fd_seen = si->si_fd;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	char dir[256], f[300];
	snprintf(dir, sizeof dir, "%s/watched", argv[1]);
	CHECK(mkdir(dir, 0755) == 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = onsig;
	sa.sa_flags = SA_SIGINFO;
	CHECK(sigaction(SIGRTMIN + 1, &sa, NULL) == 0);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(fcntl(fd, F_SETSIG, SIGRTMIN + 1) == 0);
	CHECK(fcntl(fd, F_NOTIFY, DN_CREATE | DN_DELETE | DN_MULTISHOT) == 0);
	for (int i = 0; i < 3; i++) {
		snprintf(f, sizeof f, "%s/f%d", dir, i);
		int c = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		CHECK(c >= 0);
		close(c);
		say("after creating f%d: %d signals, si_fd is the watch %d\n", i, (int)got, fd_seen == fd);
	}
	CHECK(unlink(f) == 0);
	say("after the unlink: %d signals\n", (int)got);
	return 0;
}
