/* rename_exdev DIR: makes a file in /tmp (the guest's private one) and
   moves it to DIR as mv does: rename, and on EXDEV (another filesystem)
   a copy and an unlink. A replay's root is one filesystem, where the
   rename would succeed: the recording's failure must be the replay's,
   or the copy finds no file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
	if (argc != 2)
		return 2;
	const char *src = "/tmp/hermit-rename-exdev";
	char dst[4096];
	snprintf(dst, sizeof dst, "%s/moved", argv[1]);
	int fd = open(src, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "moved across\n", 13) != 13)
		return 1;
	close(fd);
	int r = rename(src, dst);
	printf("rename: %d (%s)\n", r, r ? strerror(errno) : "-");
	if (r != 0 && errno == EXDEV) {
		char buf[64];
		int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		ssize_t n = in < 0 ? -1 : read(in, buf, sizeof buf);
		printf("copy: opened %d, read %zd\n", in >= 0, n);
		if (n > 0 && write(out, buf, n) != n)
			return 1;
		close(in);
		close(out);
		printf("unlink: %d\n", unlink(src));
	}
	char buf[64] = {0};
	fd = open(dst, O_RDONLY);
	printf("%s holds: %s", strrchr(dst, '/') + 1, read(fd, buf, sizeof buf - 1) > 0 ? buf : "nothing\n");
	return 0;
}
