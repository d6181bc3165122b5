// wrong_end: a write to a pipe's read end and a read of its write end
// fail at once with EBADF, even when the call on the right end would wait.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
	int p[2];
	char c = 'x';
	if (pipe(p) != 0)
		return 1;
	ssize_t r = write(p[0], &c, 1);
	printf("write to the read end: %zd %s\n", r, strerrorname_np(errno));
	errno = 0;
	r = read(p[1], &c, 1);
	printf("read of the write end: %zd %s\n", r, strerrorname_np(errno));
	return 0;
}
