/* io_loop N FILE: N one-byte writes to FILE, then N one-byte round trips
   through a pipe (write, then read back): intercepted I/O calls that run
   natively, on a file and on a pipe the program made. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
	int n = argc > 2 ? atoi(argv[1]) : 0;
	if (argc < 3) return 2;
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) return 1;
	for (int i = 0; i < n; i++)
		if (write(fd, "x", 1) != 1) return 1;
	int p[2];
	if (pipe(p) < 0) return 1;
	char c;
	for (int i = 0; i < n; i++)
		if (write(p[1], "y", 1) != 1 || read(p[0], &c, 1) != 1) return 1;
	return unlink(argv[2]) < 0;
}
