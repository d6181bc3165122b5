/* copy_range IN OUT: copies file IN (which exists before the run) to OUT
   with copy_file_range, first at the files' offsets, then its first 5
   bytes again from an offset of its own, and a copy from a closed
   descriptor; prints each call's result and what OUT then holds. A
   replay's IN and OUT are on two layers of an overlay, where the kernel
   refuses the copy (EXDEV) that the recording's made. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
	if (argc != 3)
		return 2;
	int in = open(argv[1], O_RDONLY), out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0) {
		perror("open");
		return 1;
	}
	ssize_t r;
	int calls = 0;
	while ((r = copy_file_range(in, NULL, out, NULL, 7, 0)) > 0)
		calls++;
	printf("%d copies of at most 7 bytes, then %zd\n", calls, r);
	off_t off = 2;
	r = copy_file_range(in, &off, out, NULL, 5, 0);
	printf("from offset 2: %zd, offset now %lld\n", r, (long long)off);
	r = copy_file_range(99, NULL, out, NULL, 5, 0);
	printf("from a closed descriptor: %zd (%s)\n", r, r < 0 ? strerror(errno) : "-");
	close(out);
	char buf[256];
	int fd = open(argv[2], O_RDONLY);
	ssize_t n = read(fd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	printf("%s holds \"%s\"\n", strrchr(argv[2], '/') + 1, buf);
	return 0;
}
