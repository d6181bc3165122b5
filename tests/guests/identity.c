/* identity: prints everything a program can learn about its environment
 * that natively changes between runs: the clocks (through the vDSO and the
 * raw syscalls), the time-stamp counter, random bytes from every source,
 * addresses, pids, the machine's name and its CPUs.
 *
 * Every line is "CLASS LABEL: VALUE", and CLASS says what the value may
 * depend on under hermit, so the test can compare runs line by line:
 *
 *   fixed    nothing: the same under every --seed and --epoch
 *   wall     only --epoch: "SECONDS[.FRACTION]" of wall-clock time, which
 *            moves by exactly the epoch difference, fraction unchanged
 *   walldep  only --epoch, through a wall-clock value (rand() seeded with
 *            time() ^ getpid())
 *   random   only --seed: bytes from getrandom, /dev/urandom, /dev/random
 *            or AT_RANDOM, or values derived from them
 *
 * The program is single-threaded, so no --seed can change its schedule.
 */
#include "guest.h"

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <x86intrin.h>

static int global_var;
static __thread int tls_var;

/* hex formats n bytes of p as lower-case hex into a static buffer. */
static const char *hex(const void *p, size_t n) {
	static char buf[2 * 64 + 1];
	const unsigned char *b = p;
	CHECK(2 * n < sizeof buf);
	for (size_t i = 0; i < n; i++)
		snprintf(buf + 2 * i, 3, "%02x", b[i]);
	buf[2 * n] = 0;
	return buf;
}

/* readfile reads up to n bytes from the start of path. */
static void readfile(const char *path, void *buf, size_t n) {
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(read(fd, buf, n) == (ssize_t)n);
	close(fd);
}

struct clockid_name {
	clockid_t id;
	const char *name;
	const char *class;
};

static const struct clockid_name clocks[] = {
	{CLOCK_REALTIME, "REALTIME", "wall"},
	{CLOCK_REALTIME_COARSE, "REALTIME_COARSE", "wall"},
	{CLOCK_MONOTONIC, "MONOTONIC", "fixed"},
	{CLOCK_MONOTONIC_RAW, "MONOTONIC_RAW", "fixed"},
	{CLOCK_BOOTTIME, "BOOTTIME", "fixed"},
};

/* tsc: print the time-stamp counter lines (main). */
static int tsc = 1;

static void print_clocks(void) {
	for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
		const struct clockid_name *c = &clocks[i];
		struct timespec ts;
		CHECK(clock_gettime(c->id, &ts) == 0);
		say("%s clock_gettime(%s) vdso: %lld.%09ld\n", c->class, c->name, (long long)ts.tv_sec, ts.tv_nsec);
		CHECK(syscall(SYS_clock_gettime, c->id, &ts) == 0);
		say("%s clock_gettime(%s) syscall: %lld.%09ld\n", c->class, c->name, (long long)ts.tv_sec, ts.tv_nsec);
	}

	struct timeval tv;
	CHECK(gettimeofday(&tv, NULL) == 0);
	say("wall gettimeofday vdso: %lld.%06ld\n", (long long)tv.tv_sec, (long)tv.tv_usec);
	CHECK(syscall(SYS_gettimeofday, &tv, NULL) == 0);
	say("wall gettimeofday syscall: %lld.%06ld\n", (long long)tv.tv_sec, (long)tv.tv_usec);
	say("wall time vdso: %lld\n", (long long)time(NULL));
	say("wall time syscall: %lld\n", (long long)syscall(SYS_time, NULL));

	if (!tsc)
		return;
	unsigned long long t1 = __rdtsc(), t2 = __rdtsc();
	say("fixed rdtsc: %llu %llu\n", t1, t2);
	unsigned int aux = 99;
	unsigned long long t3 = __rdtscp(&aux);
	say("fixed rdtscp: %llu aux %u\n", t3, aux);
}

