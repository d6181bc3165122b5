/* file_times: what moves a file's mtime besides a write: an open with
 * O_TRUNC, truncate(2), an open that creates the file; and what does not:
 * O_CREAT of a file that is there. Then a directory's, as entries come
 * and go, by every call that makes one: open, creat, openat2, rename,
 * symlink, mkdir, the bind of a Unix socket. One second passes between
 * the steps; each line says by how many whole seconds the mtime moved.
 */
#include "guest.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>

/* openat2s opens path with openat2(2) and closes it, after a second. */
static void openat2s(const char *path, unsigned long flags) {
	sleep(1);
	struct open_how how = {.flags = flags, .mode = flags & O_CREAT ? 0644 : 0};
	int fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	CHECK(fd >= 0);
	close(fd);
}

static double mtime(const char *path) {
	struct stat st;
	CHECK(lstat(path, &st) == 0);
	return st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
}

static long moved(double *last, const char *path) {
	double now = mtime(path);
	long d = (long)(now - *last + 0.5);
	*last = now;
	return d;
}

/* made says by how many seconds the mtime of directory d moved (last is
 * its last), and whether file, made in it, has the same. */
static void made(const char *what, const char *file, double *last) {
	double f = mtime(file);
	long d = moved(last, "d");
	say("%s: the directory moved %ld s, the file made there %s\n", what, d,
	    f > *last - 0.5 && f < *last + 0.5 ? "at the same time" : "at another time");
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
	double here = mtime(".");
	sleep(1);
	CHECK(mkdir("d", 0755) == -1 && errno == EEXIST);
	say("a mkdir that fails: its directory moved %ld s\n", moved(&here, "."));
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

	sleep(1);
	int fd2 = syscall(SYS_creat, "d/c", 0644); /* glibc's creat makes it too */
	CHECK(fd2 >= 0 && write(fd2, "x", 1) == 1);
	close(fd2);
	say("creat: moved %ld s\n", moved(&last, "d"));
	double file = mtime("d/c");
	sleep(1);
	fd2 = syscall(SYS_creat, "d/c", 0644);
	CHECK(fd2 >= 0);
	close(fd2);
	say("creat of a file that is there: the file moved %ld s, the directory %ld s\n", moved(&file, "d/c"), moved(&last, "d"));
	openat2s("d/o", O_WRONLY | O_CREAT);
	say("openat2 that creates: moved %ld s\n", moved(&last, "d"));
	CHECK(truncate("d/o", 10) == 0);
	file = mtime("d/o");
	openat2s("d/o", O_WRONLY | O_TRUNC);
	say("openat2 with O_TRUNC: the file moved %ld s\n", moved(&file, "d/o"));
	sleep(1);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "d/s"};
	CHECK(s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof sa) == 0);
	close(s);
	made("bind of a Unix socket", "d/s", &last);

	/* A file mknod or symlink makes has the time of its making. */
	sleep(1);
	CHECK(mkfifo("d/p", 0644) == 0);
	made("mkfifo", "d/p", &last);
	sleep(1);
	CHECK(mknod("d/r", S_IFREG | 0644, 0) == 0);
	made("mknod of a regular file", "d/r", &last);
	sleep(1);
	CHECK(symlink("r", "d/y") == 0);
	made("symlink", "d/y", &last);
	CHECK(unlink("d/c") == 0 && unlink("d/o") == 0 && unlink("d/s") == 0);
	CHECK(unlink("d/p") == 0 && unlink("d/r") == 0 && unlink("d/y") == 0);
	CHECK(rmdir("d") == 0 && chdir("/") == 0 && rmdir(dir) == 0);
	return 0;
}
