/* fault_handled: a fault that the program's handler recovers from, again
 * and again at one instruction with no syscall between, as a Go program's
 * nil dereferences that become recovered panics do. Natively (and under
 * hermit) each fault runs the handler, which jumps back out.
 */
#include "guest.h"

#include <setjmp.h>
#include <signal.h>

static sigjmp_buf env;
static volatile int handled;

static void on_segv(int sig) {
	(void)sig;
	handled++;
	siglongjmp(env, 1);
}

/* poke faults at the same instruction every time it is given NULL. */
__attribute__((noinline)) static void poke(volatile int *p) { *p = 1; }

int main(void) {
	struct sigaction sa = {.sa_handler = on_segv};
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
	volatile int *volatile nowhere = NULL;
	for (volatile int i = 0; i < 5; i++)
		if (sigsetjmp(env, 1) == 0)
			poke(nowhere);
	say("recovered from %d faults at one instruction\n", handled);
	return 0;
}
