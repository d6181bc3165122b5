/* fifo_open.c: opens of a named FIFO that wait for the other end, in
 * every order: a reader before its writer (threads), a writer before its
 * reader (processes), two children meeting while their parent waits, and
 * the opens that never wait (O_RDWR, O_NONBLOCK). Each descriptor that
 * waited must be a blocking one afterwards, and a reader sees the data
 * and then end of file. */
#include "guest.h"
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char path[64];

static int open_fifo(int flags) {
	int fd = open(path, flags);
	CHECK(fd >= 0);
	CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) == (flags & O_NONBLOCK));
	return fd;
}

static void write_fifo(const char *s) {
	int fd = open_fifo(O_WRONLY);
	CHECK(write(fd, s, strlen(s)) == (ssize_t)strlen(s));
	close(fd);
}

static void read_fifo(const char *who) {
	int fd = open_fifo(O_RDONLY);
	char buf[64];
	size_t n = 0;
	ssize_t r;
	while ((r = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)r;
	CHECK(r == 0);
	buf[n] = 0;
	say("%s: read \"%s\", then end of file\n", who, buf);
	close(fd);
}

static void *late_writer(void *arg) {
	usleep(2000);
	write_fifo(arg);
	return NULL;
}

int main(void) {
	snprintf(path, sizeof path, "/tmp/hermit-fifo-%d", (int)getpid());
	unlink(path);
	CHECK(mkfifo(path, 0600) == 0);

	pthread_t th;
	CHECK(pthread_create(&th, NULL, late_writer, "from a thread") == 0);
	read_fifo("reader first");
	CHECK(pthread_join(th, NULL) == 0);

	pid_t w = fork();
	CHECK(w >= 0);
	if (w == 0) {
		write_fifo("from a child");
		_exit(0);
	}
	usleep(2000);
	read_fifo("writer first");
	CHECK(waitpid(w, NULL, 0) == w);

	pid_t r = fork();
	CHECK(r >= 0);
	if (r == 0) {
		read_fifo("two children");
		_exit(0);
	}
	w = fork();
	CHECK(w >= 0);
	if (w == 0) {
		usleep(2000);
		write_fifo("from a sibling");
		_exit(0);
	}
	CHECK(waitpid(r, NULL, 0) == r && waitpid(w, NULL, 0) == w);

	int rw = open_fifo(O_RDWR);
	say("O_RDWR: no wait\n");
	close(rw);
	int nb = open_fifo(O_RDONLY | O_NONBLOCK);
	char c;
	say("O_NONBLOCK reader: read %zd\n", read(nb, &c, 1) < 0 ? (ssize_t)-errno : 0);
	close(nb);
	CHECK(open(path, O_WRONLY | O_NONBLOCK) < 0);
	say("O_NONBLOCK writer without a reader: %s\n", errno == ENXIO ? "ENXIO" : "other");
	unlink(path);
	return 0;
}
