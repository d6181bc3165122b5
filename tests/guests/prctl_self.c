/* prctl_self: what prctl tells a process about its own confinement:
 * seccomp mode, rdtsc mode and no_new_privs; then it sets the rdtsc mode
 * and no_new_privs itself and asks again. Under hermit, an unconfined
 * process's answers: hermit's own filter, rdtsc trap and no_new_privs do
 * not show.
 */
#include "guest.h"

#include <linux/prctl.h>
#include <sys/prctl.h>

int main(void) {
	int tsc = -1;
	CHECK(prctl(PR_GET_TSC, &tsc, 0, 0, 0) == 0);
	say("seccomp %d, tsc %d, no_new_privs %d\n", prctl(PR_GET_SECCOMP, 0, 0, 0, 0), tsc, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	CHECK(prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0) == 0);
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHECK(prctl(PR_GET_TSC, &tsc, 0, 0, 0) == 0);
	say("after setting: tsc %d, no_new_privs %d\n", tsc, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	return 0;
}
