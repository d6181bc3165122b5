/* fast_writes MODE N DIR: writes to regular files that hermit makes
 * without a ptrace stop (detcore/fastio.go), and the cases where it must
 * not. MODE:
 *   plain   N writes to one file, N one-byte reads of it, its mtime
 *           printed: the same bytes with and without hermit's fast I/O.
 *   reuse   a file's descriptor number reused: a pipe dup2'd over it (a
 *           child reads the pipe slowly, so the writer must wait), then
 *           another file opened on it after a close.
 *   fork    parent and child both write to one file, then to files of
 *           their own.
 *   threads two threads write to files of their own and to a shared one.
 *   pipe    N one-byte round trips through a pipe of its own, then writes
 *           larger than a page and than the room left, and reads to the
 *           end once the write end is closed.
 *   sleeper N writes to one file while a thread sleeps 100 ms at a time:
 *           hermit looks at the writer for a spin (it runs while another
 *           thread waits, real time deciding when), which must not
 *           change its path (a write the look reached took a stop).
 *   signals N round trips through a pipe, then F_GETSIG of its read end
 *           (0: the guest set none), then O_ASYNC on it: the next write
 *           brings SIGIO, as natively.
 * Every mode prints the files' sizes, checksums and mtimes. */
#include "guest.h"
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static int n;

static size_t i_min(size_t a, size_t b) { return a < b ? a : b; }
static const char *dir;

static char *path(const char *name) {
	static char bufs[8][4096];
	static int i;
	char *b = bufs[i++ % 8];
	snprintf(b, 4096, "%s/%s", dir, name);
	return b;
}

static int openw(const char *name, int flags) {
	int fd = open(path(name), (flags & O_RDWR ? 0 : O_WRONLY) | O_CREAT | flags, 0600);
	CHECK(fd >= 0);
	return fd;
}

/* writes writes k numbered lines tagged tag to fd, one write each. */
static void writes(int fd, const char *tag, int k) {
	for (int i = 0; i < k; i++) {
		char line[64];
		int len = snprintf(line, sizeof line, "%s %d\n", tag, i);
		CHECK(write(fd, line, len) == len);
	}
}

