// cputimers: timers on CPU-time clocks (ITIMER_PROF, ITIMER_VIRTUAL, a
// POSIX timer on the thread's CPU clock) count the time the process runs,
// not the time it sleeps: none fires across a 1 s sleep, and each fires
// once the process has run for long enough.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t prof, virt, posix, profCode = -1;

static void on_prof(int sig, siginfo_t *si, void *uc) {
	(void)sig;
	(void)uc;
	prof++;
	profCode = si->si_code;
}
static void on_virt(int sig) { (void)sig; virt++; }
static void on_posix(int sig) { (void)sig; posix++; }

int main(void) {
	struct sigaction sa = {.sa_sigaction = on_prof, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigaction(SIGPROF, &sa, NULL);
	signal(SIGVTALRM, on_virt);
	signal(SIGUSR1, on_posix);
	struct itimerval iv = {{0, 10000}, {0, 10000}};
	setitimer(ITIMER_PROF, &iv, NULL);
	setitimer(ITIMER_VIRTUAL, &iv, NULL);
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
	timer_t id;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &id) != 0) {
		perror("timer_create");
		return 1;
	}
	struct itimerspec its = {{0, 10000000}, {0, 10000000}};
	timer_settime(id, 0, &its, NULL);

	struct timespec ts = {1, 0};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
	}
	printf("across a 1 s sleep: %d SIGPROF, %d SIGVTALRM, %d timer signals\n", prof, virt, posix);
	getitimer(ITIMER_PROF, &iv);
	timer_gettime(id, &its);
	// (The kernel samples CPU timers at its ticks: what is left is not
	// exact, natively.)
	printf("still armed: ITIMER_PROF %s, the thread's timer %s\n", iv.it_value.tv_usec > 0 ? "yes" : "no",
	       its.it_value.tv_nsec > 0 ? "yes" : "no");

	// Run (user time and calls) until each has fired twice.
	volatile unsigned long x = 0;
	for (long n = 0; (prof < 2 || virt < 2 || posix < 2) && n < 100000000; n++) {
		for (int i = 0; i < 100; i++)
			x += i;
		getppid();
	}
	printf("running: each fired at least twice: %s\n", prof >= 2 && virt >= 2 && posix >= 2 ? "yes" : "no");
	// From the kernel, as Go's profiler checks.
	printf("SIGPROF's si_code: %s\n", profCode == SI_KERNEL ? "SI_KERNEL" : profCode == SI_USER ? "SI_USER" : "other");
	return 0;
}
