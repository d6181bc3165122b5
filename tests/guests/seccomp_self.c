/* seccomp_self: installs a seccomp filter of its own that makes getppid
 * fail with errno 42, then asks prctl for its seccomp mode. Under hermit
 * the guest's filter works on top of hermit's, and the mode is the
 * guest's own (2), not hermit's. The mode belongs to each thread: a
 * thread started before the filter still reports 0, one started after
 * inherits 2, and a filter installed with SECCOMP_FILTER_FLAG_TSYNC
 * reaches every thread.
 */
#include "guest.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static int go[2], done[2];

/* early waits for a byte, then reports its mode, twice. */
static void *early(void *arg) {
	(void)arg;
	for (int i = 0; i < 2; i++) {
		char c;
		CHECK(read(go[0], &c, 1) == 1);
		int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
		CHECK(write(done[1], &mode, sizeof mode) == sizeof mode);
	}
	return NULL;
}

static void *later(void *arg) {
	(void)arg;
	return (void *)(long)prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
}

static int early_mode(void) {
	int mode;
	CHECK(write(go[1], "x", 1) == 1);
	CHECK(read(done[0], &mode, sizeof mode) == sizeof mode);
	return mode;
}

int main(void) {
	CHECK(pipe(go) == 0 && pipe(done) == 0);
	pthread_t a, b;
	CHECK(pthread_create(&a, NULL, early, NULL) == 0);
	say("seccomp mode before: %d\n", prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 42),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0);
	errno = 0;
	long r = syscall(SYS_getppid);
	say("getppid: %ld, errno %d; seccomp mode after: %d\n", r, errno, prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
	void *later_mode;
	CHECK(pthread_create(&b, NULL, later, NULL) == 0);
	CHECK(pthread_join(b, &later_mode) == 0);
	say("thread started before: %d, after: %ld\n", early_mode(), (long)later_mode);
	CHECK(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0);
	say("after a TSYNC filter, thread started before: %d\n", early_mode());
	CHECK(pthread_join(a, NULL) == 0);
	return 0;
}
