/* tsc_sites: reads the time-stamp counter in hot loops, with rdtsc and
 * rdtscp at sites hermit can patch to read its clock page (the compiler's
 * __rdtsc, followed by ordinary instructions) and at one it cannot (an
 * rdtsc followed by a jmp, which traps every time), interleaved with
 * CLOCK_MONOTONIC reads through the vDSO; in two threads, across a sleep,
 * in a forked child and in a program it execs (itself, "exec"). It checks
 * under hermit ("hermit") that the counter never goes back, on either
 * path, nor behind the monotonic clock (3 ticks a ns), and prints a
 * checksum of every value read. Natively it only runs: the ratio differs,
 * and two CPUs' counters may be apart.
 *
 *   tsc_sites [hermit]          the whole program
 *   tsc_sites exec [hermit]     the exec'd program's part
 */
#include "guest.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <x86intrin.h>

enum { ROUNDS = 20000 };

static int hermit;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t last_tsc, sum;
static int64_t last_mono;

static int64_t mono(void) {
	struct timespec ts;
	CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* trapped reads the counter at a site hermit leaves trapping: the jmp
 * after it cannot move to a stub. */
static uint64_t trapped(void) {
	uint32_t lo, hi;
	__asm__ volatile("rdtsc\n\tjmp 1f\n1:" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static void saw(uint64_t v, const char *how) {
	/* Natively, two CPUs' counters may be apart (a VM's): checked
	 * under hermit only, where one counter is virtual. */
	if (hermit && v <= last_tsc) {
		say("FAIL: %s went back: %llu after %llu\n", how, (unsigned long long)v, (unsigned long long)last_tsc);
		exit(1);
	}
	if (hermit && (int64_t)(v / 3) < last_mono) {
		say("FAIL: %s %llu is behind MONOTONIC %lld\n", how, (unsigned long long)v, (long long)last_mono);
		exit(1);
	}
	last_tsc = v;
	sum = sum * 31 + v;
}

static void rounds(int n) {
	for (int r = 0; r < n; r++) {
		pthread_mutex_lock(&mu);
		saw(__rdtsc(), "rdtsc");
		unsigned aux = 99;
		saw(__rdtscp(&aux), "rdtscp");
		if (hermit && aux != 0) {
			say("FAIL: rdtscp's aux is %u\n", aux);
			exit(1);
		}
		if (r % 16 == 0)
			saw(trapped(), "trapped rdtsc");
		if (r % 64 == 0) {
			int64_t m = mono();
			if (m < last_mono || (hermit && m < (int64_t)(last_tsc / 3))) {
				say("FAIL: MONOTONIC %lld after %lld, counter %llu\n", (long long)m, (long long)last_mono, (unsigned long long)last_tsc);
				exit(1);
			}
			last_mono = m;
		}
		pthread_mutex_unlock(&mu);
	}
}

static void *second(void *arg) {
	(void)arg;
	rounds(ROUNDS);
	return NULL;
}

int main(int argc, char **argv) {
	int exec = argc > 1 && strcmp(argv[1], "exec") == 0;
	hermit = strcmp(argv[argc - 1], "hermit") == 0;
	if (exec) {
		rounds(ROUNDS);
		say("exec'd: checksum %016llx\n", (unsigned long long)sum);
		return 0;
	}
	pthread_t th;
	CHECK(pthread_create(&th, NULL, second, NULL) == 0);
	rounds(ROUNDS);
	CHECK(pthread_join(th, NULL) == 0);
	say("threads: checksum %016llx\n", (unsigned long long)sum);

	/* A sleep: virtual time jumps, and so does the counter. */
	uint64_t before = __rdtsc();
	struct timespec ts = {.tv_nsec = 50 * 1000 * 1000};
	CHECK(nanosleep(&ts, NULL) == 0);
	uint64_t after = __rdtsc();
	if (hermit && (after <= before || after - before < 150000000ull)) {
		say("FAIL: across a 50 ms sleep the counter moved %llu\n", (unsigned long long)(after - before));
		return 1;
	}
	saw(after, "rdtsc after a sleep");

	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		rounds(ROUNDS);
		say("forked: checksum %016llx\n", (unsigned long long)sum);
		_exit(0);
	}
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "exec", hermit ? "hermit" : "native", (char *)NULL);
		_exit(127);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	rounds(ROUNDS);
	say("main: checksum %016llx\n", (unsigned long long)sum);
	say("tsc_sites: ok\n");
	return 0;
}
