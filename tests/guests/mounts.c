/* mounts: a program that mounts things in its own mount namespace (hermit
 * gives it one): a tmpfs, a bind mount of a directory it made and of the
 * host directory argv[2], a remount, a propagation change, a tmpfs through
 * the new mount API, and the unmounts. Mode "selfbind" binds its own
 * program over an empty file in a tmpfs, opens it O_PATH, unmounts it and
 * runs it with execveat (the copy prints what it was started as). Modes
 * "fsopen" and "open_tree" do what hermit cannot replay: a device's
 * filesystem through the new API, a copy of a host directory's mount.
 */
#include "guest.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifndef FSCONFIG_CMD_CREATE
#define FSCONFIG_CMD_CREATE 6
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 4
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif

static const char *err(int r) { return r < 0 ? strerror(errno) : "ok"; }

/* show prints the first line of file, or why it cannot be read. */
static void show(const char *file) {
	char buf[64] = {0};
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		say("%s: %s\n", file, strerror(errno));
		return;
	}
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	say("%s: %zd %s", file, n, buf);
}

static void make(const char *file, const char *text) {
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

int main(int argc, char **argv) {
	CHECK(argc == 3);
	const char *base = argv[1]; /* a fresh directory for mount points */
	char a[256], b[256], c[256], d[256], f[300];
	snprintf(a, sizeof a, "%s/tmpfs", base);
	snprintf(b, sizeof b, "%s/made", base);
	snprintf(c, sizeof c, "%s/bound", base);
	snprintf(d, sizeof d, "%s/host", base);
	if (!strcmp(argv[2], "incopy")) {
		say("the bound copy runs as %s\n", argv[0]);
		return 0;
	}
	if (!strcmp(argv[2], "selfbind")) {
		char self[PATH_MAX], copy[300];
		CHECK(realpath(argv[0], self) != NULL);
		CHECK(mkdir(a, 0755) == 0);
		say("mount tmpfs: %s\n", err(mount("none", a, "tmpfs", 0, NULL)));
		snprintf(copy, sizeof copy, "%s/copy", a);
		int fd = open(copy, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
		CHECK(fd >= 0);
		close(fd);
		say("bind itself over an empty file: %s\n", err(mount(self, copy, NULL, MS_BIND, NULL)));
		int path = open(copy, O_PATH | O_CLOEXEC);
		CHECK(path >= 0);
		say("umount the bind: %s\n", err(umount2(copy, MNT_DETACH)));
		char *const args[] = {"copy", (char *)base, "incopy", NULL};
		syscall(SYS_execveat, path, "", args, environ, AT_EMPTY_PATH);
		say("execveat: %s\n", strerror(errno));
		return 1;
	}
	if (!strcmp(argv[2], "fsopen")) {
		int fs = syscall(SYS_fsopen, "ext4", 0);
		say("fsopen ext4: %s\n", err(fs));
		return 0;
	}
	if (!strcmp(argv[2], "open_tree")) {
		int t = syscall(SYS_open_tree, AT_FDCWD, "/usr", OPEN_TREE_CLONE | O_CLOEXEC);
		say("open_tree /usr: %s\n", err(t));
		return 0;
	}
	CHECK(mkdir(a, 0755) == 0 && mkdir(b, 0755) == 0 && mkdir(c, 0755) == 0 && mkdir(d, 0755) == 0);
	say("make-rprivate /: %s\n", err(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)));

	say("mount tmpfs: %s\n", err(mount("none", a, "tmpfs", 0, "size=1m,mode=0710")));
	snprintf(f, sizeof f, "%s/file", a);
	make(f, "in the tmpfs\n");
	show(f);
	struct stat st;
	CHECK(stat(a, &st) == 0);
	say("tmpfs root mode %o\n", st.st_mode & 07777);
	say("remount read-only: %s\n", err(mount(NULL, a, NULL, MS_REMOUNT | MS_RDONLY, "size=1m")));
	say("create on read-only: %s\n", err(open(f, O_WRONLY | O_TRUNC)));
	say("umount tmpfs: %s\n", err(umount2(a, 0)));
	show(f);

	snprintf(f, sizeof f, "%s/made-file", b);
	make(f, "made by the guest\n");
	say("bind made: %s\n", err(mount(b, c, NULL, MS_BIND, NULL)));
	snprintf(f, sizeof f, "%s/made-file", c);
	show(f);
	say("umount bind: %s\n", err(umount2(c, MNT_DETACH)));
	show(f);

	say("bind host: %s\n", err(mount("/etc", d, NULL, MS_BIND | MS_REC, NULL)));
	snprintf(f, sizeof f, "%s/hostname-of-hermit-test", d);
	show(f);
	snprintf(f, sizeof f, "%s/passwd", d);
	show(f);
	say("umount host bind: %s\n", err(umount2(d, 0)));
	show(f);

	int fs = syscall(SYS_fsopen, "tmpfs", 0);
	say("fsopen tmpfs: %s\n", err(fs));
	say("fsconfig create: %s\n", err(syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0)));
	int m = syscall(SYS_fsmount, fs, 0, 0);
	say("fsmount: %s\n", err(m));
	say("move_mount: %s\n", err(syscall(SYS_move_mount, m, "", AT_FDCWD, a, MOVE_MOUNT_F_EMPTY_PATH)));
	snprintf(f, sizeof f, "%s/new-api", a);
	make(f, "through the new mount API\n");
	show(f);
	int t = syscall(SYS_open_tree, AT_FDCWD, a, OPEN_TREE_CLONE | O_CLOEXEC);
	say("open_tree clone of its own mount: %s\n", err(t));
	say("umount new: %s\n", err(umount2(a, MNT_DETACH)));
	return 0;
}
