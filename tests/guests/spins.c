/* spins.c: threads that wait by spinning, without syscalls and without
 * pause, in the patterns real programs use. Under a serialized scheduler
 * without a PMU, nothing but spin detection lets the thread that would end
 * the spin run at a deterministic point. argv[1] picks the pattern:
 *
 *   flag      a thread spins on a volatile flag that another thread sets
 *             after a computation
 *   alarm     the only thread spins until alarm(1)'s SIGALRM handler sets
 *             a flag
 *   alarmcount  the same, counting as it spins: no point of its loop
 *             repeats, and the watchdog ends the wait; with "count", it
 *             prints the count too, always as 20 digits
 *   spinlock  4 threads take turns at a lock built on atomic exchange,
 *             each adding to a shared counter under it
 *   pingpong  two threads hand a turn variable to each other by spinning
 *   counter   a thread counts while it waits for a flag: n is printed
 *   piped     a thread waits in read(2) on a pipe; the spinner writes to
 *             the pipe (which ends the wait) and spins until it reads
 *   rdtsc     a thread reads the time-stamp counter while it waits for a
 *             flag (hermit traps rdtsc: each read is a deterministic point)
 *   locked    a thread waits for a flag it reads under a lock (it takes
 *             and lets go of the lock each round); the setter makes
 *             syscalls before it sets the flag
 *   locked2   as locked, the look a function called from two places
 *   listwalk  as locked, each round also walking a list of 6 nodes under
 *             the lock (as Go's background sweeper does while another
 *             sweeper finishes): the walk is an inner loop whose registers
 *             differ from node to node, inside a round that repeats
 *   forked    the main thread waits 3 times in one loop for a thread it
 *             starts to set a flag; then a forked child does the same 3
 *             times (its memory holds hermit's int3 at that loop), then
 *             the parent 3 times more
 *   uncontended  a thread holds a spin lock while it computes, so the
 *             main thread spins on it once; then the main thread alone
 *             takes and lets go of the lock 20,000 times
 *   pushf     a thread saves and restores its flags (pushfq; popfq, as a
 *             JVM's call stub does) in the loop it spins in: a single step
 *             must not leave the trap flag in the word it pushes
 *   barrier   two threads compute unequal shares of work, then meet at a
 *             spin barrier, 8 rounds: the one with less work spins after
 *             computing past the point where hermit first looked at it
 *   compute   a thread computes, with no syscall, right after starting
 *             another: it says whether that one ran meanwhile, and fails
 *             if not
 *   bounded N a thread sleeps for a second while the main thread computes
 *             N rounds with no syscall, then exits
 *   computealarm  the only thread computes for 3,000 rounds with a write
 *             to /dev/null in each, beside a 100 ms setitimer, and fails
 *             if the SIGALRM has not come by then (natively it takes
 *             about half a second)
 *
 * Each prints what it saw; the counts are a property of the program under
 * a deterministic scheduler, not of the host's speed.
 */
#include "guest.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <x86intrin.h>

static volatile int flag;
static volatile long sink;

static void *setter(void *arg) {
	(void)arg;
	long x = 0;
	for (long i = 0; i < 2000000; i++) /* a computation, no syscalls */
		x += i ^ (x >> 3);
	sink = x;
	flag = 1;
	return NULL;
}

static void spin_flag(void) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, setter, NULL) == 0);
	while (!flag)
		;
	CHECK(pthread_join(th, NULL) == 0);
	say("flag: seen, sink %ld\n", sink);
}

static volatile sig_atomic_t caught;

static void on_alarm(int sig) {
	(void)sig;
	caught = 1;
}

static void spin_alarm(void) {
	CHECK(signal(SIGALRM, on_alarm) != SIG_ERR);
	alarm(1);
	while (!caught)
		;
	say("alarm: caught\n");
}

