/* escapes: corners where a traced program could slip out of hermit's
 * hands or hang it. Each mode prints what it saw:
 *   signalfd   a signalfd read with its signal already pending
 *   untraced   a child made with CLONE_UNTRACED exits with its status
 *   sigsuspend returns -1/EINTR after the handler of a pending signal;
 *              then sigtimedwait takes a blocked signal pending all along
 *   execmask   a blocked signal stays blocked across execve
 *   alarm      SIGALRM goes to the one thread that does not block it
 *   pidns      the init of a new pid namespace dies of a fault
 *   deadlock   two threads each wait for the other's mutex
 *   orphan     a child finishes after its parent, the main process, exits
 *   daemon     a double-forked daemon (setsid, stdio closed) outlives the
 *              main process, sleeping 30 s
 *   killgroup  kill(0, SIGABRT) reaches the process and its child, and
 *              only them (under hermit the guest shares hermit's group)
 *   perf       perf_event_open of the context-switch counter, which counts
 *              the host's events: refused under hermit
 *   ignored    signals the process ignores (SIGALRM set to SIG_IGN, a
 *              child's SIGCHLD by default, a SIGUSR1 a thread sends)
 *              do not cut short a poll or a read
 */
#include "guest.h"

#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static volatile sig_atomic_t caught;
static void handler(int sig) { (void)sig; caught++; }

static void *pauser(void *arg) {
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static pthread_mutex_t ma = PTHREAD_MUTEX_INITIALIZER, mb = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;

static void *lock_b_then_a(void *arg) {
	(void)arg;
	pthread_mutex_lock(&mb);
	pthread_barrier_wait(&both);
	pthread_mutex_lock(&ma);
	return NULL;
}

static int ipipe[2];

/* usr1_then_write sends its process an ignored SIGUSR1, lets the main
 * thread block on, then writes the byte it reads. */
static void *usr1_then_write(void *arg) {
	(void)arg;
	CHECK(kill(getpid(), SIGUSR1) == 0);
	usleep(100000);
	CHECK(write(ipipe[1], "w", 1) == 1);
	return NULL;
}

/* ignored is the mode "ignored". */
static void ignored(void) {
	CHECK(pipe(ipipe) == 0);
	struct pollfd pfd = {.fd = ipipe[0], .events = POLLIN};
	CHECK(signal(SIGALRM, SIG_IGN) != SIG_ERR);
	alarm(1);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int r = poll(&pfd, 1, 1500);
	clock_gettime(CLOCK_MONOTONIC, &b);
	long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	say("poll(1500 ms) with SIGALRM ignored at 1 s: %d after %s\n", r, ms >= 1500 ? "its timeout" : "less");
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0)
		_exit(0);
	r = poll(&pfd, 1, 300);
	say("poll(300 ms) while a child exits: %d\n", r);
	CHECK(waitpid(c, NULL, 0) == c);
	CHECK(signal(SIGUSR1, SIG_IGN) != SIG_ERR);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, usr1_then_write, NULL) == 0);
	char ch;
	ssize_t n = read(ipipe[0], &ch, 1);
	say("read with an ignored SIGUSR1 sent meanwhile: %zd\n", n);
	CHECK(pthread_join(t, NULL) == 0);
}

static void block(int sig) {
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	CHECK(pthread_sigmask(SIG_BLOCK, &s, NULL) == 0);
}

