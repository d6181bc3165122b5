/* getppid: argv[1] raw getppid syscalls. hermit's filter lets getppid through
 * without a stop, so this measures the cost of the filter alone.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc != 2)
		return 2;
	long n = atol(argv[1]), ppid = syscall(SYS_getppid);
	for (long i = 0; i < n; i++)
		if (syscall(SYS_getppid) != ppid)
			return 1;
	printf("%ld getppid calls\n", n);
	return 0;
}
