/* order_violation: a thread uses a pointer that main publishes without
 * synchronization, the classic order violation.
 *
 * main starts a worker, then does some I/O (a few writes to /dev/null)
 * before it publishes `config`. The worker does I/O of its own, then reads
 * config->limit. When main publishes first, as it does when it keeps the
 * CPU over its few syscalls (hermit's default schedule, and natively almost
 * always), it prints "limit 42, ok". When the worker runs first it reads
 * a NULL pointer and dies of SIGSEGV in use_config.
 *
 * With "quiet", the worker writes nothing before the read (fewer
 * scheduling points: a rarer failure).
 */
#include "guest.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>

struct config {
	int limit;
};

static struct config *volatile config; /* published without a lock */
static int devnull;
static int quiet;

static void io(int n) {
	for (int i = 0; i < n; i++)
		CHECK(write(devnull, "x", 1) == 1);
}

__attribute__((noinline)) static int use_config(void) {
	return config->limit; /* NULL when the worker runs first */
}

static void *worker(void *arg) {
	(void)arg;
	if (!quiet)
		io(2);
	int limit = use_config();
	say("limit %d, ok\n", limit);
	return NULL;
}

int main(int argc, char **argv) {
	quiet = argc > 1 && strcmp(argv[1], "quiet") == 0;
	devnull = open("/dev/null", O_WRONLY);
	CHECK(devnull >= 0);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, worker, NULL) == 0);
	io(3);
	static struct config c = {.limit = 42};
	config = &c;
	CHECK(pthread_join(th, NULL) == 0);
	return 0;
}
