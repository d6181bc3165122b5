/* namespaces: unshare and clone with namespace flags, a user namespace
 * among them. The namespaces are made again in the replay, with the same
 * results, and the user namespace's uid map that the guest writes is
 * written again.
 */
#include "guest.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

static const char *err(int r) { return r < 0 ? strerror(errno) : "ok"; }

static void writefile(const char *path, const char *s) {
	int fd = open(path, O_WRONLY);
	CHECK(fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s) && close(fd) == 0);
}

int main(void) {
	say("unshare uts, ipc, mount: %s\n", err(unshare(CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNS)));
	say("sethostname: %s\n", err(sethostname("inner", 5)));
	struct utsname u;
	CHECK(uname(&u) == 0);
	say("nodename %s\n", u.nodename);
	say("unshare net: %s\n", err(unshare(CLONE_NEWNET)));
	int st;
	pid_t p = syscall(SYS_clone, CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNS | CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0);
	CHECK(p >= 0);
	if (p == 0) {
		say("clone child: sethostname %s\n", err(sethostname("kid", 3)));
		_exit(5);
	}
	CHECK(waitpid(p, &st, 0) == p);
	say("clone child exited %d\n", WEXITSTATUS(st));
	/* A user namespace: the kernel refuses one to a chrooted process, so
	 * a replay must not enter its root by chroot. */
	p = fork();
	CHECK(p >= 0);
	if (p == 0) {
		uid_t outer = getuid();
		gid_t outerg = getgid();
		int r = unshare(CLONE_NEWUSER);
		say("unshare user: %s, uid %d\n", err(r), (int)getuid());
		/* Mapping its uid in the new namespace makes it root there, and
		 * lets it make a namespace inside: the replay must map it too. */
		writefile("/proc/self/setgroups", "deny");
		char map[32];
		snprintf(map, sizeof map, "0 %d 1", (int)outer);
		writefile("/proc/self/uid_map", map);
		snprintf(map, sizeof map, "0 %d 1", (int)outerg);
		writefile("/proc/self/gid_map", map);
		int uid = (int)getuid();
		say("uid_map and gid_map written: uid %d; a user namespace inside: %s\n", uid, err(unshare(CLONE_NEWUSER)));
		_exit(0);
	}
	CHECK(waitpid(p, &st, 0) == p);
	say("unshare pid: %s\n", err(unshare(CLONE_NEWPID)));
	/* Its first child is its init: the last process made here. */
	p = fork();
	CHECK(p >= 0);
	if (p == 0) {
		say("first child of the new pid namespace: pid %d\n", getpid());
		_exit(4);
	}
	CHECK(waitpid(p, &st, 0) == p);
	say("it exited %d\n", WEXITSTATUS(st));
	return 0;
}
