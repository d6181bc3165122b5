/* sigcount: the main thread makes calls the seccomp filter lets through
 * (mmap and munmap, which a recording stops at, then dup and close) while
 * another thread sends it SIGUSR1 200 times, yielding after each. hermit
 * counts the main thread's calls (each is a scheduling point while the
 * sender waits to run), and a signal sent meanwhile is pending when a
 * counted call is resumed: it must come at the same point of the call in
 * a run and a recording, whose stops before the call differ. It prints the
 * signals caught and the rounds the main thread made, which follow the
 * schedule.
 *
 * With "socket", getsockname on a TCP socket stands in for mmap and munmap:
 * a recording lets it run and stops at its exit to journal it, a replay
 * answers it from the journal at its seccomp stop, so the two reach the
 * counted dup by different stops (PTRACE_SYSCALL's entry stop, PTRACE_SYSEMU's
 * skip), and the signal must come after it on both, or the replay takes one
 * more turn than the recording and parts from it.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "guest.h"

static volatile sig_atomic_t got;
static volatile int done;
static pthread_t mainth;

static void on_usr1(int sig) {
	(void)sig;
	got++;
}

static void *sender(void *arg) {
	(void)arg;
	for (int i = 0; i < 200; i++) {
		CHECK(pthread_kill(mainth, SIGUSR1) == 0);
		sched_yield();
	}
	done = 1;
	return NULL;
}

int main(int argc, char **argv) {
	int sock = -1;
	if (argc > 1 && strcmp(argv[1], "socket") == 0) {
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(sock >= 0 && bind(sock, (struct sockaddr *)&a, sizeof a) == 0);
	}
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	mainth = pthread_self();
	pthread_t th;
	CHECK(pthread_create(&th, NULL, sender, NULL) == 0);
	long rounds = 0;
	while (!done) {
		if (sock >= 0) {
			struct sockaddr_in a;
			socklen_t len = sizeof a;
			CHECK(getsockname(sock, (struct sockaddr *)&a, &len) == 0);
		} else {
			void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			CHECK(p != MAP_FAILED && munmap(p, 4096) == 0);
		}
		int d = dup(1);
		CHECK(d >= 0 && close(d) == 0);
		rounds++;
	}
	CHECK(pthread_join(th, NULL) == 0);
	say("sigcount: %d signals, %ld rounds\n", (int)got, rounds);
	return 0;
}
