/* robust: the owner of a robust mutex dies holding it while another
 * waits for it. The kernel marks the lock's word FUTEX_OWNER_DIED and
 * wakes a waiter; the waiter's pthread_mutex_lock returns EOWNERDEAD, it
 * makes the mutex consistent and unlocks it. Under hermit the waiter
 * waited in hermit, out of the kernel's reach: nobody woke it, and the
 * run ended as deadlocked.
 *
 * Two owners: a thread that exits, and a forked process that exits,
 * holding a process-shared robust mutex in shared memory. Each owner
 * takes the lock, lets the waiter go and sleeps, so that the waiter is
 * asleep on the lock when the owner dies. */
#include "guest.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

struct shared {
	pthread_mutex_t m;
	sem_t taken;
};

static void init(struct shared *s, int pshared) {
	pthread_mutexattr_t a;
	CHECK(pthread_mutexattr_init(&a) == 0);
	CHECK(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) == 0);
	CHECK(pthread_mutexattr_setpshared(&a, pshared) == 0);
	CHECK(pthread_mutex_init(&s->m, &a) == 0);
	CHECK(sem_init(&s->taken, pshared, 0) == 0);
}

/* owner takes the lock, lets the waiter go, and dies holding it. */
static void owner(struct shared *s) {
	CHECK(pthread_mutex_lock(&s->m) == 0);
	CHECK(sem_post(&s->taken) == 0);
	struct timespec d = {0, 20 * 1000000};
	nanosleep(&d, NULL);
}

/* waiter waits for the lock the owner dies holding and says how it got it. */
static void waiter(const char *who, struct shared *s) {
	CHECK(sem_wait(&s->taken) == 0);
	int err = pthread_mutex_lock(&s->m);
	say("%s: lock returned %s\n", who, err == EOWNERDEAD ? "EOWNERDEAD" : strerror(err));
	if (err == EOWNERDEAD)
		CHECK(pthread_mutex_consistent(&s->m) == 0);
	CHECK(pthread_mutex_unlock(&s->m) == 0);
}

static void *thread_owner(void *arg) {
	owner(arg);
	return NULL; /* exits holding the lock */
}

int main(void) {
	static struct shared threads;
	init(&threads, PTHREAD_PROCESS_PRIVATE);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, thread_owner, &threads) == 0);
	waiter("thread", &threads);
	CHECK(pthread_join(th, NULL) == 0);

	struct shared *procs = mmap(NULL, sizeof *procs, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(procs != MAP_FAILED);
	init(procs, PTHREAD_PROCESS_SHARED);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		owner(procs);
		_exit(0); /* exits holding the lock */
	}
	waiter("process", procs);
	int status;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	return 0;
}
