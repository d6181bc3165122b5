/* untraced_loops: threads that loop on syscalls hermit does not
 * intercept (gettid, getpid), which are no scheduling points of their
 * own, while what ends the loop needs virtual time or another thread's
 * turns. Each mode prints what it saw:
 *   timer    a 1 ms interval timer's SIGALRM, 20 times, ends a loop on
 *            gettid
 *   threads  a worker writes 100 times to a pipe, sleeps 10 ms, then
 *            sets the flag the main thread loops on getpid for
 *   shared   a child loops on getppid until its parent sets a flag in
 *            memory they share (an anonymous MAP_SHARED mapping)
 *   shm      the same in System V shared memory
 *   apart N  a parent and a child, sharing no memory, each make N calls
 *            to getppid and write a byte to /dev/null after every 100
 *   file     a child loops on access until its parent, sharing no memory
 *            with it, makes a file (hermit's watchdog preempts it)
 */
#include "guest.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

static volatile sig_atomic_t ticks;
static void tick(int sig) { (void)sig; ticks++; }

static atomic_int done;
static int pfd[2];

static void *worker(void *arg) {
	(void)arg;
	for (int i = 0; i < 100; i++)
		CHECK(write(pfd[1], "x", 1) == 1);
	usleep(10000);
	atomic_store(&done, 1);
	return NULL;
}

/* handshake forks a child that tells its parent, through a pipe, that it
 * is about to loop, then loops until done() says so; the parent, told,
 * does act() and waits for the child. */
static void handshake(int (*done)(void), void (*act)(void)) {
	int ready[2];
	CHECK(pipe(ready) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		CHECK(write(ready[1], "r", 1) == 1);
		while (!done())
			;
		_exit(0);
	}
	char c;
	CHECK(read(ready[0], &c, 1) == 1);
	act();
	int status;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The shared modes' loop on getppid, and the flag that ends it. */
static volatile int *shflag;
static int flag_set(void) {
	syscall(SYS_getppid);
	return *shflag;
}
static void set_flag(void) { *shflag = 1; }

/* The file mode's loop on access, and the file that ends it. */
static char fpath[64];
static int file_made(void) { return access(fpath, F_OK) == 0; }
static void make_file(void) {
	int fd = open(fpath, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	close(fd);
}

/* apart makes n calls to getppid, and writes a byte to /dev/null after
 * every 100. */
static void apart(long n) {
	int fd = open("/dev/null", O_WRONLY);
	CHECK(fd >= 0);
	for (long i = 1; i <= n; i++) {
		syscall(SYS_getppid);
		if (i % 100 == 0)
			CHECK(write(fd, "x", 1) == 1);
	}
	close(fd);
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "timer") == 0) {
		signal(SIGALRM, tick);
		struct itimerval it = {{0, 1000}, {0, 1000}};
		CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
		while (ticks < 20)
			syscall(SYS_gettid);
		say("timer: %d ticks ended a loop on gettid\n", (int)ticks);
		return 0;
	}
	if (strcmp(mode, "threads") == 0) {
		CHECK(pipe(pfd) == 0);
		pthread_t th;
		CHECK(pthread_create(&th, NULL, worker, NULL) == 0);
		while (!atomic_load(&done))
			syscall(SYS_getpid);
		pthread_join(th, NULL);
		say("threads: the worker's flag ended a loop on getpid\n");
		return 0;
	}
	if (strcmp(mode, "shared") == 0) {
		shflag = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		CHECK(shflag != MAP_FAILED);
		handshake(flag_set, set_flag);
		say("shared: the parent's flag ended the child's loop on getppid\n");
		return 0;
	}
	if (strcmp(mode, "shm") == 0) {
		int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
		CHECK(id >= 0);
		shflag = shmat(id, NULL, 0);
		CHECK(shflag != (void *)-1);
		CHECK(shmctl(id, IPC_RMID, NULL) == 0);
		handshake(flag_set, set_flag);
		say("shm: the parent's flag ended the child's loop on getppid\n");
		return 0;
	}
	if (strcmp(mode, "apart") == 0 && argc > 2) {
		long n = atol(argv[2]);
		pid_t pid = fork();
		CHECK(pid >= 0);
		apart(n);
		if (pid == 0)
			_exit(0);
		int status;
		CHECK(waitpid(pid, &status, 0) == pid && status == 0);
		say("apart: %ld calls in each process\n", n);
		return 0;
	}
	if (strcmp(mode, "file") == 0) {
		snprintf(fpath, sizeof fpath, "/tmp/untraced_loops.%d", (int)getpid());
		handshake(file_made, make_file);
		unlink(fpath);
		say("file: the parent's file ended the child's loop on access\n");
		return 0;
	}
	sayfd(2, "usage: untraced_loops timer|threads|shared|shm|apart N|file\n");
	return 2;
}
