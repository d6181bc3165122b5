// The guest's private /tmp (tmpSpec in tmp.go says what it shows).
//
// It is an overlay whose lower layer is the host's /tmp and whose upper
// layer is a fresh tmpfs, so that nothing a run writes there reaches the
// host or the next run. Of the host's entries it shows those spec names.
// Where the kernel lets us write overlayfs's trusted xattrs (root), the
// guest's /tmp is a directory of the upper layer that exists nowhere
// below: each named entry in it points down to the host's (a directory
// by a redirect, a file by a metacopy: the data stays below until a write
// copies it up), and nothing else of the host's shows, not even what
// other programs make there while the run goes on. Elsewhere (a user
// namespace) whiteouts in the upper layer hide the entries not named that
// the host's /tmp holds when the run starts.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "launcher.h"

// The guest's /tmp in the view's upper layer.
#define VIEW "/tmp/v/.hermit-tmp"

// tmp_shown says whether spec ("/"-separated names or globs) shows the
// host's /tmp entry name.
static int tmp_shown(const char *spec, const char *name) {
	size_t n = strlen(name);
	char pat[4096];
	while (*spec) {
		const char *end = strchrnul(spec, '/');
		size_t l = (size_t)(end - spec);
		if (l == n && memcmp(spec, name, n) == 0) return 1;
		if (l < sizeof pat) {
			memcpy(pat, spec, l);
			pat[l] = 0;
			if (fnmatch(pat, name, FNM_PERIOD) == 0) return 1;
		}
		spec = *end ? end + 1 : end;
	}
	return 0;
}

// list_tmp calls fn for each entry of the host's /tmp (lower, an O_PATH
// descriptor) that spec shows, or, with hidden, does not show. It returns
// 0, or -1 with the first error fn or the listing met in errno.
static int list_tmp(int lower, const char *spec, int hidden, int (*fn)(int lower, const char *name)) {
	int fd = openat(lower, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		int err = errno;
		if (fd >= 0) close(fd);
		errno = err;
		return -1;
	}
	int err = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
		if (tmp_shown(spec, e->d_name) != hidden && fn(lower, e->d_name) < 0 && !err) err = errno;
	}
	closedir(d);
	errno = err;
	return err ? -1 : 0;
}

// point_down makes, in the view, an entry that shows the host's /tmp/name:
// a directory by a redirect, a file by a metacopy (both read by overlayfs
// only when mounted with redirect_dir=on and metacopy=on), a symbolic
// link or node by a copy; each with the host's owner, mode and times.
static int point_down(int lower, const char *name) {
	struct stat st;
	if (fstatat(lower, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return errno == ENOENT ? 0 : -1;
	char path[sizeof VIEW + 256], redirect[258];
	snprintf(path, sizeof path, "%s/%s", VIEW, name);
	snprintf(redirect, sizeof redirect, "/%s", name);
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR:
		if (mkdir(path, 0700) < 0 ||
		    setxattr(path, "trusted.overlay.redirect", redirect, strlen(redirect), 0) < 0)
			return -1;
		break;
	case S_IFREG: {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) return -1;
		int bad = ftruncate(fd, st.st_size) < 0 ||
			  fsetxattr(fd, "trusted.overlay.metacopy", "", 0, 0) < 0 ||
			  fsetxattr(fd, "trusted.overlay.redirect", redirect, strlen(redirect), 0) < 0;
		close(fd);
		if (bad) return -1;
		break;
	}
	case S_IFLNK: {
		char target[4096];
		ssize_t n = readlinkat(lower, name, target, sizeof target - 1);
		if (n < 0) return -1;
		target[n] = 0;
		if (symlink(target, path) < 0) return -1;
		break;
	}
	default:
		// A FIFO or socket (which cannot be reached through an
		// overlay) or a device node: a copy.
		if (mknod(path, st.st_mode, st.st_rdev) < 0) return -1;
	}
	struct timespec times[2] = {st.st_atim, st.st_mtim};
	if (lchown(path, st.st_uid, st.st_gid) < 0 ||
	    (!S_ISLNK(st.st_mode) && chmod(path, st.st_mode & 07777) < 0) ||
	    utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	return 0;
}

// whiteout hides the host's /tmp/name under the upper layer /tmp/u.
static int whiteout(int lower, const char *name) {
	(void)lower;
	char path[sizeof "/tmp/u/" + 256];
	snprintf(path, sizeof path, "/tmp/u/%s", name);
	return mknod(path, S_IFCHR | 0000, 0);
}

// mount_view mounts the view of the host's /tmp (lower, bind-mounted at
// /tmp/l) that spec names on /tmp, or returns -1, having mounted nothing.
static int mount_view(int lower, const char *spec) {
	if (mkdir("/tmp/v", 0700) < 0 || mkdir("/tmp/x", 0700) < 0 || mkdir("/tmp/m", 0700) < 0 ||
	    mkdir(VIEW, 01777) < 0 || chmod(VIEW, 01777) < 0 ||
	    // Opaque, in case the host has a /tmp/.hermit-tmp.
	    setxattr(VIEW, "trusted.overlay.opaque", "y", 1, 0) < 0)
		return -1;
	if (list_tmp(lower, spec, 0, point_down) < 0) return -1;
	static const char *const opts[] = {
		"lowerdir=/tmp/l,upperdir=/tmp/v,workdir=/tmp/x,redirect_dir=on,metacopy=on,xino=on,index=on",
		"lowerdir=/tmp/l,upperdir=/tmp/v,workdir=/tmp/x,redirect_dir=on,metacopy=on",
	};
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
		if (mount("overlay", "/tmp/m", "overlay", 0, opts[i]) < 0) continue;
		if (mount("/tmp/m/.hermit-tmp", "/tmp", NULL, MS_BIND, NULL) == 0) return 0;
		umount2("/tmp/m", MNT_DETACH);
		return -1;
	}
	return -1;
}

// private_tmp gives the namespace its own /tmp, showing of the host's the
// entries spec names (all when spec is NULL).
int private_tmp(const char *spec) {
	int lower = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (lower < 0) return -1;
	char src[64];
	snprintf(src, sizeof src, "/proc/self/fd/%d", lower);
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0) goto out;
	if (mkdir("/tmp/l", 0700) < 0 || mkdir("/tmp/u", 01777) < 0 || chmod("/tmp/u", 01777) < 0 ||
	    mkdir("/tmp/w", 0700) < 0)
		goto undo;
	// Not MS_REC: that would take our tmpfs, now stacked on the same dentry.
	if (mount(src, "/tmp/l", NULL, MS_BIND, NULL) < 0) goto undo;
	if (spec) {
		if (mount_view(lower, spec) == 0) {
			close(lower);
			return 0;
		}
		if (list_tmp(lower, spec, 1, whiteout) < 0)
			say("the private /tmp shows host entries it should hide: making an overlayfs whiteout", "", errno);
	}
	// xino keeps a file's inode number when a write copies it up from
	// the host's layer, and gives hard links one number, as a real
	// filesystem does (rm -rf of a host directory failed: fts saw its
	// parent's number change); kernels without it mount without. In a
	// user namespace overlayfs wants user.* xattrs.
	static const char *const opts[] = {
		"lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w,xino=on,index=on",
		"lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w,xino=on,index=on,userxattr",
		"lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w",
		"lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w,userxattr",
	};
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
		if (mount("overlay", "/tmp", "overlay", 0, opts[i]) == 0) {
			close(lower);
			return 0;
		}
	}
undo:
	umount2("/tmp", MNT_DETACH);
out:
	close(lower);
	return -1;
}
