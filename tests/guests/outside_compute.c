/* outside_compute [calls]: prints "ready", then computes until a SIGUSR1
   from outside runs its handler, which only sets a flag; then says so.
   Without an argument it makes no syscall in the loop: under hermit record
   the signal reaches the thread as it runs, at a point no replay can find
   exactly, so the replay gives it after as much CPU time, and the loop
   ends there too. With "calls" it makes a uname every 2^17 rounds (about
   every 100 us) and counts them: the recording gives the signal at a
   call, and its replay ends after as many calls. With "rounds" it makes
   no call, and prints how many rounds it made, which a replay, giving
   the signal after as much CPU time, does not repeat exactly. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
static volatile sig_atomic_t got;
static void on_usr1(int s) { (void)s; got = 1; }
int main(int argc, char **argv) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	int calls = argc > 1 && strcmp(argv[1], "calls") == 0;
	printf("ready\n");
	fflush(stdout);
	unsigned long x = 1, n = 0, made = 0;
	struct utsname u;
	while (!got) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		n++;
		if (calls && (n & ((1UL << 17) - 1)) == 0) {
			uname(&u);
			made++;
		}
	}
	if (calls)
		printf("the loop ended at SIGUSR1 after %lu calls\n", made);
	else if (argc > 1 && strcmp(argv[1], "rounds") == 0)
		printf("the loop ended at SIGUSR1 after %lu rounds\n", n);
	else
		printf("the loop ended at SIGUSR1\n");
	return x == 0;
}
