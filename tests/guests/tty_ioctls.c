/* tty_ioctls: the terminal ioctls a program makes on its stdin and stdout
 * when they are a terminal (hermit record under script(1)), on /dev/tty,
 * and on a pty pair of its own. Each writes its answer through its
 * argument; the replay, which has no terminal, must give back the same.
 */
#include "guest.h"

#include <fcntl.h>
#include <pty.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>

/* sum is a checksum of n bytes. */
static unsigned sum(const void *p, size_t n) {
	unsigned s = 0;
	for (size_t i = 0; i < n; i++)
		s = s * 31 + ((const unsigned char *)p)[i];
	return s;
}

/* intioctl prints what an ioctl that writes an int returned. */
static void intioctl(const char *name, int fd, unsigned long req) {
	int v = -1;
	int r = ioctl(fd, req, &v);
	say("%s: %d %d\n", name, r < 0 ? -errno : r, v);
}

int main(void) {
	say("isatty %d %d\n", isatty(0), isatty(1));
	unsigned char buf[64];
	memset(buf, 0xaa, sizeof buf);
	int r = ioctl(0, TCGETS, buf);
	say("TCGETS: %d sum %#x after %#x\n", r, sum(buf, 36), buf[36]);
	unsigned t2[11] = {0};
	r = ioctl(0, 0x802c542a, t2); /* TCGETS2: struct termios2, in the request */
	say("TCGETS2: %d speeds %u %u\n", r, t2[9], t2[10]);
	struct winsize ws = {0};
	r = ioctl(1, TIOCGWINSZ, &ws);
	say("TIOCGWINSZ: %d %dx%d\n", r, ws.ws_col, ws.ws_row);
	intioctl("TIOCOUTQ", 1, TIOCOUTQ);
	intioctl("FIONREAD", 0, FIONREAD);
	intioctl("TIOCGETD", 0, TIOCGETD);
	intioctl("TIOCGPGRP", 0, TIOCGPGRP);
	intioctl("TIOCGSID", 0, TIOCGSID);
	intioctl("TIOCMGET", 0, TIOCMGET);
	memset(buf, 0xaa, sizeof buf);
	r = ioctl(0, TIOCGLCKTRMIOS, buf);
	say("TIOCGLCKTRMIOS: %d sum %#x\n", r < 0 ? -errno : r, sum(buf, sizeof buf));

	struct termios saved, raw;
	CHECK(tcgetattr(0, &saved) == 0);
	raw = saved;
	cfmakeraw(&raw);
	CHECK(tcsetattr(0, TCSANOW, &raw) == 0);
	struct termios now;
	CHECK(tcgetattr(0, &now) == 0);
	say("raw lflag %#x, speed %u\n", now.c_lflag, (unsigned)cfgetospeed(&now));
	CHECK(tcsetattr(0, TCSANOW, &saved) == 0);

	int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	say("/dev/tty %s\n", tty >= 0 ? "open" : strerror(errno));
	if (tty >= 0) {
		memset(&ws, 0, sizeof ws);
		r = ioctl(tty, TIOCGWINSZ, &ws);
		say("/dev/tty TIOCGWINSZ: %d %dx%d\n", r, ws.ws_col, ws.ws_row);
		close(tty);
	}

	/* A pty pair of the program's own. */
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	CHECK(m >= 0);
	CHECK(grantpt(m) == 0 && unlockpt(m) == 0);
	char name[64];
	CHECK(ptsname_r(m, name, sizeof name) == 0);
	int s = open(name, O_RDWR | O_NOCTTY);
	CHECK(s >= 0);
	say("pty slave is a tty %d\n", isatty(s));
	CHECK(write(m, "ping\n", 5) == 5);
	char line[16] = {0};
	ssize_t n = read(s, line, sizeof line - 1);
	say("slave read %zd %s", n, line);
	close(s);
	close(m);

	pid_t p = forkpty(&m, NULL, NULL, NULL);
	CHECK(p >= 0);
	if (p == 0) {
		say("child: stdin is a tty %d\n", isatty(0));
		_exit(3);
	}
	char out[128];
	size_t len = 0;
	for (;;) {
		n = read(m, out + len, sizeof out - 1 - len);
		if (n <= 0)
			break; /* EIO once the child has gone */
		len += n;
	}
	out[len] = 0;
	int st;
	CHECK(waitpid(p, &st, 0) == p);
	say("forkpty child wrote %zu bytes, ending %s, and exited %d\n", len, len > 1 && out[len - 2] == '\r' ? "\\r\\n" : "\\n", WEXITSTATUS(st));
	return 0;
}
