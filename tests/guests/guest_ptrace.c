/* guest_ptrace: a guest that is itself a tracer, as debuggers, strace and
 * crash handlers are. Modes:
 *   traceme     the child asks to be traced and stops itself; the parent
 *               sees the stop, reads and writes the child's memory, reads
 *               its registers, continues it and reaps its exit
 *   breakpoint  the parent plants an int3 in the child's code, sees the
 *               SIGTRAP, rewinds the child over it and lets it go on
 *   signal      a signal the child gets stops it first; the parent passes
 *               one on (the child's handler runs) and suppresses another
 *   attach      the parent attaches to a child that waits in pause(),
 *               sees the SIGSTOP, detaches, and kills it
 *   seize       PTRACE_SEIZE, then PTRACE_INTERRUPT of a waiting child
 *   groupstop   a SIGSTOP to a seized child that waits stops it for its
 *               tracer, which passes it on: the group stop is reported too,
 *               and lasts, continued or listened to, until a SIGCONT
 *   seizestop   a SIGSTOP to a child whose two threads wait (one sleeps,
 *               one joins it), then at once, without waiting, the parent
 *               seizes the sleeping thread, which reports its group stop,
 *               continues it and interrupts it
 *   exec        a traced child's execve stops it with a SIGTRAP
 *   seccomp     PTRACE_O_TRACESECCOMP, which hermit does not emulate
 * (ptrace_syscalls.c has syscall-stops and the tracing of new children.)
 */
#include "guest.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

static volatile long secret = 42;
static volatile sig_atomic_t handled;

static void on_usr1(int sig) { handled = sig; }

__attribute__((noinline)) static void target(void) { say("target ran\n"); }

static void expect_stop(pid_t c, int sig) {
	int st;
	CHECK(waitpid(c, &st, 0) == c);
	CHECK(WIFSTOPPED(st));
	say("stopped by signal %d, event %d\n", WSTOPSIG(st), st >> 16);
	CHECK(WSTOPSIG(st) == sig);
}

static void expect_exit(pid_t c) {
	int st;
	CHECK(waitpid(c, &st, 0) == c);
	if (WIFEXITED(st))
		say("exited with %d\n", WEXITSTATUS(st));
	else
		say("killed by signal %d\n", WTERMSIG(st));
}

/* traced forks a child that asks to be traced and stops itself. */
static pid_t traced(void) {
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
		raise(SIGSTOP);
	}
	return c;
}

static void *sleeper(void *arg) {
	pid_t tid = (pid_t)syscall(SYS_gettid);
	CHECK(write(*(int *)arg, &tid, sizeof tid) == sizeof tid);
	sleep(1000);
	return NULL;
}