static void spin_alarmcount(int count) {
	CHECK(signal(SIGALRM, on_alarm) != SIG_ERR);
	alarm(1);
	volatile long n = 0;
	while (!caught)
		n++;
	struct timespec cpu;
	CHECK(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0);
	say("alarmcount: caught after counting: %s, most of a second of CPU time: %s\n", n > 0 ? "yes" : "no", cpu.tv_sec >= 1 || cpu.tv_nsec >= 900000000 ? "yes" : "no");
	if (count)
		say("alarmcount: %020ld rounds\n", (long)n);
}

static void *sleeper(void *arg) {
	(void)arg;
	usleep(1000000);
	return NULL;
}

static void spin_bounded(long n) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, sleeper, NULL) == 0);
	usleep(1000); /* the sleeper sleeps */
	for (long i = 0; i < n; i++)
		sink += i % 7;
	say("bounded: %ld rounds\n", n);
	exit(0);
}

static void spin_computealarm(void) {
	CHECK(signal(SIGALRM, on_alarm) != SIG_ERR);
	int null = open("/dev/null", O_WRONLY);
	CHECK(null >= 0);
	struct itimerval it = {{0, 0}, {0, 100000}};
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
	int rounds = 0;
	for (; rounds < 3000 && !caught; rounds++) {
		for (unsigned long i = 0; i < 200000UL; i++)
			sink += i % 7;
		CHECK(write(null, "x", 1) == 1);
	}
	say("computealarm: SIGALRM %s\n", caught ? "came" : "never came");
	if (!caught)
		exit(1); /* as a test that counts on it fails */
}

static int lock;
static long counter;
#define ROUNDS 50

static void *locker(void *arg) {
	long id = (long)arg;
	for (int i = 0; i < ROUNDS; i++) {
		while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
			;
		long c = counter;
		if (i % 10 == 0)
			sched_yield(); /* a scheduling point inside the lock */
		counter = c + id;
		__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void spin_lock(void) {
	pthread_t th[4];
	for (long i = 0; i < 4; i++)
		CHECK(pthread_create(&th[i], NULL, locker, (void *)(i + 1)) == 0);
	for (int i = 0; i < 4; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	say("spinlock: counter %ld (want %d)\n", counter, ROUNDS * (1 + 2 + 3 + 4));
}

static volatile int turn;
#define HANDOFFS 20

static void *ponger(void *arg) {
	(void)arg;
	for (int i = 0; i < HANDOFFS; i++) {
		while (turn != 1)
			;
		turn = 0;
	}
	return NULL;
}

static void spin_pingpong(void) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, ponger, NULL) == 0);
	for (int i = 0; i < HANDOFFS; i++) {
		turn = 1;
		while (turn != 0)
			;
	}
	CHECK(pthread_join(th, NULL) == 0);
	say("pingpong: %d handoffs\n", HANDOFFS);
}

static void spin_counter(void) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, setter, NULL) == 0);
	long n = 0;
	while (!flag)
		n++;
	CHECK(pthread_join(th, NULL) == 0);
	say("counter: n %ld\n", n);
}

static void *mark(void *arg) {
	(void)arg;
	flag = 1;
	return NULL;
}

/* must: the new thread has to run while this one computes (it cannot
   under hermit, where this one makes no syscall: exit 1, as a test that
   counted on it would fail); else only computing while another waits. */
static void spin_compute(int must) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, mark, NULL) == 0);
	volatile unsigned long sink = 0;
	for (unsigned long i = 0; i < 100000000UL; i++)
		sink += i % 7;
	int ran = flag;
	CHECK(pthread_join(th, NULL) == 0);
	say("compute: the new thread ran meanwhile: %s\n", ran ? "yes" : "no");
	if (must && !ran)
		exit(1);
}

static int pipefd[2];

static void *reader(void *arg) {
	(void)arg;
	char c;
	CHECK(read(pipefd[0], &c, 1) == 1);
	__sync_val_compare_and_swap(&flag, 0, 1);
	return NULL;
}