static void print_random(void) {
	unsigned char b[16];
	CHECK(getrandom(b, sizeof b, 0) == (ssize_t)sizeof b);
	say("random getrandom: %s\n", hex(b, sizeof b));
	CHECK(getrandom(b, sizeof b, GRND_NONBLOCK) == (ssize_t)sizeof b);
	say("random getrandom nonblock: %s\n", hex(b, sizeof b));
	readfile("/dev/urandom", b, sizeof b);
	say("random /dev/urandom: %s\n", hex(b, sizeof b));
	readfile("/dev/random", b, sizeof b);
	say("random /dev/random: %s\n", hex(b, sizeof b));
	say("random AT_RANDOM: %s\n", hex((const void *)getauxval(AT_RANDOM), 16));
	say("random arc4random: %08x\n", arc4random());

	/* glibc derives the stack protector canary (%fs:0x28) and the pointer
	 * guard (%fs:0x30) from the AT_RANDOM bytes. */
	uintptr_t canary, guard;
	__asm__("mov %%fs:0x28, %0" : "=r"(canary));
	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	say("random stack canary: %#lx\n", (unsigned long)canary);
	say("random pointer guard: %#lx\n", (unsigned long)guard);
}

static void print_addresses(void) {
	int local;
	void *small = malloc(32), *large = malloc(1 << 20);
	void *anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(small != NULL && large != NULL && anon != MAP_FAILED);
	say("fixed stack: %p\n", (void *)&local);
	say("fixed heap: %p\n", small);
	say("fixed large malloc: %p\n", large);
	say("fixed mmap: %p\n", anon);
	say("fixed brk: %p\n", sbrk(0));
	say("fixed function: %p\n", (void *)(uintptr_t)&print_addresses);
	say("fixed libc function: %p\n", (void *)(uintptr_t)&memcpy);
	say("fixed global: %p\n", (void *)&global_var);
	say("fixed tls: %p\n", (void *)&tls_var);
	say("fixed vdso: %#lx\n", getauxval(AT_SYSINFO_EHDR));
	free(small);
	free(large);
	munmap(anon, 4096);
}

static int cpuinfo_processors(void) {
	FILE *f = fopen("/proc/cpuinfo", "r");
	CHECK(f != NULL);
	char line[256];
	int n = 0;
	while (fgets(line, sizeof line, f))
		n += strncmp(line, "processor", 9) == 0;
	fclose(f);
	return n;
}

static void print_identity(void) {
	say("fixed pid: %d\n", (int)getpid());
	say("fixed ppid: %d\n", (int)getppid());
	say("fixed tid: %ld\n", (long)syscall(SYS_gettid));

	struct utsname u;
	CHECK(uname(&u) == 0);
	say("fixed uname sysname: %s\n", u.sysname);
	say("fixed uname nodename: %s\n", u.nodename);
	say("fixed uname release: %s\n", u.release);
	say("fixed uname version: %s\n", u.version);
	say("fixed uname machine: %s\n", u.machine);
	char host[256];
	CHECK(gethostname(host, sizeof host) == 0);
	say("fixed gethostname: %s\n", host);

	cpu_set_t set;
	CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
	say("fixed cpus online: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	say("fixed cpus affinity: %d\n", CPU_COUNT(&set));
	say("fixed cpus cpuinfo: %d\n", cpuinfo_processors());
	/* glibc's sched_getcpu reads the rseq area the kernel keeps up to
	 * date; getcpu() goes through the vDSO; the syscall is the syscall. */
	say("fixed sched_getcpu: %d\n", sched_getcpu());
	unsigned cpu = 99, node = 99;
	CHECK(getcpu(&cpu, &node) == 0);
	say("fixed getcpu vdso: cpu %u node %u\n", cpu, node);
	cpu = node = 99;
	CHECK(syscall(SYS_getcpu, &cpu, &node, NULL) == 0);
	say("fixed getcpu syscall: cpu %u node %u\n", cpu, node);
}

int main(int argc, char **argv) {
	/* "notsc": leave out the time-stamp counter, which a machine that
	 * cannot trap rdtsc shows as it is. */
	tsc = !(argc > 1 && strcmp(argv[1], "notsc") == 0);
	print_clocks();
	print_random();

	/* The classic "good enough" seed: time and pid, both virtual. */
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	int r1 = rand(), r2 = rand(), r3 = rand();
	say("walldep rand seeded with time^pid: %d %d %d\n", r1, r2, r3);

	print_addresses();
	print_identity();

	/* The clocks once more, after all the work above. */
	print_clocks();
	return 0;
}