/* report prints a file's size, a checksum of its bytes and its mtime. */
static void report(const char *name) {
	int fd = open(path(name), O_RDONLY);
	CHECK(fd >= 0);
	unsigned long sum = 0, size = 0;
	char buf[4096];
	ssize_t k;
	while ((k = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < k; i++)
			sum = sum * 31 + (unsigned char)buf[i];
		size += k;
	}
	CHECK(k == 0);
	struct stat st;
	CHECK(fstat(fd, &st) == 0);
	close(fd);
	say("%s: %lu bytes, sum %016lx, mtime %lld.%09ld\n", name, size, sum, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

static void plain(void) {
	int fd = openw("plain", O_TRUNC | O_RDWR);
	writes(fd, "plain", n);
	struct stat st;
	CHECK(fstat(fd, &st) == 0);
	say("after the writes: mtime %lld.%09ld\n", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	/* Read back a byte at a time. */
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	unsigned long sum = 0;
	for (int i = 0; i < n; i++) {
		char c;
		CHECK(read(fd, &c, 1) == 1);
		sum = sum * 31 + (unsigned char)c;
	}
	say("read back %d bytes: sum %016lx\n", n, sum);
	CHECK(close(fd) == 0);
	report("plain");
}

static void reuse(void) {
	int fd = openw("first", O_TRUNC);
	writes(fd, "first", n);
	/* A pipe over the descriptor: a child reads it slowly (a read per
	 * write of its own), so the parent's writes fill it and must wait. */
	int p[2];
	CHECK(pipe(p) == 0);
	CHECK(dup2(p[1], fd) == fd);
	close(p[1]);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		close(fd);
		int log = openw("child-log", O_TRUNC);
		unsigned long got = 0;
		char buf[512];
		ssize_t k;
		while ((k = read(p[0], buf, sizeof buf)) > 0) {
			got += k;
			writes(log, "read", 1);
		}
		CHECK(k == 0);
		say("child read %lu bytes from the pipe\n", got);
		_exit(0);
	}
	close(p[0]);
	static char big[4096];
	memset(big, 'p', sizeof big);
	for (int i = 0; i < 64; i++)
		writeall(fd, big, sizeof big);
	CHECK(close(fd) == 0);
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Another file on the same number after a close. */
	int fd2 = openw("second", O_TRUNC);
	CHECK(fd2 == fd);
	writes(fd2, "second", n);
	CHECK(close(fd2) == 0);
	report("first");
	report("second");
	report("child-log");
}

static void forked(void) {
	int shared = openw("shared", O_TRUNC | O_APPEND);
	writes(shared, "before", n);
	pid_t c = fork();
	CHECK(c >= 0);
	const char *who = c == 0 ? "child" : "parent";
	writes(shared, who, n);
	int own = openw(who, O_TRUNC);
	writes(own, who, n);
	CHECK(close(own) == 0);
	if (c == 0)
		_exit(0);
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	writes(shared, "after", n);
	CHECK(close(shared) == 0);
	report("shared");
	report("parent");
	report("child");
}

static int shared_fd;

static void *worker(void *arg) {
	const char *name = arg;
	int own = openw(name, O_TRUNC);
	writes(own, name, n);
	writes(shared_fd, name, n);
	CHECK(close(own) == 0);
	return NULL;
}

static void threads(void) {
	shared_fd = openw("tshared", O_TRUNC | O_APPEND);
	pthread_t a, b;
	CHECK(pthread_create(&a, NULL, worker, "ta") == 0);
	CHECK(pthread_create(&b, NULL, worker, "tb") == 0);
	CHECK(pthread_join(a, NULL) == 0);
	CHECK(pthread_join(b, NULL) == 0);
	/* Alone again: these go without stops. */
	writes(shared_fd, "main", n);
	CHECK(close(shared_fd) == 0);
	report("tshared");
	report("ta");
	report("tb");
}

static volatile int slept_enough;

static void *sleeper(void *arg) {
	(void)arg;
	struct timespec ts = {0, 100000000};
	while (!slept_enough)
		nanosleep(&ts, NULL);
	return NULL;
}

static void beside_sleeper(void) {
	pthread_t b;
	CHECK(pthread_create(&b, NULL, sleeper, NULL) == 0);
	int fd = openw("sleeper", O_TRUNC);
	for (int i = 0; i < n; i++)
		CHECK(write(fd, "x", 1) == 1);
	CHECK(close(fd) == 0);
	slept_enough = 1;
	CHECK(pthread_join(b, NULL) == 0);
	report("sleeper");
}

static void piped(void) {
	int p[2];
	CHECK(pipe(p) == 0);
	unsigned long sum = 0;
	for (int i = 0; i < n; i++) {
		char c = 'a' + i % 26, d;
		CHECK(write(p[1], &c, 1) == 1);
		CHECK(read(p[0], &d, 1) == 1 && d == c);
		sum = sum * 31 + (unsigned char)d;
	}
	say("%d round trips: sum %016lx\n", n, sum);
	/* Fill it: writes of a page and more until one is short or would
	 * wait (the pipe is made non-blocking for that). */
	static char big[3 * 4096];
	memset(big, 'b', sizeof big);
	CHECK(fcntl(p[1], F_SETFL, O_NONBLOCK) == 0);
	long total = 0;
	for (;;) {
		ssize_t k = write(p[1], big, i_min(sizeof big, 5000));
		if (k < 0) {
			CHECK(errno == EAGAIN);
			break;
		}
		total += k;
		CHECK(write(p[1], "z", 1) == 1 || errno == EAGAIN);
		total += 1;
	}
	say("filled with about %ld bytes\n", total / 1000 * 1000);
	CHECK(close(p[1]) == 0);
	long got = 0;
	char buf[1000];
	ssize_t k;
	while ((k = read(p[0], buf, sizeof buf)) > 0)
		got += k;
	CHECK(k == 0);
	say("read %ld bytes to the end\n", got / 1000 * 1000);
}

static volatile sig_atomic_t got_sig;

static void on_sig(int sig) { got_sig = sig; }

static void signals(void) {
	int p[2];
	CHECK(pipe(p) == 0);
	for (int i = 0; i < n; i++) {
		char c = 'x', d;
		CHECK(write(p[1], &c, 1) == 1);
		CHECK(read(p[0], &d, 1) == 1 && d == c);
	}
	say("F_GETSIG of the read end: %d\n", fcntl(p[0], F_GETSIG));
	struct sigaction sa = {.sa_handler = on_sig};
	CHECK(sigaction(SIGIO, &sa, NULL) == 0);
	CHECK(fcntl(p[0], F_SETOWN, getpid()) == 0);
	CHECK(fcntl(p[0], F_SETFL, O_ASYNC) == 0);
	CHECK(write(p[1], "y", 1) == 1);
	for (int i = 0; i < 100 && !got_sig; i++)
		usleep(1000);
	say("after O_ASYNC a write brings signal %d (SIGIO is %d)\n", (int)got_sig, SIGIO);
}

int main(int argc, char **argv) {
	if (argc != 4)
		return 2;
	n = atoi(argv[2]);
	dir = argv[3];
	if (!strcmp(argv[1], "plain"))
		plain();
	else if (!strcmp(argv[1], "reuse"))
		reuse();
	else if (!strcmp(argv[1], "fork"))
		forked();
	else if (!strcmp(argv[1], "threads"))
		threads();
	else if (!strcmp(argv[1], "pipe"))
		piped();
	else if (!strcmp(argv[1], "sleeper"))
		beside_sleeper();
	else if (!strcmp(argv[1], "signals"))
		signals();
	else
		return 2;
	say("ok\n");
	return 0;
}
