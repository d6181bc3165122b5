/* affinity: sched_getaffinity and sched_setaffinity, with the errors the
 * kernel gives (a thread that does not exist: ESRCH; a mask without one
 * of the machine's CPUs, or a size not a multiple of 8: EINVAL), a mask
 * set and read back, and inherited by a thread. Prints the same on a
 * machine of N CPUs as under hermit --num-cpus N.
 */
#include "guest.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>

static void show(const char *what, long r) { say("%s: %s\n", what, r < 0 ? strerror(errno) : "ok"); }

static long getaff(pid_t pid, size_t size, unsigned long *mask) { return syscall(SYS_sched_getaffinity, pid, size, mask); }
static long setaff(pid_t pid, size_t size, unsigned long *mask) { return syscall(SYS_sched_setaffinity, pid, size, mask); }

static void *thread_main(void *arg) {
	(void)arg;
	unsigned long m = 0;
	CHECK(getaff(0, sizeof m, &m) > 0);
	say("a new thread's mask: %#lx\n", m);
	return NULL;
}

int main(void) {
	unsigned long m[16] = {0};
	show("get of no such thread", getaff(999999, sizeof m, m));
	show("get of pid -1", getaff(-1, sizeof m, m));
	show("get into 4 bytes", getaff(0, 4, m));
	show("get into 12 bytes", getaff(0, 12, m));
	CHECK(getaff(0, sizeof m, m) > 0);
	unsigned long all = m[0];
	memset(m, 0, sizeof m);
	show("set of none", setaff(0, sizeof m, m));
	m[15] = 1;
	show("set of CPU 960 alone", setaff(0, sizeof m, m));
	m[15] = 0;
	m[0] = 1;
	show("set of no such thread", setaff(999999, sizeof m, m));
	m[0] = all & -all; // the highest CPU
	while (m[0] << 1 && (all & (m[0] << 1)))
		m[0] <<= 1;
	show("set of the last CPU", setaff(0, sizeof m, m));
	unsigned long got = 0;
	CHECK(getaff(0, sizeof got, &got) > 0);
	say("read back: %s\n", got == m[0] ? "the mask set" : "another mask");
	pthread_t th;
	CHECK(pthread_create(&th, NULL, thread_main, NULL) == 0);
	CHECK(pthread_join(th, NULL) == 0);
	return 0;
}
