/* seccomp_self: installs a seccomp filter of its own that makes getppid
 * fail with errno 42, then asks prctl for its seccomp mode. Under hermit
 * the guest's filter works on top of hermit's, and the mode is the
 * guest's own (2), not hermit's.
 */
#include "guest.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

int main(void) {
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
	return 0;
}
