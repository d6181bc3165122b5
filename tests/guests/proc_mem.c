/* proc_mem: a program that reads and writes its own memory through
 * /proc/self/mem and /proc/PID/mem, as JITs do: a write there reaches even
 * a read-only executable mapping. The replay must do the same for real.
 */
#include "guest.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

static char text[32] = "hello from the guest";

int main(void) {
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	char buf[32] = {0};
	say("pread %zd: %s\n", pread(fd, buf, sizeof buf - 1, (off_t)(uintptr_t)text), buf);
	say("pwrite %zd: %s\n", pwrite(fd, "HELLO", 5, (off_t)(uintptr_t)text), text);

	/* Code written into a mapping the program cannot write itself. */
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(code != MAP_FAILED);
	static const unsigned char ret42[] = {0xb8, 42, 0, 0, 0, 0xc3}; /* mov $42, %eax; ret */
	CHECK(pwrite(fd, ret42, sizeof ret42, (off_t)(uintptr_t)code) == sizeof ret42);
	say("jit returns %d\n", ((int (*)(void))code)());

	CHECK(lseek(fd, (off_t)(uintptr_t)text, SEEK_SET) >= 0);
	memset(buf, 0, sizeof buf);
	say("read %zd: %s\n", read(fd, buf, 5), buf);
	close(fd);

	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	memset(buf, 0, sizeof buf);
	say("pid mem %zd: %s\n", pread(fd, buf, 11, (off_t)(uintptr_t)text), buf);
	return 0;
}
