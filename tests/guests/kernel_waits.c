/* kernel_waits: calls that block in the kernel until another process
 * acts. In each case a child blocks while its parent holds what it waits
 * for, sleeps 100 ms and lets go: a file lock (flock, fcntl F_SETLKW, OFD
 * lock), a System V message queue (msgrcv on an empty queue, msgsnd on a
 * full one), a System V semaphore (semop, semtimedop), a write to a full
 * Unix stream socket (with write and with writev) and to a full pipe. Then waits a signal ends: a
 * semop interrupted by a SIGALRM handler returns EINTR, a flock with an
 * SA_RESTART handler goes on waiting, a semtimedop times out, and a
 * msgrcv on a queue removed meanwhile fails with EIDRM. Under
 * hermit each wait must end as natively, not hang.
 */
#include "guest.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

struct msg {
	long type;
	char text[64];
};

static int lockfd, queue, sem, sock[2], pip[2];
static char got[64]; /* what the parent received, printed once the child is gone */
static char big[1 << 20];

static void lock(int fd, int cmd, short type) {
	struct flock l = {.l_type = type, .l_whence = SEEK_SET};
	CHECK(fcntl(fd, cmd, &l) == 0);
}

static void semadd(short n) {
	struct sembuf op = {0, n, 0};
	CHECK(semop(sem, &op, 1) == 0);
}

static void drain(int fd, size_t n) {
	while (n > 0) {
		ssize_t r = read(fd, big, n);
		CHECK(r > 0);
		n -= (size_t)r;
	}
}

/* writevall writes all of buf to fd with writev, in two pieces. */
static void writevall(int fd, char *buf, size_t n) {
	struct iovec iov[2] = {{buf, n / 2}, {buf + n / 2, n - n / 2}};
	int i = 0;
	while (i < 2) {
		ssize_t r = writev(fd, iov + i, 2 - i);
		CHECK(r > 0);
		for (; i < 2 && (size_t)r >= iov[i].iov_len; i++)
			r -= (ssize_t)iov[i].iov_len;
		if (i < 2) {
			iov[i].iov_base = (char *)iov[i].iov_base + r;
			iov[i].iov_len -= (size_t)r;
		}
	}
}

/* hold takes what case name waits for, in the parent. */
static void hold(const char *name) {
	if (!strcmp(name, "flock"))
		CHECK(flock(lockfd, LOCK_EX) == 0);
	else if (!strcmp(name, "fcntl"))
		lock(lockfd, F_SETLKW, F_WRLCK);
	else if (!strcmp(name, "ofd"))
		lock(lockfd, F_OFD_SETLKW, F_WRLCK);
	else if (!strcmp(name, "msgsnd")) {
		struct msg m = {1, "fills the queue"};
		CHECK(msgsnd(queue, &m, 32, 0) == 0);
	}
}

/* wait_for is the child's blocking call. */
static void wait_for(const char *name) {
	if (!strcmp(name, "flock")) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", lockfd);
		int own = open(path, O_RDWR); /* its own open file: its own flock */
		CHECK(own >= 0 && flock(own, LOCK_EX) == 0);
	} else if (!strcmp(name, "fcntl"))
		lock(lockfd, F_SETLKW, F_WRLCK);
	else if (!strcmp(name, "ofd")) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", lockfd);
		int own = open(path, O_RDWR);
		CHECK(own >= 0);
		lock(own, F_OFD_SETLKW, F_WRLCK);
	} else if (!strcmp(name, "msgrcv")) {
		struct msg m;
		CHECK(msgrcv(queue, &m, sizeof m.text, 0, 0) > 0);
		say("child: received \"%s\"\n", m.text);
	} else if (!strcmp(name, "msgsnd")) {
		struct msg m = {2, "second"};
		CHECK(msgsnd(queue, &m, 32, 0) == 0);
	} else if (!strcmp(name, "semop"))
		semadd(-1);
	else if (!strcmp(name, "semtimedop")) {
		struct sembuf op = {0, -1, 0};
		struct timespec ts = {10, 0};
		CHECK(semtimedop(sem, &op, 1, &ts) == 0);
	} else if (!strcmp(name, "socket"))
		writeall(sock[0], big, sizeof big);
	else if (!strcmp(name, "writev"))
		writevall(sock[0], big, sizeof big);
	else if (!strcmp(name, "pipe"))
		writeall(pip[1], big, sizeof big);
}

