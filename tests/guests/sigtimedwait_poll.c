// sigtimedwait_poll: a blocked signal already pending is taken by
// sigtimedwait with a zero timeout, which polls; a second poll finds none.
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
	sigset_t s, p;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, 0);
	kill(getpid(), SIGUSR1);
	sigpending(&p);
	printf("pending: %d\n", sigismember(&p, SIGUSR1));
	struct timespec zero = {0, 0};
	siginfo_t si;
	printf("first poll: %d\n", sigtimedwait(&s, &si, &zero));
	printf("second poll: %d\n", sigtimedwait(&s, &si, &zero));
	return 0;
}
