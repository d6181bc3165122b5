// settime: tries to set the clock, which hermit refuses (EPERM) after
// the kernel's own checks, and shows the guest's clock unchanged. Usage:
// settime SECONDS (the host's time now: run natively as root, the calls
// set the clock to about what it is).
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void show(const char *what, long r) {
	printf("%-28s %ld %s\n", what, r, r < 0 ? strerrorname_np(errno) : "");
}

int main(int argc, char **argv) {
	if (argc != 2)
		return 2;
	time_t now = strtoll(argv[1], NULL, 10);
	struct timespec ts = {now, 0}, bad = {now, 2000000000};
	struct timeval tv = {now, 0}, badtv = {now, 1000000};
	struct timespec before, after;
	clock_gettime(CLOCK_REALTIME, &before);
	show("clock_settime REALTIME", syscall(SYS_clock_settime, CLOCK_REALTIME, &ts));
	show("clock_settime MONOTONIC", syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts));
	show("clock_settime bad pointer", syscall(SYS_clock_settime, CLOCK_REALTIME, (void *)8));
	show("clock_settime bad nsec", syscall(SYS_clock_settime, CLOCK_REALTIME, &bad));
	show("settimeofday", syscall(SYS_settimeofday, &tv, NULL));
	show("settimeofday bad usec", syscall(SYS_settimeofday, &badtv, NULL));
	show("settimeofday NULL NULL", syscall(SYS_settimeofday, NULL, NULL));
	clock_gettime(CLOCK_REALTIME, &after);
	printf("clock moved %s\n", after.tv_sec - before.tv_sec < 2 && after.tv_sec >= before.tv_sec ? "on as before" : "by a jump");
	return 0;
}
