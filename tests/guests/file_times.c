/* file_times: what moves a file's mtime besides a write: an open with
 * O_TRUNC, truncate(2), an open that creates the file; and what does not:
 * O_CREAT of a file that is there. One second passes between the steps;
 * each line says by how many whole seconds the mtime moved.
 */
#include "guest.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static double mtime(const char *path) {
	struct stat st;
	CHECK(stat(path, &st) == 0);
	return st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
}

static long moved(double *last, const char *path) {
	double now = mtime(path);
	long d = (long)(now - *last + 0.5);
	*last = now;
	return d;
}

static void reopen(const char *path, int flags) {
	sleep(1);
	int fd = open(path, flags, 0644);
	CHECK(fd >= 0);
	close(fd);
}

int main(void) {
	char dir[] = "/tmp/file_times.XXXXXX";
	CHECK(mkdtemp(dir) != NULL && chdir(dir) == 0);
	int fd = open("ft_a", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "hello", 5) == 5);
	close(fd);
	double last = mtime("ft_a");

	reopen("ft_a", O_WRONLY | O_TRUNC);
	say("an open with O_TRUNC: moved %ld s\n", moved(&last, "ft_a"));
	sleep(1);
	CHECK(truncate("ft_a", 10) == 0);
	say("truncate(2): moved %ld s\n", moved(&last, "ft_a"));
	reopen("ft_a", O_WRONLY | O_CREAT);
	say("O_CREAT of a file that is there: moved %ld s\n", moved(&last, "ft_a"));
	reopen("ft_a", O_RDONLY);
	say("a read-only open: moved %ld s\n", moved(&last, "ft_a"));
	reopen("ft_b", O_WRONLY | O_CREAT | O_EXCL);
	say("a new file: %ld s after the truncate\n", moved(&last, "ft_b"));
	CHECK(unlink("ft_a") == 0 && unlink("ft_b") == 0);

	// A directory's mtime moves as entries come and go.
	CHECK(mkdir("d", 0755) == 0);
	last = mtime("d");
	reopen("d/f", O_WRONLY | O_CREAT);
	say("a file made in a directory: moved %ld s\n", moved(&last, "d"));
	reopen("d/f", O_WRONLY | O_CREAT | O_TRUNC);
	say("a file there truncated: moved %ld s\n", moved(&last, "d"));
	sleep(1);
	CHECK(rename("d/f", "d/g") == 0);
	say("rename: moved %ld s\n", moved(&last, "d"));
	sleep(1);
	CHECK(symlink("g", "d/l") == 0);
	say("symlink: moved %ld s\n", moved(&last, "d"));
	sleep(1);
	CHECK(mkdir("d/sub", 0755) == 0);
	say("mkdir: moved %ld s\n", moved(&last, "d"));
	sleep(1);
	CHECK(rmdir("d/sub") == 0);
	say("rmdir: moved %ld s\n", moved(&last, "d"));
	sleep(1);
	int dfd = open("d", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0 && unlinkat(dfd, "l", 0) == 0 && unlinkat(dfd, "g", 0) == 0);
	close(dfd);
	say("unlinkat: moved %ld s\n", moved(&last, "d"));
	CHECK(rmdir("d") == 0 && chdir("/") == 0 && rmdir(dir) == 0);
	return 0;
}
