/* exec_written: a program that writes a script (truncating the file if it
 * was there) and runs it, as Go's os/exec tests do. The script's
 * interpreter was not known when the file was first captured (empty).
 */
#include "guest.h"

#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>

int main(int argc, char **argv) {
	CHECK(argc == 2);
	char path[512];
	snprintf(path, sizeof path, "%s/written.sh", argv[1]);
	for (int round = 1; round <= 2; round++) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
		CHECK(fd >= 0);
		char body[128];
		int n = snprintf(body, sizeof body, "#!/bin/sh\necho round %d says $1\nexit %d\n", round, 10 + round);
		CHECK(write(fd, body, n) == n);
		close(fd);
		pid_t p = fork();
		CHECK(p >= 0);
		if (p == 0) {
			execl(path, path, "hello", (char *)NULL);
			_exit(99);
		}
		int st;
		CHECK(waitpid(p, &st, 0) == p);
		say("round %d: the script exited %d\n", round, WEXITSTATUS(st));
	}
	return 0;
}
