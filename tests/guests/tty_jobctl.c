/* tty_jobctl: a terminal's job control. A session leader makes a pty's
 * slave its controlling terminal and asks for TOSTOP; a child in a background
 * process group that changes the terminal's settings is stopped by the
 * SIGTTOU the kernel sends, one that reads from it by SIGTTIN. The
 * kernel's signals come from the terminal, which replay does not have. */
#include "guest.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>

static void background(int fd, int reads) {
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		CHECK(setpgid(0, 0) == 0);
		if (reads) {
			char b;
			(void)read(fd, &b, 1);
		} else {
			struct termios tios;
			CHECK(tcgetattr(fd, &tios) == 0);
			tios.c_lflag &= ~ECHO;
			(void)tcsetattr(fd, TCSANOW, &tios);
		}
		_exit(5);
	}
	int st;
	CHECK(waitpid(c, &st, WUNTRACED) == c);
	CHECK(WIFSTOPPED(st));
	say("background %s: stopped by %s\n", reads ? "read" : "tcsetattr", strsignal(WSTOPSIG(st)));
	CHECK(kill(c, SIGKILL) == 0);
	CHECK(waitpid(c, &st, 0) == c && WIFSIGNALED(st));
}

int main(void) {
	pid_t leader = fork();
	CHECK(leader >= 0);
	if (leader == 0) {
		CHECK(setsid() == getpid());
		int m = posix_openpt(O_RDWR | O_NOCTTY);
		CHECK(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
		int fd = open(ptsname(m), O_RDWR | O_NOCTTY);
		CHECK(fd >= 0);
		CHECK(ioctl(fd, TIOCSCTTY, 0) == 0);
		CHECK(tcsetpgrp(fd, getpid()) == 0);
		struct termios tios;
		CHECK(tcgetattr(fd, &tios) == 0);
		tios.c_lflag |= TOSTOP;
		CHECK(tcsetattr(fd, TCSANOW, &tios) == 0);
		background(fd, 0);
		background(fd, 1);
		_exit(0);
	}
	int st;
	CHECK(waitpid(leader, &st, 0) == leader && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	say("session leader exited\n");
	return 0;
}