int main(int argc, char **argv) {
	const char *m = argc > 1 ? argv[1] : "";
	int st;
	if (!strcmp(m, "signalfd")) {
		block(SIGUSR2);
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGUSR2);
		int fd = signalfd(-1, &s, 0);
		CHECK(fd >= 0 && kill(getpid(), SIGUSR2) == 0);
		struct signalfd_siginfo si;
		CHECK(read(fd, &si, sizeof si) == sizeof si);
		say("signalfd read: signal %u\n", si.ssi_signo);
	} else if (!strcmp(m, "untraced")) {
		pid_t c = (pid_t)syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
		CHECK(c >= 0);
		if (c == 0) {
			say("untraced child runs\n");
			_exit(3);
		}
		CHECK(waitpid(c, &st, 0) == c);
		say("untraced child exited %d\n", WEXITSTATUS(st));
	} else if (!strcmp(m, "sigsuspend")) {
		signal(SIGUSR1, handler);
		sigset_t old;
		block(SIGUSR1);
		block(SIGUSR2);
		CHECK(pthread_sigmask(SIG_BLOCK, NULL, &old) == 0);
		sigdelset(&old, SIGUSR1);
		CHECK(kill(getpid(), SIGUSR1) == 0);
		CHECK(kill(getpid(), SIGUSR2) == 0); /* stays pending: sigsuspend keeps it blocked */
		int r = sigsuspend(&old);
		say("sigsuspend: %d, %s, handler ran %d time(s)\n", r, errno == EINTR ? "EINTR" : "not EINTR", (int)caught);
		sigset_t two;
		sigemptyset(&two);
		sigaddset(&two, SIGUSR2);
		struct timespec ts = {5, 0};
		say("sigtimedwait: %d\n", sigtimedwait(&two, NULL, &ts));
	} else if (!strcmp(m, "execmask")) {
		if (argc > 2) {
			sigset_t s;
			CHECK(sigprocmask(SIG_BLOCK, NULL, &s) == 0);
			say("after execve: SIGUSR1 blocked: %s\n", sigismember(&s, SIGUSR1) ? "yes" : "no");
			return 0;
		}
		block(SIGUSR1);
		execl("/proc/self/exe", argv[0], "execmask", "again", (char *)NULL);
		CHECK(0);
	} else if (!strcmp(m, "alarm")) {
		block(SIGALRM);
		pthread_t t;
		for (int i = 0; i < 3; i++)
			CHECK(pthread_create(&t, NULL, pauser, NULL) == 0);
		signal(SIGALRM, handler);
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGALRM);
		CHECK(pthread_sigmask(SIG_UNBLOCK, &s, NULL) == 0);
		alarm(1);
		pause();
		say("SIGALRM caught by the main thread: %d\n", (int)caught);
	} else if (!strcmp(m, "pidns")) {
		pid_t c = fork();
		CHECK(c >= 0);
		if (c == 0) {
			CHECK(unshare(CLONE_NEWPID) == 0);
			pid_t init = fork();
			CHECK(init >= 0);
			if (init == 0) {
				say("init of the new namespace: pid %d\n", (int)getpid());
				*(volatile int *)0 = 1;
			}
			CHECK(waitpid(init, &st, 0) == init);
			if (WIFSIGNALED(st))
				say("init died: by signal %d\n", WTERMSIG(st));
			else
				say("init died: exited %d\n", WEXITSTATUS(st));
			_exit(0);
		}
		CHECK(waitpid(c, &st, 0) == c);
	} else if (!strcmp(m, "orphan")) {
		int gone[2];
		CHECK(pipe(gone) == 0);
		pid_t c = fork();
		CHECK(c >= 0);
		if (c == 0) {
			close(gone[1]);
			char b;
			CHECK(read(gone[0], &b, 1) == 0); /* EOF: the parent is gone */
			say("orphan: the main process is gone, I finish\n");
			_exit(0);
		}
		say("main exits first\n");
	} else if (!strcmp(m, "daemon")) {
		int ready[2];
		CHECK(pipe(ready) == 0);
		pid_t c = fork();
		CHECK(c >= 0);
		if (c == 0) {
			setsid();
			if (fork() != 0)
				_exit(0);
			for (int fd = 0; fd <= 2; fd++)
				close(fd);
			CHECK(write(ready[1], "x", 1) == 1);
			sleep(30);
			_exit(0);
		}
		char b;
		CHECK(read(ready[0], &b, 1) == 1 && waitpid(c, &st, 0) == c);
		say("main exits, its daemon still running\n");
	} else if (!strcmp(m, "killgroup")) {
		CHECK(signal(SIGABRT, handler) != SIG_ERR);
		block(SIGABRT);
		int p[2];
		CHECK(pipe(p) == 0);
		pid_t c = fork();
		CHECK(c >= 0);
		if (c == 0) {
			sigset_t none;
			sigemptyset(&none);
			CHECK(write(p[1], "r", 1) == 1);
			while (!caught)
				sigsuspend(&none);
			_exit(caught == 1 ? 0 : 1);
		}
		char b;
		CHECK(read(p[0], &b, 1) == 1);
		CHECK(kill(0, SIGABRT) == 0);
		sigset_t none;
		sigemptyset(&none);
		while (!caught)
			sigsuspend(&none);
		CHECK(waitpid(c, &st, 0) == c);
		say("kill(0, SIGABRT): caught by the process %d time(s), by its child: %s\n", (int)caught,
		    WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "yes" : "no");
	} else if (!strcmp(m, "perf")) {
		struct perf_event_attr a = {.size = sizeof a, .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CONTEXT_SWITCHES};
		long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
		say("perf_event_open: %s\n", fd >= 0 ? "a counter" : errno == EACCES ? "EACCES" : strerror(errno));
	} else if (!strcmp(m, "ignored")) {
		ignored();
	} else if (!strcmp(m, "deadlock")) {
		pthread_barrier_init(&both, NULL, 2);
		pthread_t t;
		pthread_mutex_lock(&ma);
		CHECK(pthread_create(&t, NULL, lock_b_then_a, NULL) == 0);
		pthread_barrier_wait(&both);
		say("both locked one mutex each\n");
		pthread_mutex_lock(&mb);
		say("not reached\n");
	} else {
		sayfd(2, "usage: escapes MODE\n");
		return 2;
	}
	return 0;
}
