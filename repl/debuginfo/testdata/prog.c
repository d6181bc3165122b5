/* Fixture for repl/debuginfo tests: globals of many types, and a call
 * chain main -> a -> b -> c whose innermost frame dumps its registers, its
 * stack and /proc/self/maps to a file (argv[2]) so the test can unwind it.
 * Mode "plain" dumps from c; mode "signal" dumps from a SIGUSR1 handler
 * entered from c, so the walk crosses the signal trampoline. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__clang__)
#define NOINL __attribute__((noinline))
#else
#define NOINL __attribute__((noipa))
#endif

struct point { int x; int y; };
struct rec {
	char name[8];
	struct point p;
	double d;
	int *ptr;
	unsigned flags : 3;
	int neg : 4;
};
enum color { RED, GREEN, BLUE };

int counter = 42;
static int sarr[5] = {1, 2, 3, 4, 5};
int zeros[100];
char greeting[16] = "hello";
const char *msg = "world";
struct rec rec = {"abc", {1, -2}, 1.5, &counter, 5, -3};
float fl = 2.5f;
_Bool flag = 1;
char ch = 'A';
long long big = -1234567890123LL;
unsigned short us = 65535;
enum color color = GREEN;
int (*fnptr)(int);
volatile int sink;

static char mode[16];
static const char *out;

/* dump writes regs[17] (DWARF order), the stack from regs[7] to the end
 * of [stack], and the maps text. */
static void dump(uint64_t *regs) {
	static char maps[1 << 16];
	int fd = open("/proc/self/maps", O_RDONLY);
	ssize_t n = 0, k;
	while (fd >= 0 && (k = read(fd, maps + n, sizeof maps - 1 - n)) > 0)
		n += k;
	maps[n] = 0;
	close(fd);
	uint64_t sp = regs[7], end = 0;
	for (char *l = maps; *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		if (strstr(l, "[stack]")) {
			uint64_t lo = strtoull(l, 0, 16);
			uint64_t hi = strtoull(strchr(l, '-') + 1, 0, 16);
			if (lo <= sp && sp < hi)
				end = hi;
		}
		if (!nl)
			break;
		*nl = '\n';
		l = nl + 1;
	}
	uint64_t len = end - sp;
	int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(o, regs, 17 * 8);
	write(o, &sp, 8);
	write(o, &len, 8);
	write(o, (void *)sp, len);
	write(o, maps, n);
	close(o);
}

#define CAPTURE(regs)                                         \
	__asm__ volatile("lea 0(%%rip), %%rax\n\t"           \
			 "mov %%rax, 128(%0)\n\t"             \
			 "mov %%rsp, 56(%0)\n\t"              \
			 "mov %%rbp, 48(%0)\n\t"              \
			 "mov %%rbx, 24(%0)\n\t"              \
			 "mov %%r12, 96(%0)\n\t"              \
			 "mov %%r13, 104(%0)\n\t"             \
			 "mov %%r14, 112(%0)\n\t"             \
			 "mov %%r15, 120(%0)\n\t"             \
			 :                                    \
			 : "r"(regs)                          \
			 : "rax", "memory")

NOINL void handler(int sig) {
	uint64_t regs[17] = {0};
	CAPTURE(regs);
	dump(regs);
	sink = sig;
}

NOINL int c(int x) {
	uint64_t regs[17] = {0};
	if (mode[0] == 's') {
		kill(getpid(), SIGUSR1);
	} else {
		CAPTURE(regs);
		dump(regs);
	}
	return x + sink;
}

NOINL int b(int x) {
	int r = c(x + 1);
	__asm__ volatile("");
	return r * 3 + x; /* x lives across the call: at -O2 in a callee-saved register */
}

NOINL int a(int x) {
	int r = b(x + 1);
	__asm__ volatile("");
	return r * 2;
}

int main(int argc, char **argv) {
	fnptr = c;
	sink = sarr[argc % 5] + zeros[argc] + greeting[0] + msg[0] + rec.p.x + (int)fl + flag + ch + (int)big + us + color;
	if (argc < 3)
		return 0;
	strncpy(mode, argv[1], sizeof mode - 1);
	out = argv[2];
	signal(SIGUSR1, handler);
	return a(argc) & 1;
}
