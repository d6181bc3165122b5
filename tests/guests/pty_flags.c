/* pty_flags: ioctls that set a descriptor's flags (FIONBIO, FIOCLEX,
 * FIONCLEX) on a pty master, which a recording keeps as outside the
 * guest, and fcntl reading them back. Replay faked the ioctls and read
 * the flags of its stand-in: they said nothing had changed. Then F_GETFL
 * of the master, of its slave opened write-only and of one from
 * TIOCGPTPEER opened read-only: replay's stand-in, a socket, lacked
 * O_LARGEFILE and the access mode (tmux's F_SETFL diverged).
 */
#include "guest.h"
#include <fcntl.h>
#include <sys/ioctl.h>

int main(void) {
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	CHECK(m >= 0);
	int on = 1, off = 0;
	CHECK(ioctl(m, FIONBIO, &on) == 0);
	int nb = fcntl(m, F_GETFL) & O_NONBLOCK;
	CHECK(ioctl(m, FIONBIO, &off) == 0);
	int nb2 = fcntl(m, F_GETFL) & O_NONBLOCK;
	CHECK(ioctl(m, FIOCLEX) == 0);
	int ce = fcntl(m, F_GETFD) & FD_CLOEXEC;
	CHECK(ioctl(m, FIONCLEX) == 0);
	int ce2 = fcntl(m, F_GETFD) & FD_CLOEXEC;
	say("nonblocking: %d then %d; close-on-exec: %d then %d\n", !!nb, !!nb2, !!ce, !!ce2);
	CHECK(grantpt(m) == 0 && unlockpt(m) == 0);
	int s = open(ptsname(m), O_WRONLY | O_NOCTTY);
	int peer = ioctl(m, TIOCGPTPEER, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	CHECK(s >= 0 && peer >= 0);
	say("F_GETFL: master %o, slave %o, peer %o\n", fcntl(m, F_GETFL), fcntl(s, F_GETFL), fcntl(peer, F_GETFL));
	return 0;
}
