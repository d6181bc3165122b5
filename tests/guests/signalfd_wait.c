/* signalfd_wait MODE: a child blocks SIGURG, makes a signalfd for it and
   waits until it is readable, by poll (MODE p) or epoll_wait (e); the
   parent sends SIGURG once the child is waiting. MODE outside: see
   outside(). PostgreSQL's
   latches wait so. Under hermit, a poll or epoll of a signalfd asked
   about hermit's own signals, never the guest's: "the guest is
   deadlocked". */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
/* outside: the process waits in epoll_wait on a signalfd for a SIGINT
   from outside the guest (kill from a shell), having said "ready". */
static int outside(void) {
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGINT);
	sigprocmask(SIG_BLOCK, &m, NULL);
	int sfd = signalfd(-1, &m, SFD_NONBLOCK), ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN};
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	printf("ready\n");
	fflush(stdout);
	int n = epoll_wait(ep, &ev, 1, -1);
	struct signalfd_siginfo si;
	ssize_t r = read(sfd, &si, sizeof si);
	printf("the wait returned %d; read %zd bytes: signal %u\n", n, r, r > 0 ? si.ssi_signo : 0);
	return 0;
}

int main(int argc, char **argv) {
	char mode = argc > 1 ? argv[1][0] : 'p';
	if (mode == 'o')
		return outside();
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGURG);
	sigprocmask(SIG_BLOCK, &m, NULL);
	int ready[2];
	if (pipe(ready) != 0)
		return 2;
	pid_t w = fork();
	if (w == 0) {
		int sfd = signalfd(-1, &m, SFD_NONBLOCK);
		long n = -1;
		if (mode == 'e') {
			int ep = epoll_create1(0);
			struct epoll_event ev = {.events = EPOLLIN};
			epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
			if (write(ready[1], "r", 1) != 1)
				_exit(2);
			n = epoll_wait(ep, &ev, 1, -1);
		} else {
			struct pollfd p = {sfd, POLLIN, 0};
			if (write(ready[1], "r", 1) != 1)
				_exit(2);
			n = poll(&p, 1, -1);
		}
		struct signalfd_siginfo si;
		ssize_t r = read(sfd, &si, sizeof si);
		printf("the wait returned %ld; read %zd bytes: signal %u\n", n, r, r > 0 ? si.ssi_signo : 0);
		fflush(stdout);
		_exit(0);
	}
	char c;
	if (read(ready[0], &c, 1) != 1)
		return 2;
	usleep(10000);
	kill(w, SIGURG);
	int st;
	waitpid(w, &st, 0);
	printf("the child exited with %d\n", WEXITSTATUS(st));
	return 0;
}
