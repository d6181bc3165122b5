/* cpuid.c: prints what CPUID says about RDRAND, RDSEED and the initial
 * APIC id (which names the CPU the instruction ran on), and whether
 * /proc/cpuinfo's flags name RDRAND or RDSEED. Under `hermit run
 * --virtualize-cpuid` all read 0 on any CPU. With "own", it also turns
 * cpuid off itself (ARCH_SET_CPUID), sees it fault, turns it on again,
 * and reads RDRAND's bit again: hermit's virtualization stays. */
#include "guest.h"
#include <asm/prctl.h>
#include <cpuid.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>

static sigjmp_buf faulted;

static void onSegv(int sig) {
	(void)sig;
	siglongjmp(faulted, 1);
}

/* flagged reports whether /proc/cpuinfo's first flags line has word. */
static int flagged(const char *word) {
	FILE *f = fopen("/proc/cpuinfo", "r");
	CHECK(f != NULL);
	char line[8192];
	int found = 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) == 0) {
			char *p = strstr(line, word);
			found = p != NULL && p[-1] == ' ' && (p[strlen(word)] == ' ' || p[strlen(word)] == '\n');
			break;
		}
	}
	fclose(f);
	return found;
}

int main(int argc, char **argv) {
	unsigned a, b, c, d;
	CHECK(__get_cpuid(1, &a, &b, &c, &d));
	say("apic id %u rdrand %u\n", b >> 24, (c >> 30) & 1);
	__cpuid_count(7, 0, a, b, c, d);
	say("rdseed %u\n", (b >> 18) & 1);
	say("cpuinfo rdrand %d rdseed %d\n", flagged("rdrand"), flagged("rdseed"));
	if (argc > 1 && strcmp(argv[1], "own") == 0) {
		signal(SIGSEGV, onSegv);
		CHECK(syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) == 0);
		int on = (int)syscall(SYS_arch_prctl, ARCH_GET_CPUID, 0);
		volatile int fault = 0;
		if (sigsetjmp(faulted, 1) == 0)
			__cpuid(1, a, b, c, d);
		else
			fault = 1;
		CHECK(syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1) == 0);
		__cpuid(1, a, b, c, d);
		say("cpuid off: get %d, faulted %d; on again: rdrand %u\n", on, fault, (c >> 30) & 1);
	}
	return 0;
}
