/* select_left: select, pselect6 and ppoll, made as raw system calls, write the
 * time left into their timeout when a descriptor turns ready: a child
 * writes to a pipe 1 ms after its parent starts waiting for 2 s. The
 * kernel reckons the time left from the host's clock; under hermit it is
 * the virtual time left, the same on every run. Then each is interrupted
 * by a timer's SIGALRM 20 ms in, and writes the time left too (a loop
 * that selects again with it after EINTR ends). */
#include "guest.h"
#include <poll.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static const char *name[] = {"select", "pselect6", "ppoll"};

/* wait2s waits up to 2 s for fd to turn readable with call kind (0 select,
 * 1 pselect6, 2 ppoll), as a raw system call, and returns its result and
 * the time left it wrote, in nanoseconds. */
static long wait2s(int kind, int fd, long *left) {
	fd_set fds;
	FD_ZERO(&fds);
	FD_SET(fd, &fds);
	long r;
	if (kind == 2) {
		struct pollfd pfd = {fd, POLLIN, 0};
		struct timespec ts = {2, 0};
		r = syscall(SYS_ppoll, &pfd, 1, &ts, NULL, 8);
		*left = ts.tv_sec * 1000000000L + ts.tv_nsec;
	} else if (kind == 1) {
		struct timespec ts = {2, 0};
		r = syscall(SYS_pselect6, fd + 1, &fds, NULL, NULL, &ts, NULL);
		*left = ts.tv_sec * 1000000000L + ts.tv_nsec;
	} else {
		struct timeval tv = {2, 0};
		r = syscall(SYS_select, fd + 1, &fds, NULL, NULL, &tv);
		*left = tv.tv_sec * 1000000000L + tv.tv_usec * 1000L;
	}
	return r;
}

static void one(int kind) {
	int p[2];
	CHECK(pipe(p) == 0);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		usleep(1000);
		CHECK(write(p[1], "x", 1) == 1);
		_exit(0);
	}
	long left, r = wait2s(kind, p[0], &left);
	CHECK(waitpid(c, NULL, 0) == c);
	say("%s: %ld ready, %ld.%09ld s left of 2\n", name[kind], r, left / 1000000000L, left % 1000000000L);
	close(p[0]);
	close(p[1]);
}

static void on_alarm(int sig) { (void)sig; }

static void interrupted(int kind) {
	int p[2];
	CHECK(pipe(p) == 0);
	struct itimerval it = {{0, 0}, {0, 20000}};
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
	long left, r = wait2s(kind, p[0], &left);
	CHECK(r == -1 && errno == EINTR);
	say("%s: interrupted, %ld.%09ld s left of 2\n", name[kind], left / 1000000000L, left % 1000000000L);
	close(p[0]);
	close(p[1]);
}

int main(void) {
	one(0);
	one(1);
	one(2);
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	interrupted(0);
	interrupted(1);
	interrupted(2);
	return 0;
}
