/* clock_loop: argv[1] clock_gettime(CLOCK_MONOTONIC) calls through the
 * vDSO. hermit patches the vDSO so each is a syscall answered from its
 * virtual clock: one ptrace stop per call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
	if (argc != 2)
		return 2;
	long n = atol(argv[1]);
	struct timespec ts = {0, 0};
	for (long i = 0; i < n; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("%ld clock_gettime calls, last %ld.%09ld\n", n, (long)ts.tv_sec, ts.tv_nsec);
	return 0;
}
