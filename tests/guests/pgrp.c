/* pgrp: prints its process group and session as getpgrp, getpgid and
   getsid give them, then its child's after setpgid(0, 0). Under hermit
   the first two belong to hermit's group (0: its leader is outside the
   guest's pid namespace) in a run and a recording; a replay's guest is in
   a group of its own, so the recording's answers are kept. (bash with
   set -m decides from getpgrp whether a child waits on its pipe.) */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("pgrp=%d pgid=%d sid=%d\n", getpgrp(), getpgid(0), getsid(0));
	pid_t c = fork();
	if (c == 0) {
		setpgid(0, 0);
		printf("child: pgrp is its pid: %d\n", getpgrp() == getpid());
		_exit(0);
	}
	waitpid(c, NULL, 0);
	printf("child's group from the parent: %d\n", getpgid(c) < 0);
	return 0;
}
