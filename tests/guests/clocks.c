/* clocks: reads every clock many times, through the vDSO (which hermit
 * answers in the guest, from its clock page) and through the syscall
 * (which hermit answers at a stop), in two threads, across a sleep, in a
 * forked child and in a program it execs, and checks that no clock ever
 * goes back: not between the two paths, not between threads, processes
 * or programs. It prints the first and last values and a checksum of all
 * of them, which hermit makes the same on every run.
 *
 *   clocks            the whole tour
 *   clocks exec NS    the exec'd program: its reads must not be before NS
 */
#include "guest.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

enum { ROUNDS = 600 };

static const struct {
	clockid_t id;
	const char *name;
	int wall; /* the realtime family */
} clocks[] = {
	{CLOCK_REALTIME, "REALTIME", 1},
	{CLOCK_REALTIME_COARSE, "REALTIME_COARSE", 1},
	{CLOCK_TAI, "TAI", 1},
	{CLOCK_MONOTONIC, "MONOTONIC", 0},
	{CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW", 0},
	{CLOCK_MONOTONIC_COARSE, "MONOTONIC_COARSE", 0},
	{CLOCK_BOOTTIME, "BOOTTIME", 0},
	{CLOCK_PROCESS_CPUTIME_ID, "PROCESS_CPUTIME", 0},
	{CLOCK_THREAD_CPUTIME_ID, "THREAD_CPUTIME", 0},
};
enum { NCLOCKS = sizeof clocks / sizeof clocks[0] };

/* last holds each clock's latest value in this process (for the CPU-time
 * clocks, in this thread: tlast), sum their checksum. A read and its check
 * are made under the lock, so that another thread's later read cannot come
 * between them. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t last[NCLOCKS], wall_last, first_mono;
static __thread int64_t tlast[NCLOCKS];
static time_t time_last;
static uint64_t sum;
static long reads;

static int64_t ns(struct timespec ts) { return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec; }

static void saw(int i, int64_t v, const char *how) {
	int cpu = clocks[i].id == CLOCK_PROCESS_CPUTIME_ID || clocks[i].id == CLOCK_THREAD_CPUTIME_ID;
	int64_t *l = cpu ? &tlast[i] : &last[i];
	if (v < *l) {
		say("FAIL: %s went back (%s): %lld after %lld\n", clocks[i].name, how, (long long)v, (long long)*l);
		exit(1);
	}
	*l = v;
	sum = sum * 31 + (uint64_t)v;
	reads++;
}

static void round_once(int r) {
	pthread_mutex_lock(&mu);
	for (int i = 0; i < NCLOCKS; i++) {
		struct timespec ts;
		/* Alternate the paths, in both orders. */
		int sys = (r + i) % 2;
		if (sys)
			CHECK(syscall(SYS_clock_gettime, clocks[i].id, &ts) == 0);
		else
			CHECK(clock_gettime(clocks[i].id, &ts) == 0);
		saw(i, ns(ts), sys ? "syscall" : "vdso");
	}
	struct timeval tv;
	if (r % 2)
		CHECK(syscall(SYS_gettimeofday, &tv, NULL) == 0);
	else
		CHECK(gettimeofday(&tv, NULL) == 0);
	int64_t us = ((int64_t)tv.tv_sec * 1000000 + tv.tv_usec) * 1000;
	if (us < wall_last || us / 1000 < last[0] / 1000) {
		say("FAIL: gettimeofday went back: %lld after %lld (REALTIME %lld)\n", (long long)us, (long long)wall_last, (long long)last[0]);
		exit(1);
	}
	wall_last = us;
	time_t t = r % 3 ? time(NULL) : (time_t)syscall(SYS_time, NULL);
	if (t < time_last) {
		say("FAIL: time went back: %lld after %lld\n", (long long)t, (long long)time_last);
		exit(1);
	}
	time_last = t;
	pthread_mutex_unlock(&mu);
}

static void *reader(void *arg) {
	(void)arg;
	for (int r = 0; r < ROUNDS; r++)
		round_once(r);
	return NULL;
}

static int64_t mono(void) {
	struct timespec ts;
	CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
	return ns(ts);
}

int main(int argc, char **argv) {
	if (argc == 3 && strcmp(argv[1], "exec") == 0) {
		int64_t before = strtoll(argv[2], NULL, 10), now = mono();
		if (now < before) {
			say("FAIL: the exec'd program reads MONOTONIC %lld, before its parent's %lld\n", (long long)now, (long long)before);
			return 1;
		}
		for (int r = 0; r < ROUNDS / 4; r++)
			round_once(r);
		say("exec'd program: %ld reads, checksum %016llx, MONOTONIC %lld\n", reads, (unsigned long long)sum, (long long)last[3]);
		return 0;
	}

	first_mono = mono();
	pthread_t th;
	CHECK(pthread_create(&th, NULL, reader, NULL) == 0);
	reader(NULL);
	CHECK(pthread_join(th, NULL) == 0);
	say("two threads: %ld reads, checksum %016llx\n", reads, (unsigned long long)sum);

	/* A sleep moves every clock on by at least its length. */
	int64_t before = mono();
	struct timespec nap = {0, 50 * 1000 * 1000};
	CHECK(nanosleep(&nap, NULL) == 0);
	int64_t slept = mono() - before;
	if (slept < 50 * 1000 * 1000) {
		say("FAIL: a 50 ms sleep moved MONOTONIC by %lld ns\n", (long long)slept);
		return 1;
	}
	round_once(0);

	/* A child goes on from its parent's time, and the parent from the
	 * child's. */
	int64_t at_fork = mono();
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		memset(tlast, 0, sizeof tlast); /* a new process's CPU time */
		if (mono() < at_fork) {
			say("FAIL: the child reads MONOTONIC before its parent's last read\n");
			_exit(1);
		}
		for (int r = 0; r < ROUNDS / 4; r++)
			round_once(r);
		say("child: checksum %016llx\n", (unsigned long long)sum);
		fflush(stdout);
		_exit(0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	round_once(1);

	/* So does a program it execs. */
	char arg[32];
	snprintf(arg, sizeof arg, "%lld", (long long)mono());
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "exec", arg, (char *)NULL);
		_exit(127);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	round_once(2);

	say("MONOTONIC from %lld to %lld, REALTIME %lld, %ld reads, checksum %016llx: ok\n", (long long)first_mono,
	    (long long)last[3], (long long)last[0], reads, (unsigned long long)sum);
	return 0;
}