static void spin_piped(void) {
	pthread_t th;
	CHECK(pipe(pipefd) == 0);
	CHECK(pthread_create(&th, NULL, reader, NULL) == 0);
	usleep(1000); /* the reader blocks in its read */
	CHECK(write(pipefd[1], "x", 1) == 1);
	while (__sync_val_compare_and_swap(&flag, 1, 2) != 1)
		; /* lock cmpxchg that fails: writes nothing new */
	CHECK(pthread_join(th, NULL) == 0);
	say("piped: seen\n");
}

static void spin_rdtsc(void) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, setter, NULL) == 0);
	unsigned long long last = 0, backwards = 0;
	while (!flag) {
		unsigned long long now = __rdtsc();
		backwards += now < last;
		last = now;
	}
	CHECK(pthread_join(th, NULL) == 0);
	say("rdtsc: seen, %llu backwards\n", backwards);
}

/* locked: the waiter checks the flag under a lock, as Go's runtime does
 * (lock, look, let go, again): each round writes the lock word and puts
 * it back. The setter makes syscalls, so it needs turns of its own. */
static int wlock;
static volatile int done;

static void *lock_setter(void *arg) {
	(void)arg;
	for (int i = 0; i < 100; i++)
		CHECK(getppid() > 0 && write(1, "", 0) == 0);
	while (__atomic_exchange_n(&wlock, 1, __ATOMIC_ACQUIRE))
		;
	done = 1;
	__atomic_store_n(&wlock, 0, __ATOMIC_RELEASE);
	return NULL;
}

static void spin_locked(void) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, lock_setter, NULL) == 0);
	for (;;) {
		while (__atomic_exchange_n(&wlock, 1, __ATOMIC_ACQUIRE))
			;
		int d = done;
		__atomic_store_n(&wlock, 0, __ATOMIC_RELEASE);
		if (d)
			break;
	}
	CHECK(pthread_join(th, NULL) == 0);
	say("locked: seen\n");
}

/* locked2: as locked, but the look under the lock is a function called
 * from two places in the loop: its registers come back at each call, with
 * another return address on the stack; only the whole round repeats. */
static __attribute__((noinline)) int peek(void) {
	while (__atomic_exchange_n(&wlock, 1, __ATOMIC_ACQUIRE))
		;
	int d = done;
	__atomic_store_n(&wlock, 0, __ATOMIC_RELEASE);
	return d;
}

static void spin_locked2(void) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, lock_setter, NULL) == 0);
	for (;;) {
		if (peek())
			break;
		__asm__ volatile("" ::: "memory");
		if (peek())
			break;
	}
	CHECK(pthread_join(th, NULL) == 0);
	say("locked2: seen\n");
}

/* listwalk: the node walk is the inner loop; the round around it repeats. */
struct node {
	struct node *next;
	int dead;
};
static struct node nodes[6];

static __attribute__((noinline)) int walk(void) {
	int dead = 0;
	for (struct node *n = &nodes[0]; n; n = n->next)
		dead += n->dead;
	return dead;
}

static void spin_listwalk(void) {
	for (int i = 0; i < 5; i++)
		nodes[i].next = &nodes[i + 1];
	pthread_t th;
	CHECK(pthread_create(&th, NULL, lock_setter, NULL) == 0);
	int dead = 0;
	for (;;) {
		while (__atomic_exchange_n(&wlock, 1, __ATOMIC_ACQUIRE))
			;
		dead += walk();
		int d = done;
		__atomic_store_n(&wlock, 0, __ATOMIC_RELEASE);
		if (d)
			break;
	}
	CHECK(pthread_join(th, NULL) == 0);
	say("listwalk: seen, %d dead\n", dead);
}

static atomic_int arrived, generation;

/* barrier_worker computes (id+1) shares of work, then waits at a barrier
 * whose last comer moves the generation on, 8 times. */
