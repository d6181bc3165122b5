/* futex_requeue_plain: raw futex(2) FUTEX_REQUEUE (not CMP_) with 4
 * waiters: waking one and requeueing the rest returns the number woken
 * plus the number requeued (4), as the kernel's futex_requeue does (the
 * man page says only those woken); the 3 requeued then wake from the
 * second futex.
 */
#include "guest.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>

enum { NWAITERS = 4 };

static int a, b;
static atomic_int waiting;

static long futex(int *uaddr, int op, int val, long val2, int *uaddr2, int val3) {
	return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

static void *waiter(void *arg) {
	atomic_fetch_add(&waiting, 1);
	while (atomic_load((_Atomic int *)&a) == 0)
		futex(&a, FUTEX_WAIT_PRIVATE, 0, 0, NULL, 0);
	return arg;
}

int main(void) {
	pthread_t th[NWAITERS];
	for (int i = 0; i < NWAITERS; i++)
		CHECK(pthread_create(&th[i], NULL, waiter, NULL) == 0);
	while (atomic_load(&waiting) < NWAITERS)
		usleep(1000);
	usleep(50000); /* natively: let them all reach the kernel's wait */
	long r = futex(&a, FUTEX_REQUEUE_PRIVATE, 1, INT_MAX, &b, 0);
	say("requeue: %ld\n", r);
	atomic_store((_Atomic int *)&a, 1);
	say("wake b: %ld\n", futex(&b, FUTEX_WAKE_PRIVATE, INT_MAX, 0, NULL, 0));
	/* The one woken may have seen a still 0 and waited on a again. */
	futex(&a, FUTEX_WAKE_PRIVATE, INT_MAX, 0, NULL, 0);
	for (int i = 0; i < NWAITERS; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	return 0;
}
