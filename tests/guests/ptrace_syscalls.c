/* ptrace_syscalls: a guest that traces its child's syscalls and children,
 * as strace -f does. Modes:
 *   syscall   PTRACE_SYSCALL through the child's calls: every entry-stop
 *             is followed by its exit-stop (PTRACE_GET_SYSCALL_INFO says
 *             which), the tracer skips one call and sets its result, and
 *             changes another into a different call; PTRACE_O_TRACEEXIT
 *             stops the child before it exits, with its status
 *   children  PTRACE_O_TRACEFORK and PTRACE_O_TRACECLONE: the child's new
 *             thread and process are traced from their first instruction,
 *             the tracer hears of them from event stops and reaps the
 *             exits of both (neither is its own child)
 *   step      PTRACE_SINGLESTEP through five instructions, one a syscall;
 *             PTRACE_SYSEMU_SINGLESTEP to a syscall, which it skips, the
 *             tracer giving its result; PTRACE_SYSEMU to a call, then
 *             PTRACE_SYSCALL to its exit-stop, the call not made
 *   exec      PTRACE_O_TRACEEXEC, then PTRACE_SYSCALL from the exec event
 *             stop: execve's exit-stop (rax 0), where the tracer moves the
 *             child to a syscall instruction with getppid's number and
 *             makes it run the call (as a debugger injects one), then puts
 *             its registers back and lets it run on
 */
#include "guest.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>

/* traced forks a child that asks to be traced and stops itself. */
static pid_t traced(void) {
	pid_t c = fork();
	CHECK(c >= 0);
	if (c == 0) {
		CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
		raise(SIGSTOP);
		return 0;
	}
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	return c;
}

static void syscalls(void) {
	pid_t c = traced();
	if (c == 0) {
		long u = syscall(SYS_getuid);
		long p = syscall(SYS_getpid);
		say("child: the skipped call returned %ld; the changed one, its parent: %s\n", u,
		    p == getppid() ? "yes" : "no");
		_exit(3);
	}
	CHECK(ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXIT) == 0);
	int in = 0, paired = 1, changed = 0;
	long cur = -1;
	for (;;) {
		CHECK(ptrace(PTRACE_SYSCALL, c, 0, 0) == 0);
		int st;
		CHECK(waitpid(c, &st, 0) == c);
		if (WIFEXITED(st)) {
			say("exited with %d\n", WEXITSTATUS(st));
			break;
		}
		CHECK(WIFSTOPPED(st));
		if (st >> 8 == (SIGTRAP | PTRACE_EVENT_EXIT << 8)) {
			unsigned long msg;
			CHECK(ptrace(PTRACE_GETEVENTMSG, c, 0, &msg) == 0);
			say("exit event stop: status %lu, after the entry of exit_group: %s\n", msg >> 8,
			    in && cur == SYS_exit_group ? "yes" : "no");
			continue;
		}
		CHECK(WSTOPSIG(st) == (SIGTRAP | 0x80));
		struct __ptrace_syscall_info info;
		CHECK(ptrace(PTRACE_GET_SYSCALL_INFO, c, sizeof info, &info) > 0);
		struct user_regs_struct r;
		CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
		siginfo_t si;
		CHECK(ptrace(PTRACE_GETSIGINFO, c, 0, &si) == 0);
		CHECK(si.si_signo == SIGTRAP && si.si_code == (SIGTRAP | 0x80));
		if (!in) {
			paired = paired && info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == r.orig_rax &&
			         (long long)r.rax == -ENOSYS;
			cur = (long)r.orig_rax;
			if (cur == SYS_getuid) {
				r.orig_rax = -1; /* skip it */
				CHECK(ptrace(PTRACE_SETREGS, c, 0, &r) == 0);
			} else if (cur == SYS_getpid && !changed++) {
				r.orig_rax = SYS_getppid;
				CHECK(ptrace(PTRACE_SETREGS, c, 0, &r) == 0);
			} else if (cur == SYS_exit_group) {
				say("entry of exit_group(%llu)\n", (unsigned long long)info.entry.args[0]);
			}
		} else {
			paired = paired && info.op == PTRACE_SYSCALL_INFO_EXIT;
			if (cur == SYS_getuid) {
				r.rax = 4242;
				CHECK(ptrace(PTRACE_SETREGS, c, 0, &r) == 0);
			} else if (cur == SYS_write) {
				say("the child's write returned %lld, error: %d\n", (long long)info.exit.rval, info.exit.is_error);
			}
		}
		in = !in;
	}
	say("each entry-stop followed by its exit-stop: %s\n", paired ? "yes" : "no");
}

