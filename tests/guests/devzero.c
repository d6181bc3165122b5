/* devzero: reads of /dev/zero, which the kernel cuts short when a signal
 * is pending (hermit's watchdog stops a thread that runs long while
 * another waits). Each mode prints what read returned:
 *   long   four reads of 128 MiB each, while a new thread waits to run
 *   fault  a read into a buffer whose end is not mapped, then one into
 *          unmapped memory
 */
#include "guest.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

static void *idle(void *arg) { return arg; }

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "";
	int fd = open("/dev/zero", O_RDONLY);
	CHECK(fd >= 0);
	if (strcmp(mode, "long") == 0) {
		size_t n = 128 << 20;
		char *b = malloc(n);
		CHECK(b != NULL);
		pthread_t th;
		CHECK(pthread_create(&th, NULL, idle, NULL) == 0);
		for (int i = 0; i < 4; i++)
			say("long: read %zd of %zu\n", read(fd, b, n), n);
		CHECK(pthread_join(th, NULL) == 0);
		return 0;
	}
	if (strcmp(mode, "fault") == 0) {
		long page = sysconf(_SC_PAGESIZE);
		char *b = mmap(NULL, 5 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(b != MAP_FAILED);
		CHECK(munmap(b + 3 * page, 2 * page) == 0);
		memset(b, 1, 3 * page);
		say("fault: read %zd of %ld\n", read(fd, b + 100, 5 * page), 5 * page);
		for (long i = 100; i < 3 * page; i++)
			CHECK(b[i] == 0);
		ssize_t r = read(fd, b + 3 * page, 10);
		say("fault: read %zd into unmapped memory (%s)\n", r, r < 0 ? strerror(errno) : "");
		return 0;
	}
	sayfd(2, "usage: devzero long|fault\n");
	return 2;
}
