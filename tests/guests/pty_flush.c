/* pty_flush: what a write to one side of a pty sends is at the other side
 * when the writer's next call runs: FIONREAD there counts it. Natively
 * a kernel worker moves it across some microseconds later, when it gets
 * a CPU, so a few of these looks find nothing, a number that varies run
 * to run and with the host's load (so did CPython's asyncio pty tests'
 * schedules under hermit). Three ways: the slave to the master in one
 * process, a line to the master (cooked: at the slave, and its echo back
 * at the master), and a child writing to the slave while only its parent
 * holds the master. Each time, the reader has read all before (hermit
 * sees a write across only to a side with nothing left to read).
 */
#include "guest.h"
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

enum { N = 300 };

static int pending(int fd) {
	int n = -1;
	CHECK(ioctl(fd, FIONREAD, &n) == 0);
	return n;
}

/* readn reads n bytes from fd, in as many reads as it takes. */
static void readn(int fd, int n) {
	char buf[64];
	while (n > 0) {
		ssize_t r = read(fd, buf, n);
		CHECK(r > 0);
		n -= r;
	}
}

int main(void) {
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	CHECK(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
	int s = open(ptsname(m), O_RDWR | O_NOCTTY);
	CHECK(s >= 0);
	char buf[64];

	int there = 0;
	for (int i = 0; i < N; i++) {
		CHECK(write(s, "x", 1) == 1);
		there += pending(m) == 1;
		readn(m, 1);
	}
	printf("slave to master: %d of %d there at once\n", there, N);

	int lines = 0, echoes = 0;
	for (int i = 0; i < N; i++) {
		CHECK(write(m, "ab\n", 3) == 3);
		lines += pending(s) == 3;
		echoes += pending(m) == 4; /* "ab\r\n" */
		readn(s, 3);
		readn(m, 4);
	}
	printf("a line to the master: %d of %d at the slave at once, %d echoed back\n", lines, N, echoes);

	int p[2], ack[2];
	CHECK(pipe(p) == 0 && pipe(ack) == 0);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		close(m);
		for (int i = 0; i < N; i++) {
			CHECK(write(s, "y", 1) == 1);
			CHECK(write(p[1], "w", 1) == 1);
			CHECK(read(ack[0], buf, 1) == 1);
		}
		_exit(0);
	}
	close(s);
	there = 0;
	for (int i = 0; i < N; i++) {
		CHECK(read(p[0], buf, 1) == 1);
		there += pending(m) == 1;
		readn(m, 1);
		CHECK(write(ack[1], "a", 1) == 1);
	}
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st));
	printf("a child's write to the slave: %d of %d at the parent's master at once\n", there, N);
	return 0;
}