static void *thread_main(void *arg) {
	(void)arg;
	say("child's thread runs\n");
	return NULL;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static void children(void) {
	pid_t c = traced();
	if (c == 0) {
		pthread_t th;
		CHECK(pthread_create(&th, NULL, thread_main, NULL) == 0);
		CHECK(pthread_join(th, NULL) == 0);
		pid_t g = fork();
		CHECK(g >= 0);
		if (g == 0)
			_exit(4);
		int st;
		CHECK(waitpid(g, &st, 0) == g);
		say("child reaped its own child: status %d\n", WEXITSTATUS(st));
		_exit(0);
	}
	CHECK(ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACEFORK | PTRACE_O_TRACECLONE) == 0);
	CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
	int forks = 0, clones = 0, starts = 0, nexits = 0, exits[8];
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, __WALL);
		if (w < 0) {
			CHECK(errno == ECHILD);
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			CHECK(nexits < 8);
			exits[nexits++] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			continue;
		}
		CHECK(WIFSTOPPED(st));
		int ev = st >> 16, sig = WSTOPSIG(st);
		if (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_CLONE) {
			unsigned long msg;
			CHECK(ptrace(PTRACE_GETEVENTMSG, w, 0, &msg) == 0 && msg > 0);
			ev == PTRACE_EVENT_FORK ? forks++ : clones++;
			sig = 0;
		} else if (sig == SIGSTOP && w != c) {
			/* A new tracee's first stop (it may come before its
			 * creator's event). */
			starts++;
			sig = 0;
		}
		CHECK(ptrace(PTRACE_CONT, w, 0, sig) == 0);
	}
	qsort(exits, (size_t)nexits, sizeof exits[0], cmp_int);
	char buf[64] = "";
	for (int i = 0; i < nexits; i++)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " %d", exits[i]);
	say("fork events: %d, clone events: %d, new tracees that started stopped: %d, exits reaped:%s\n", forks, clones,
	    starts, buf);
}

/* The child's code the tracer steps through: each block starts with an
 * int3 and ends at its label. */
extern char step_end[], emustep_end[];
__asm__(".text\n"
        "stepped: int3\n nop\n nop\n mov $39, %eax\n syscall\n nop\n"
        ".globl step_end\nstep_end: ret\n"
        "emustepped: int3\n nop\n mov $102, %eax\n syscall\n"
        ".globl emustep_end\nemustep_end: ret\n"
        "emulated: int3\n mov $104, %eax\n syscall\n ret\n");
extern long stepped(void), emustepped(void), emulated(void);

static void expect_trap(pid_t c, int sig) {
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st) && WSTOPSIG(st) == sig);
}

static unsigned long long rip_of(pid_t c) {
	struct user_regs_struct r;
	CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
	return r.rip;
}

static void set_rax(pid_t c, long v) {
	struct user_regs_struct r;
	CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
	say("rax at the stop: %lld\n", (long long)r.rax);
	r.rax = (unsigned long long)v;
	CHECK(ptrace(PTRACE_SETREGS, c, 0, &r) == 0);
}

static void steps(void) {
	pid_t c = traced();
	if (c == 0) {
		long pid = stepped();
		say("child: the stepped getpid returned its pid: %s\n", pid == getpid() ? "yes" : "no");
		say("child: the call skipped by SYSEMU_SINGLESTEP returned %ld\n", emustepped());
		say("child: the call skipped by SYSEMU returned %ld\n", emulated());
		_exit(0);
	}
	CHECK(ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACESYSGOOD) == 0);
	CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
	expect_trap(c, SIGTRAP);
	int n = 0;
	while (rip_of(c) != (unsigned long long)step_end) {
		CHECK(ptrace(PTRACE_SINGLESTEP, c, 0, 0) == 0);
		expect_trap(c, SIGTRAP);
		n++;
	}
	say("single steps to the end of the block: %d\n", n);
	CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
	expect_trap(c, SIGTRAP);
	for (n = 1;; n++) {
		CHECK(ptrace(PTRACE_SYSEMU_SINGLESTEP, c, 0, 0) == 0);
		int st;
		CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st));
		if (WSTOPSIG(st) == (SIGTRAP | 0x80))
			break;
		CHECK(WSTOPSIG(st) == SIGTRAP);
	}
	say("SYSEMU_SINGLESTEP reached the syscall at step %d\n", n);
	set_rax(c, 777);
	CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
	expect_trap(c, SIGTRAP);
	CHECK(ptrace(PTRACE_SYSEMU, c, 0, 0) == 0);
	expect_trap(c, SIGTRAP | 0x80);
	CHECK(ptrace(PTRACE_SYSCALL, c, 0, 0) == 0);
	expect_trap(c, SIGTRAP | 0x80);
	set_rax(c, 888);
	CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st));
	say("exited with %d\n", WEXITSTATUS(st));
}

