/* branch: reads one line from stdin with a single read(2) and takes a path
 * that depends on it.
 *
 *   "a"  opens the file argv[1], reads it and prints its size
 *   else calls uname(2) and prints the system name
 *
 * Before the read it prints "started, pid N"; after either path, "done".
 * Checks replay divergence: a trace recorded with "a" whose stdin bytes are
 * rewritten to "b" makes the replayed guest make a different system call
 * than the recorded one right after the read.
 */
#include "guest.h"

#include <fcntl.h>
#include <string.h>
#include <sys/utsname.h>

int main(int argc, char **argv) {
	char line[64] = {0};
	char buf[4096];

	if (argc != 2) {
		sayfd(2, "usage: branch FILE\n");
		return 2;
	}
	say("started, pid %d\n", (int)getpid());
	ssize_t n = read(0, line, sizeof line - 1);
	CHECK(n >= 0);
	if (strcmp(line, "a\n") == 0) {
		int fd = open(argv[1], O_RDONLY);
		CHECK(fd >= 0);
		ssize_t total = 0, r;
		while ((r = read(fd, buf, sizeof buf)) > 0)
			total += r;
		CHECK(r == 0);
		close(fd);
		say("path a: %s has %zd bytes\n", argv[1], total);
	} else {
		struct utsname u;
		CHECK(uname(&u) == 0);
		say("path b: system %s\n", u.sysname);
	}
	say("done\n");
	return 0;
}