static void seize_stopped(void) {
	int p[2];
	CHECK(pipe(p) == 0);
	pid_t c = fork();
	if (c == 0) {
		pthread_t th;
		CHECK(pthread_create(&th, NULL, sleeper, &p[1]) == 0);
		pthread_join(th, NULL);
		_exit(7);
	}
	pid_t tid;
	CHECK(read(p[0], &tid, sizeof tid) == sizeof tid);
	sched_yield();
	CHECK(syscall(SYS_tgkill, c, c, SIGSTOP) == 0);
	sched_yield();
	CHECK(ptrace(PTRACE_SEIZE, tid, 0, 0) == 0);
	int st;
	CHECK(waitpid(tid, &st, __WALL) == tid && WIFSTOPPED(st));
	say("seized thread: stopped by signal %d\n", WSTOPSIG(st));
	struct user_regs_struct r;
	CHECK(ptrace(PTRACE_GETREGS, tid, 0, &r) == 0);
	CHECK(ptrace(PTRACE_CONT, tid, 0, 0) == 0);
	sched_yield();
	CHECK(ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0);
	CHECK(waitpid(tid, &st, __WALL) == tid && WIFSTOPPED(st));
	say("interrupted: stopped by signal %d\n", WSTOPSIG(st));
	CHECK(kill(c, SIGKILL) == 0);
	/* The traced thread's end is its tracer's to reap first. */
	CHECK(waitpid(tid, &st, __WALL) == tid && WIFSIGNALED(st));
	CHECK(waitpid(c, &st, 0) == c && WIFSIGNALED(st));
	say("child killed by signal %d\n", WTERMSIG(st));
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	const char *m = argv[1];
	if (!strcmp(m, "exec-child")) {
		say("the exec'd child runs\n");
		return 0;
	}
	pid_t c;
	if (!strcmp(m, "traceme")) {
		if ((c = traced()) == 0) {
			say("child: secret is %ld\n", secret);
			_exit(7);
		}
		expect_stop(c, SIGSTOP);
		errno = 0;
		long v = ptrace(PTRACE_PEEKDATA, c, &secret, 0);
		CHECK(errno == 0);
		say("peek: %ld\n", v);
		CHECK(ptrace(PTRACE_POKEDATA, c, &secret, (void *)99L) == 0);
		struct user_regs_struct r;
		CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
		say("registers read: %s\n", r.rip != 0 && r.rsp != 0 ? "yes" : "no");
		CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
		expect_exit(c);
	} else if (!strcmp(m, "breakpoint")) {
		if ((c = traced()) == 0) {
			target();
			_exit(0);
		}
		expect_stop(c, SIGSTOP);
		unsigned long at = (unsigned long)target;
		long orig = ptrace(PTRACE_PEEKTEXT, c, at, 0);
		CHECK(ptrace(PTRACE_POKETEXT, c, at, (void *)((orig & ~0xffL) | 0xcc)) == 0);
		CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
		expect_stop(c, SIGTRAP);
		struct user_regs_struct r;
		CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
		say("stopped just past the breakpoint: %s\n", r.rip == at + 1 ? "yes" : "no");
		CHECK(ptrace(PTRACE_POKETEXT, c, at, (void *)orig) == 0);
		r.rip = at;
		CHECK(ptrace(PTRACE_SETREGS, c, 0, &r) == 0);
		CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
		expect_exit(c);
	} else if (!strcmp(m, "signal")) {
		if ((c = traced()) == 0) {
			signal(SIGUSR1, on_usr1);
			raise(SIGUSR1);
			say("child: handler saw signal %d\n", (int)handled);
			raise(SIGUSR2);
			say("child: SIGUSR2 was suppressed\n");
			_exit(0);
		}
		expect_stop(c, SIGSTOP);
		CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
		expect_stop(c, SIGUSR1);
		siginfo_t si;
		CHECK(ptrace(PTRACE_GETSIGINFO, c, 0, &si) == 0);
		say("siginfo: signal %d\n", si.si_signo);
		CHECK(ptrace(PTRACE_CONT, c, 0, (void *)SIGUSR1) == 0);
		expect_stop(c, SIGUSR2);
		CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
		expect_exit(c);
	} else if (!strcmp(m, "attach") || !strcmp(m, "seize") || !strcmp(m, "groupstop")) {
		int p[2];
		CHECK(pipe(p) == 0);
		if ((c = fork()) == 0) {
			CHECK(write(p[1], "r", 1) == 1);
			for (;;)
				pause();
		}
		char b;
		CHECK(read(p[0], &b, 1) == 1);
		if (!strcmp(m, "groupstop")) {
			CHECK(ptrace(PTRACE_SEIZE, c, 0, 0) == 0);
			CHECK(kill(c, SIGSTOP) == 0);
			expect_stop(c, SIGSTOP);
			CHECK(ptrace(PTRACE_CONT, c, 0, (void *)SIGSTOP) == 0);
			expect_stop(c, SIGSTOP);
			/* Continued, it is still in the group stop, which an
			 * interrupt reports; listened to, it waits for a SIGCONT,
			 * whose stop comes next. */
			CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
			CHECK(ptrace(PTRACE_INTERRUPT, c, 0, 0) == 0);
			expect_stop(c, SIGSTOP);
			CHECK(ptrace(PTRACE_LISTEN, c, 0, 0) == 0);
			CHECK(kill(c, SIGCONT) == 0);
			int st;
			CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st));
			say("after SIGCONT: stopped by signal %d, event %d\n", WSTOPSIG(st), st >> 16);
			CHECK(kill(c, SIGKILL) == 0);
			expect_exit(c);
			return 0;
		}
		if (!strcmp(m, "attach")) {
			CHECK(ptrace(PTRACE_ATTACH, c, 0, 0) == 0);
			expect_stop(c, SIGSTOP);
			CHECK(ptrace(PTRACE_DETACH, c, 0, 0) == 0);
		} else {
			CHECK(ptrace(PTRACE_SEIZE, c, 0, 0) == 0);
			CHECK(ptrace(PTRACE_INTERRUPT, c, 0, 0) == 0);
			expect_stop(c, SIGTRAP);
			CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
			/* Still traced: the SIGTERM stops it first. */
			CHECK(kill(c, SIGTERM) == 0);
			expect_stop(c, SIGTERM);
			CHECK(ptrace(PTRACE_CONT, c, 0, (void *)SIGTERM) == 0);
			expect_exit(c);
			return 0;
		}
		CHECK(kill(c, SIGTERM) == 0);
		expect_exit(c);
	} else if (!strcmp(m, "seizestop")) {
		seize_stopped();
	} else if (!strcmp(m, "exec")) {
		if ((c = traced()) == 0) {
			execl("/proc/self/exe", argv[0], "exec-child", (char *)NULL);
			_exit(5);
		}
		expect_stop(c, SIGSTOP);
		CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
		expect_stop(c, SIGTRAP);
		CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
		expect_exit(c);
	} else if (!strcmp(m, "seccomp")) {
		if ((c = traced()) == 0)
			_exit(0);
		expect_stop(c, SIGSTOP);
		long r = ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACESECCOMP);
		say("PTRACE_O_TRACESECCOMP: %ld%s\n", r, r == -1 && errno == EIO ? " EIO" : "");
		if (r == 0)
			return 0; /* natively: hermit's refusal is all this mode shows */
		CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
		expect_exit(c);
	} else {
		say("unknown mode %s\n", m);
		return 2;
	}
	return 0;
}
