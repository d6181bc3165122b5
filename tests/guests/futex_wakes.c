/* futex_wakes: FUTEX_WAKE_PRIVATE calls that hermit answers in the guest
 * (detcore/fastfutex.go), in the ways a program makes them:
 *
 *   condvar N   4 producers and 4 consumers pass N items each through a
 *               queue of 4 under a pthread mutex and two condition
 *               variables (glibc's own futex calls); prints a hash of the
 *               order in which the items were taken.
 *   spin        the main thread wakes a thread and then spins, without a
 *               syscall, until that thread answers, 5 times.
 *   fork        a thread waits on a word; the process forks, and the
 *               child wakes its own copy of the word (there is no waiter
 *               in the child: 0 woken), then the parent wakes its thread
 *               (1 woken). Both say what their wakes returned.
 *   counts      3 threads wait on one word; wakes of 2, then of 5, then
 *               of a word nobody waits on say how many each woke.
 *   untraced    the main thread wakes a thread, then makes 20000 mmap and
 *               munmap calls (which hermit lets through); the thread says
 *               at which of them it ran: under hermit, where the trapped
 *               wake would have let it (the caller counts its calls).
 *   compute N   the main thread wakes a thread, computes N rounds without a
 *               syscall (long enough for hermit's watchdog to look at it:
 *               a look must change nothing), then wakes another; both say
 *               at which round they ran.
 *   journal N   the main thread wakes two threads in turn, N times, with
 *               an access(2) between the wakes: a call hermit record
 *               stops at only to keep its result, and hermit run lets
 *               through (the schedules must be the same).
 */
#include "guest.h"

#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static long futex(atomic_int *w, int op, int val) { return syscall(SYS_futex, w, op, val, NULL, NULL, 0); }

/* untilWaiting returns once n threads wait on *w: a requeue of them all
 * onto *w itself, waking none, counts them. */
static void untilWaiting(atomic_int *w, long n) {
	while (syscall(SYS_futex, w, FUTEX_CMP_REQUEUE_PRIVATE, 0, (void *)0x7fffffffL, w, atomic_load(w)) != n)
		usleep(1000);
}