/* injected_syscall is a syscall instruction the tracer points its
 * child at. */
extern char injected_syscall[];
__asm__(".text\n.globl injected_syscall\ninjected_syscall: syscall\n");

/* image_base returns the lowest address in /proc/PID/maps (this PIE's
 * first mapping): the exec'd child's load address differs from the
 * tracer's when ASLR is on. */
static unsigned long image_base(const char *maps) {
	FILE *f = fopen(maps, "r");
	CHECK(f != NULL);
	unsigned long base = 0;
	CHECK(fscanf(f, "%lx", &base) == 1);
	fclose(f);
	return base;
}

static void execs(const char *self) {
	pid_t c = traced();
	if (c == 0) {
		execl(self, self, "execd", (char *)0);
		_exit(127);
	}
	CHECK(ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC) == 0);
	CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
	int st;
	CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st) && st >> 8 == (SIGTRAP | PTRACE_EVENT_EXEC << 8));
	CHECK(ptrace(PTRACE_SYSCALL, c, 0, 0) == 0);
	expect_trap(c, SIGTRAP | 0x80);
	struct __ptrace_syscall_info info;
	CHECK(ptrace(PTRACE_GET_SYSCALL_INFO, c, sizeof info, &info) > 0);
	struct user_regs_struct saved, r;
	CHECK(ptrace(PTRACE_GETREGS, c, 0, &saved) == 0);
	say("execve's exit-stop: %s, rax %lld, orig_rax execve: %s\n",
	    info.op == PTRACE_SYSCALL_INFO_EXIT ? "exit" : "not an exit", (long long)saved.rax,
	    saved.orig_rax == SYS_execve ? "yes" : "no");
	char maps[64];
	snprintf(maps, sizeof maps, "/proc/%d/maps", c);
	r = saved;
	r.rip = (unsigned long)injected_syscall - image_base("/proc/self/maps") + image_base(maps);
	r.rax = SYS_getppid;
	CHECK(ptrace(PTRACE_SETREGS, c, 0, &r) == 0);
	CHECK(ptrace(PTRACE_SYSCALL, c, 0, 0) == 0);
	expect_trap(c, SIGTRAP | 0x80);
	CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
	say("injected call's entry: getppid: %s\n", r.orig_rax == SYS_getppid ? "yes" : "no");
	CHECK(ptrace(PTRACE_SYSCALL, c, 0, 0) == 0);
	expect_trap(c, SIGTRAP | 0x80);
	CHECK(ptrace(PTRACE_GETREGS, c, 0, &r) == 0);
	say("injected getppid returned the tracer's pid: %s\n", (long long)r.rax == getpid() ? "yes" : "no");
	CHECK(ptrace(PTRACE_SETREGS, c, 0, &saved) == 0);
	CHECK(ptrace(PTRACE_CONT, c, 0, 0) == 0);
	CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st));
	say("exited with %d\n", WEXITSTATUS(st));
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	if (!strcmp(argv[1], "execd")) {
		say("the exec'd child runs\n");
		return 5;
	}
	if (!strcmp(argv[1], "exec")) {
		execs(argv[0]);
		return 0;
	}
	if (!strcmp(argv[1], "syscall"))
		syscalls();
	else if (!strcmp(argv[1], "children"))
		children();
	else if (!strcmp(argv[1], "step"))
		steps();
	else {
		say("unknown mode %s\n", argv[1]);
		return 2;
	}
	return 0;
}
