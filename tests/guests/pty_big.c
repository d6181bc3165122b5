/* pty_big out|in|lines: a child on a pty's slave writes 1 MiB to it
 * while its parent reads the master ("out"), or the parent writes 200 KiB
 * to the master while the child, in raw mode, reads the slave ("in"); or
 * ("lines") the child writes 64 pages of short lines, a page a write, to
 * the slave in cooked mode, whose output processing makes each newline
 * two bytes (pty.spawn of seq 20000). Under hermit such a write waited in
 * the kernel for a reader it kept parked: a hang.
 */
#include "guest.h"
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>

static char buf[1 << 20];

int main(int argc, char **argv) {
	CHECK(argc == 2);
	int lines = !strcmp(argv[1], "lines");
	int out = lines || !strcmp(argv[1], "out");
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	CHECK(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
	int s = open(ptsname(m), O_RDWR | O_NOCTTY);
	CHECK(s >= 0);
	struct termios raw;
	CHECK(tcgetattr(s, &raw) == 0);
	if (!lines) {
		cfmakeraw(&raw);
		CHECK(tcsetattr(s, TCSANOW, &raw) == 0);
	}
	long size = out ? (long)sizeof buf : 200 << 10;
	memset(buf, 'y', sizeof buf);
	if (lines) {
		// "y\n" a line: 4096 bytes reach the master as 6144.
		for (int i = 1; i < 64 * 4096; i += 2)
			buf[i] = '\n';
		size = 64 * 6144;
	}
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		close(m);
		long n = 0;
		if (lines) {
			for (int i = 0; i < 64; i++)
				CHECK(write(s, buf + i * 4096, 4096) == 4096);
		} else if (out) {
			CHECK(write(s, buf, size) == size);
		} else {
			ssize_t r;
			while (n < size && (r = read(s, buf, sizeof buf)) > 0)
				n += r;
			say("the child read %ld\n", n);
		}
		_exit(0);
	}
	close(s);
	long n = 0;
	if (out) {
		ssize_t r;
		while (n < size && (r = read(m, buf, 65536)) > 0)
			n += r;
		say("the parent read %ld\n", n);
	} else {
		while (n < size) {
			ssize_t w = write(m, buf + n, size - n);
			CHECK(w > 0);
			n += w;
		}
	}
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}