static void *barrier_worker(void *arg) {
	long id = (long)arg, x = 0;
	for (int round = 0; round < 8; round++) {
		for (long i = 0; i < 10000000 * (id + 1); i++)
			x += i ^ (x >> 3);
		int g = atomic_load(&generation);
		if (atomic_fetch_add(&arrived, 1) == 1) {
			atomic_store(&arrived, 0);
			atomic_fetch_add(&generation, 1);
		} else {
			while (atomic_load(&generation) == g)
				;
		}
	}
	sink += x;
	return NULL;
}

static void spin_barrier(void) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, barrier_worker, (void *)1) == 0);
	barrier_worker((void *)0);
	CHECK(pthread_join(th, NULL) == 0);
	say("barrier: %d rounds\n", atomic_load(&generation));
}

static volatile int fflag;

static void *fset(void *arg) {
	(void)arg;
	fflag = 1;
	return NULL;
}

static __attribute__((noinline)) void wait_once(void) {
	pthread_t th;
	fflag = 0;
	CHECK(pthread_create(&th, NULL, fset, NULL) == 0);
	while (!fflag)
		;
	CHECK(pthread_join(th, NULL) == 0);
}

static void spin_forked(void) {
	for (int i = 0; i < 3; i++)
		wait_once();
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			wait_once();
		_exit(0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid);
	for (int i = 0; i < 3; i++)
		wait_once();
	if (WIFSIGNALED(st))
		say("forked: child killed by signal %d\n", WTERMSIG(st));
	else
		say("forked: child exited %d, parent waited 6 times\n", WEXITSTATUS(st));
}

static void *holder(void *arg) {
	(void)arg;
	long x = 0;
	for (long i = 0; i < 2000000; i++) /* a computation, no syscalls */
		x += i ^ (x >> 3);
	sink = x;
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
	return NULL;
}

static void spin_uncontended(void) {
	pthread_t th;
	lock = 1;
	CHECK(pthread_create(&th, NULL, holder, NULL) == 0);
	long n = 0;
	for (int i = 0; i < 20000; i++) {
		while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
			;
		n++;
		__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
		if (i == 0)
			CHECK(pthread_join(th, NULL) == 0);
	}
	say("uncontended: %ld times\n", n);
}

static void spin_pushf(void) {
	pthread_t th;
	CHECK(pthread_create(&th, NULL, setter, NULL) == 0);
	while (!flag)
		__asm__ volatile("pushfq\n\tpopfq" ::: "memory", "cc");
	CHECK(pthread_join(th, NULL) == 0);
	say("pushf: seen\n");
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "flag";
	if (strcmp(mode, "flag") == 0)
		spin_flag();
	else if (strcmp(mode, "alarm") == 0)
		spin_alarm();
	else if (strcmp(mode, "alarmcount") == 0)
		spin_alarmcount(argc > 2 && strcmp(argv[2], "count") == 0);
	else if (strcmp(mode, "spinlock") == 0)
		spin_lock();
	else if (strcmp(mode, "pingpong") == 0)
		spin_pingpong();
	else if (strcmp(mode, "counter") == 0)
		spin_counter();
	else if (strcmp(mode, "compute") == 0)
		spin_compute(1);
	else if (strcmp(mode, "crunch") == 0)
		spin_compute(0);
	else if (strcmp(mode, "bounded") == 0 && argc > 2)
		spin_bounded(atol(argv[2]));
	else if (strcmp(mode, "computealarm") == 0)
		spin_computealarm();
	else if (strcmp(mode, "piped") == 0)
		spin_piped();
	else if (strcmp(mode, "rdtsc") == 0)
		spin_rdtsc();
	else if (strcmp(mode, "locked") == 0)
		spin_locked();
	else if (strcmp(mode, "locked2") == 0)
		spin_locked2();
	else if (strcmp(mode, "listwalk") == 0)
		spin_listwalk();
	else if (strcmp(mode, "barrier") == 0)
		spin_barrier();
	else if (strcmp(mode, "uncontended") == 0)
		spin_uncontended();
	else if (strcmp(mode, "pushf") == 0)
		spin_pushf();
	else if (strcmp(mode, "forked") == 0)
		spin_forked();
	else {
		sayfd(2, "spins: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
