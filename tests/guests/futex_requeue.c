/* futex_requeue: raw futex(2) FUTEX_CMP_REQUEUE with 8 waiter threads.
 *
 * Waiters sleep on futex word a until it becomes non-zero. main
 *  1. requeues them from a to b (nr_wake 0) until all 8 were moved, which
 *     also proves all 8 are blocked in the kernel;
 *  2. calls FUTEX_CMP_REQUEUE with a wrong expected value: EAGAIN, nobody moves;
 *  3. sets a = 1, then requeues from b back to a waking one: returns 8 (1 woken
 *     + 7 requeued), and the woken waiter exits;
 *  4. FUTEX_WAKE on a wakes exactly the 7 requeued waiters.
 * Every count is checked; the output is deterministic.
 */
#include "guest.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>

enum { NWAITERS = 8 };

static atomic_int a, b, exited;

static long futex(atomic_int *uaddr, int op, int val, long val2, atomic_int *uaddr2, int val3) {
	return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

static void *waiter(void *arg) {
	(void)arg;
	while (atomic_load(&a) == 0) {
		long r = futex(&a, FUTEX_WAIT_PRIVATE, 0, 0, NULL, 0);
		CHECK(r == 0 || errno == EAGAIN || errno == EINTR);
	}
	atomic_fetch_add(&exited, 1);
	return NULL;
}

int main(void) {
	pthread_t th[NWAITERS];

	for (int i = 0; i < NWAITERS; i++)
		CHECK(pthread_create(&th[i], NULL, waiter, NULL) == 0);

	long moved = 0;
	while (moved < NWAITERS) {
		long r = futex(&a, FUTEX_CMP_REQUEUE_PRIVATE, 0, INT_MAX, &b, 0);
		CHECK(r >= 0);
		moved += r;
		if (moved < NWAITERS)
			sched_yield();
	}
	CHECK(moved == NWAITERS && atomic_load(&exited) == 0);
	say("requeue a->b: %ld waiters moved, none woken\n", moved);

	long r = futex(&b, FUTEX_CMP_REQUEUE_PRIVATE, 1, INT_MAX, &a, 42);
	CHECK(r == -1 && errno == EAGAIN);
	say("requeue with stale value: EAGAIN\n");

	atomic_store(&a, 1);
	r = futex(&b, FUTEX_CMP_REQUEUE_PRIVATE, 1, INT_MAX, &a, 0);
	CHECK(r == NWAITERS);
	say("requeue b->a waking one: %ld (1 woken, %ld requeued)\n", r, r - 1);

	r = futex(&a, FUTEX_WAKE_PRIVATE, INT_MAX, 0, NULL, 0);
	CHECK(r == NWAITERS - 1);
	say("wake a: %ld woken\n", r);

	for (int i = 0; i < NWAITERS; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	CHECK(atomic_load(&exited) == NWAITERS);
	say("%d waiters exited\n", atomic_load(&exited));
	return 0;
}