/* release lets go of it, in the parent. */
static void release(const char *name) {
	if (!strcmp(name, "flock"))
		CHECK(flock(lockfd, LOCK_UN) == 0);
	else if (!strcmp(name, "fcntl"))
		lock(lockfd, F_SETLK, F_UNLCK);
	else if (!strcmp(name, "ofd"))
		lock(lockfd, F_OFD_SETLK, F_UNLCK);
	else if (!strcmp(name, "msgrcv")) {
		struct msg m = {1, "hello"};
		CHECK(msgsnd(queue, &m, 6, 0) == 0);
	} else if (!strcmp(name, "msgsnd")) {
		struct msg m;
		CHECK(msgrcv(queue, &m, sizeof m.text, 1, 0) > 0);
		CHECK(msgrcv(queue, &m, sizeof m.text, 2, 0) > 0);
		snprintf(got, sizeof got, "%s", m.text);
	} else if (!strcmp(name, "semop") || !strcmp(name, "semtimedop"))
		semadd(1);
	else if (!strcmp(name, "socket") || !strcmp(name, "writev"))
		drain(sock[1], sizeof big);
	else if (!strcmp(name, "pipe"))
		drain(pip[0], sizeof big);
}

static void run(const char *name) {
	hold(name);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		wait_for(name);
		say("%s: child done waiting\n", name);
		_exit(0);
	}
	usleep(100000);
	say("%s: parent lets go\n", name);
	release(name);
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (got[0]) {
		say("parent: then received \"%s\"\n", got);
		got[0] = 0;
	}
}

static void onalarm(int sig) { (void)sig; }

static void interrupted(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = onalarm;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	struct sembuf op = {0, -1, 0};
	alarm(1);
	int r = semop(sem, &op, 1);
	say("semop with a SIGALRM handler: %s\n", r == -1 && errno == EINTR ? "EINTR" : "not interrupted");

	struct timespec ts = {0, 300000000};
	r = semtimedop(sem, &op, 1, &ts);
	say("semtimedop of 300 ms: %s\n", r == -1 && errno == EAGAIN ? "EAGAIN" : "did not time out");

	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	CHECK(flock(lockfd, LOCK_EX) == 0);
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", lockfd);
		int own = open(path, O_RDWR);
		alarm(1);
		CHECK(own >= 0 && flock(own, LOCK_EX) == 0);
		say("flock with an SA_RESTART handler: restarted, got the lock\n");
		_exit(0);
	}
	sleep(2);
	CHECK(flock(lockfd, LOCK_UN) == 0);
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);

	int q = msgget(IPC_PRIVATE, 0600);
	CHECK(q >= 0);
	// The child says when it is about to wait, so that a busy machine
	// does not remove the queue before the native child gets to it.
	int ready[2];
	CHECK(pipe(ready) == 0);
	c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		struct msg m;
		CHECK(write(ready[1], "r", 1) == 1);
		int r = (int)msgrcv(q, &m, sizeof m.text, 0, 0);
		say("msgrcv on a queue removed meanwhile: %s\n", r == -1 && errno == EIDRM ? "EIDRM" : "not EIDRM");
		_exit(0);
	}
	char b;
	CHECK(read(ready[0], &b, 1) == 1);
	usleep(100000);
	CHECK(msgctl(q, IPC_RMID, NULL) == 0);
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void) {
	char path[] = "/tmp/kernel-waits-XXXXXX";
	lockfd = mkstemp(path);
	CHECK(lockfd >= 0);
	unlink(path);
	queue = msgget(IPC_PRIVATE, 0600);
	sem = semget(IPC_PRIVATE, 1, 0600);
	CHECK(queue >= 0 && sem >= 0);
	struct msqid_ds qs;
	CHECK(msgctl(queue, IPC_STAT, &qs) == 0);
	qs.msg_qbytes = 32; /* one message fills it */
	CHECK(msgctl(queue, IPC_SET, &qs) == 0);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sock) == 0);
	CHECK(pipe(pip) == 0);

	const char *cases[] = {"flock", "fcntl", "ofd", "msgrcv", "msgsnd", "semop", "semtimedop", "socket", "writev", "pipe"};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		run(cases[i]);
	interrupted();
	msgctl(queue, IPC_RMID, NULL);
	semctl(sem, 0, IPC_RMID);
	say("all waits ended\n");
	return 0;
}
