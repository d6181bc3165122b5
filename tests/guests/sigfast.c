/* sigfast: signals sent from outside land while the program runs in
 * hermit's code in the guest: futex wakes of a word nobody waits on
 * (answered by the fast page) and clock reads (the clock code in the
 * vDSO), in a loop without a syscall. The SIGUSR1 handler, which makes
 * such calls too, counts the signals that interrupted the program inside
 * the fast page (0x7fffc0003000-0x7fffc0005000) or the vDSO. Under
 * hermit, none may: hermit steps the thread out of its code before the
 * handler runs (detcore/fastio.go: leaveFastCode), so the handler never
 * finds the page's words half written. Natively the vDSO is where the
 * clock is read, and many do. Prints "ready" once the handler is set,
 * then runs until argv[1] signals came (more, which the sender sends
 * until the program has ended, are not counted). With "rt" (argv[2]), the handler
 * counts SIGRTMIN instead, which queue (each one sent is delivered), and
 * the program runs until SIGRTMIN+1, delivered after every SIGRTMIN sent
 * before it: hermit lost a signal that came while it stepped a thread
 * out of its code for the one before.
 */
#include "guest.h"

#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>

static int word;
static volatile long got, inside, stop, want = -1;
static unsigned long vdso_lo, vdso_hi;

static void onusr1(int sig, siginfo_t *si, void *ctx) {
	(void)sig;
	(void)si;
	if (want >= 0 && got >= want)
		return; /* sent before the sender saw the end: not counted */
	unsigned long ip = ((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
	if ((ip >= 0x7fffc0003000UL && ip < 0x7fffc0005000UL) || (ip >= vdso_lo && ip < vdso_hi))
		inside++;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	got++;
}

static void onstop(int sig) {
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv) {
	int rt = argc > 2 && !strcmp(argv[2], "rt");
	if (!rt)
		want = argc > 1 ? atol(argv[1]) : 100;
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	while (maps && fgets(line, sizeof line, maps))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%lx-%lx", &vdso_lo, &vdso_hi);
	if (maps)
		fclose(maps);
	if (vdso_lo == 0)
		return 2;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = onusr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (sigaction(rt ? SIGRTMIN : SIGUSR1, &sa, NULL) != 0 || signal(SIGRTMIN + 1, onstop) == SIG_ERR)
		return 1;
	printf("ready\n");
	fflush(stdout);
	struct timespec ts;
	for (long i = 0; rt ? !stop : got < want; i++) {
		syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		clock_gettime(CLOCK_MONOTONIC, &ts);
	}
	printf("%ld signals, %ld inside hermit's code\n", (long)got, (long)inside);
	return 0;
}
