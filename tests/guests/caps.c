/* caps: what a process learns of its capabilities (the bounding set, the
 * ambient set, securebits, capget), which is the recording machine's, and
 * changes it makes to them. The replay must show the recording's.
 */
#include "guest.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

int main(void) {
	unsigned long long bset = 0;
	for (int c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
			bset |= 1ULL << c;
	say("bounding set %#llx\n", bset);
	say("ambient net_admin %d\n", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_ADMIN, 0, 0));
	say("securebits %#x\n", prctl(PR_GET_SECUREBITS, 0, 0, 0, 0));
	struct __user_cap_header_struct h = {0, 0};
	int r = syscall(SYS_capget, &h, NULL);
	say("capget probe %d version %#x\n", r, h.version);
	struct __user_cap_data_struct d[2] = {{0}};
	h.version = _LINUX_CAPABILITY_VERSION_3;
	CHECK(syscall(SYS_capget, &h, d) == 0);
	say("effective %#x %#x permitted %#x %#x\n", d[0].effective, d[1].effective, d[0].permitted, d[1].permitted);
	say("drop sys_boot from the bounding set %d\n", prctl(PR_CAPBSET_DROP, CAP_SYS_BOOT, 0, 0, 0));
	say("sys_boot bounded %d\n", prctl(PR_CAPBSET_READ, CAP_SYS_BOOT, 0, 0, 0));
	d[0].effective &= ~(1u << CAP_SYS_BOOT);
	say("capset %ld\n", syscall(SYS_capset, &h, d));
	CHECK(syscall(SYS_capget, &h, d) == 0);
	say("effective now %#x\n", d[0].effective);
	return 0;
}