/* waitfor waits until *w is not old. */
static void waitfor(atomic_int *w, int old) {
	while (atomic_load(w) == old)
		futex(w, FUTEX_WAIT_PRIVATE, old);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER, nonfull = PTHREAD_COND_INITIALIZER;
static int queue[4], queued, taken, items;
static unsigned long hash = 1469598103934665603UL;

static void *producer(void *arg) {
	long id = (long)arg;
	for (int i = 0; i < items; i++) {
		pthread_mutex_lock(&mu);
		while (queued == 4)
			pthread_cond_wait(&nonfull, &mu);
		queue[queued++] = (int)(id * 1000000 + i);
		pthread_cond_signal(&nonempty);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *consumer(void *arg) {
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (queued == 0 && taken < 4 * items)
			pthread_cond_wait(&nonempty, &mu);
		if (queued == 0) {
			pthread_cond_broadcast(&nonempty);
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		hash = (hash ^ (unsigned)queue[--queued]) * 1099511628211UL;
		taken++;
		pthread_cond_signal(&nonfull);
		if (taken == 4 * items)
			pthread_cond_broadcast(&nonempty);
		pthread_mutex_unlock(&mu);
	}
}

static atomic_int word, answer;

static void *answerer(void *arg) {
	(void)arg;
	for (int i = 1; i <= 5; i++) {
		waitfor(&word, i - 1);
		atomic_store(&answer, i);
	}
	return NULL;
}

static atomic_int words[2], dones[2];

static void *echo(void *arg) {
	long k = (long)arg;
	for (int i = 1; i <= items; i++) {
		waitfor(&words[k], i - 1);
		atomic_store(&dones[k], i);
		futex(&dones[k], FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

static atomic_int iteration, seenAt = -1;

static void *observer(void *arg) {
	(void)arg;
	waitfor(&word, 0);
	atomic_store(&seenAt, atomic_load(&iteration));
	return NULL;
}

static void *sleeper(void *arg) {
	long k = (long)arg;
	waitfor(&words[k], 0);
	say("compute: thread %ld ran at round %d\n", k, atomic_load(&iteration));
	return NULL;
}

static void *waiter(void *arg) {
	(void)arg;
	waitfor(&word, 0);
	return NULL;
}

int main(int argc, char **argv) {
	CHECK(argc >= 2);
	if (strcmp(argv[1], "condvar") == 0) {
		items = argc > 2 ? atoi(argv[2]) : 1000;
		pthread_t th[8];
		for (long i = 0; i < 8; i++)
			CHECK(pthread_create(&th[i], NULL, i % 2 ? producer : consumer, (void *)i) == 0);
		for (int i = 0; i < 8; i++)
			CHECK(pthread_join(th[i], NULL) == 0);
		say("condvar: %d items, order %016lx\n", taken, hash);
	} else if (strcmp(argv[1], "spin") == 0) {
		pthread_t th;
		CHECK(pthread_create(&th, NULL, answerer, NULL) == 0);
		for (int i = 1; i <= 5; i++) {
			usleep(1000);
			atomic_store(&word, i);
			futex(&word, FUTEX_WAKE_PRIVATE, 1);
			while (atomic_load(&answer) != i)
				;
			say("spin: round %d answered\n", i);
		}
		CHECK(pthread_join(th, NULL) == 0);
	} else if (strcmp(argv[1], "fork") == 0) {
		pthread_t th;
		CHECK(pthread_create(&th, NULL, waiter, NULL) == 0);
		untilWaiting(&word, 1);
		/* Wakes of nobody: hermit patches the site at the first. */
		static atomic_int nobody;
		for (int i = 0; i < 3; i++)
			CHECK(futex(&nobody, FUTEX_WAKE_PRIVATE, 1) == 0);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			say("fork: the child's wake woke %ld\n", futex(&word, FUTEX_WAKE_PRIVATE, 1));
			_exit(0);
		}
		int status;
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
		atomic_store(&word, 1);
		say("fork: the parent's wake woke %ld\n", futex(&word, FUTEX_WAKE_PRIVATE, 1));
		CHECK(pthread_join(th, NULL) == 0);
	} else if (strcmp(argv[1], "untraced") == 0) {
		pthread_t th;
		CHECK(pthread_create(&th, NULL, observer, NULL) == 0);
		untilWaiting(&word, 1);
		static atomic_int nobody;
		for (int i = 0; i < 3; i++)
			CHECK(futex(&nobody, FUTEX_WAKE_PRIVATE, 1) == 0);
		atomic_store(&word, 1);
		futex(&word, FUTEX_WAKE_PRIVATE, 1);
		for (int i = 0; i < 20000; i++) {
			atomic_store(&iteration, i);
			void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			CHECK(p != MAP_FAILED && munmap(p, 4096) == 0);
		}
		CHECK(pthread_join(th, NULL) == 0);
		say("untraced: the woken thread ran at call %d\n", atomic_load(&seenAt));
	} else if (strcmp(argv[1], "compute") == 0) {
		long rounds = argc > 2 ? atol(argv[2]) : 100000000;
		pthread_t th[2];
		for (long k = 0; k < 2; k++) {
			CHECK(pthread_create(&th[k], NULL, sleeper, (void *)k) == 0);
			untilWaiting(&words[k], 1);
		}
		static atomic_int nobody;
		for (int i = 0; i < 3; i++)
			CHECK(futex(&nobody, FUTEX_WAKE_PRIVATE, 1) == 0);
		atomic_store(&words[0], 1);
		futex(&words[0], FUTEX_WAKE_PRIVATE, 1);
		unsigned long x = 1;
		for (long i = 0; i < rounds; i++) {
			x = x * 6364136223846793005UL + 1442695040888963407UL;
			if ((x >> 60) == 0)
				atomic_store(&iteration, (int)(i >> 20));
		}
		atomic_store(&words[1], 1);
		futex(&words[1], FUTEX_WAKE_PRIVATE, 1);
		for (int k = 0; k < 2; k++)
			CHECK(pthread_join(th[k], NULL) == 0);
	} else if (strcmp(argv[1], "journal") == 0) {
		items = argc > 2 ? atoi(argv[2]) : 100;
		pthread_t th[2];
		for (long k = 0; k < 2; k++)
			CHECK(pthread_create(&th[k], NULL, echo, (void *)k) == 0);
		for (int i = 1; i <= items; i++) {
			atomic_store(&words[0], i);
			futex(&words[0], FUTEX_WAKE_PRIVATE, 1);
			CHECK(access("/", F_OK) == 0);
			atomic_store(&words[1], i);
			futex(&words[1], FUTEX_WAKE_PRIVATE, 1);
			waitfor(&dones[0], i - 1);
			waitfor(&dones[1], i - 1);
		}
		for (int k = 0; k < 2; k++)
			CHECK(pthread_join(th[k], NULL) == 0);
		say("journal: %d rounds\n", items);
	} else if (strcmp(argv[1], "counts") == 0) {
		pthread_t th[3];
		for (int i = 0; i < 3; i++)
			CHECK(pthread_create(&th[i], NULL, waiter, NULL) == 0);
		untilWaiting(&word, 3);
		static atomic_int nobody;
		for (int i = 0; i < 3; i++)
			CHECK(futex(&nobody, FUTEX_WAKE_PRIVATE, 1) == 0);
		atomic_store(&word, 1);
		say("counts: woke %ld of 2 asked\n", futex(&word, FUTEX_WAKE_PRIVATE, 2));
		say("counts: woke %ld of 5 asked\n", futex(&word, FUTEX_WAKE_PRIVATE, 5));
		say("counts: woke %ld on a word nobody waits on\n", futex(&nobody, FUTEX_WAKE_PRIVATE, 5));
		for (int i = 0; i < 3; i++)
			CHECK(pthread_join(th[i], NULL) == 0);
	}
	say("ok\n");
	return 0;
}
