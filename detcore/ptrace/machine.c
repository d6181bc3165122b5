// The machine files: what the guest reads of the host's CPUs (and its
// /etc/hosts), mounted over the host's files (machineFiles in machine.go
// prepares them). They are written on a tmpfs of the launcher's own
// mount namespace, never on the host's disk.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher.h"

// read_all reads the whole of file fd into a new NUL-terminated buffer,
// its length in *len; NULL on failure (errno).
static char *read_all(int fd, size_t *len) {
	struct stat st;
	if (fstat(fd, &st) < 0) return NULL;
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf) return NULL;
	size_t n = 0;
	while (n < (size_t)st.st_size) {
		ssize_t r = pread(fd, buf + n, (size_t)st.st_size - n, (off_t)n);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) {
			int err = r < 0 ? errno : EIO;
			free(buf);
			errno = err;
			return NULL;
		}
		n += (size_t)r;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

// write_file makes file name in directory dfd, read-only, with data and
// modification time mtime.
static int write_file(int dfd, const char *name, const char *data, size_t len, struct timespec mtime) {
	int f = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (f < 0) return -1;
	for (size_t n = 0; n < len;) {
		ssize_t w = write(f, data + n, len - n);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) {
			int err = w < 0 ? errno : EIO;
			close(f);
			errno = err;
			return -1;
		}
		n += (size_t)w;
	}
	struct timespec times[2] = {mtime, mtime};
	int err = futimens(f, times) < 0 ? errno : 0;
	close(f);
	errno = err;
	return err ? -1 : 0;
}

DIR *machine_files(int fd, const char *dir) {
	size_t len = 0;
	char *buf = read_all(fd, &len);
	int err = errno;
	close(fd);
	if (!buf) {
		say("reading the machine files", "", err);
		return NULL;
	}
	int dfd = -1;
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		say("making ", dir, errno);
		free(buf);
		return NULL;
	}
	for (char *p = buf, *end = buf + len; p < end;) {
		char name[256];
		long long sec;
		long nsec;
		size_t n;
		int head = 0;
		// A line "NAME SEC NSEC LEN", then LEN bytes.
		if (sscanf(p, "%255s %lld %ld %zu%n", name, &sec, &nsec, &n, &head) != 4 || head <= 0 || p[head] != '\n' ||
		    name[0] != '%' || strchr(name, '/') || n > (size_t)(end - p - head - 1)) {
			say("the machine files are malformed at: ", name, 0);
			break;
		}
		p += head + 1;
		struct timespec mtime = {.tv_sec = (time_t)sec, .tv_nsec = nsec};
		if (write_file(dfd, name, p, n, mtime) < 0) say("writing the machine file ", name, errno);
		p += n;
	}
	free(buf);
	DIR *d = fdopendir(dfd);
	if (!d) close(dfd);
	return d;
}

// overlay_files bind-mounts each file of files over the path its name
// encodes, '%' standing for '/': "%proc%cpuinfo" goes over /proc/cpuinfo,
// where that path exists. Unlike root_files (launcher.c), which stays
// beneath a replay's root, it follows the host's links as any path
// would: /etc/hosts may be a link to an absolute path.
static void overlay_files(DIR *files) {
	struct dirent *e;
	while ((e = readdir(files)) != NULL) {
		if (e->d_name[0] != '%') continue;
		char dst[256];
		snprintf(dst, sizeof dst, "%s", e->d_name);
		for (char *c = dst; *c; c++)
			if (*c == '%') *c = '/';
		if (access(dst, F_OK) < 0) continue;
		int src = openat(dirfd(files), e->d_name, O_PATH | O_CLOEXEC);
		char from[64];
		snprintf(from, sizeof from, "/proc/self/fd/%d", src);
		if (src < 0 || mount(from, dst, NULL, MS_BIND, NULL) < 0) say("bind-mounting over ", dst, errno);
		if (src >= 0) close(src);
	}
}

void overlay_machine(int fd) {
	// A tmpfs on /tmp (or, where there is none, /dev) for the while: the
	// bind mounts keep it once it is detached, and no one else sees it.
	const char *at = "/tmp";
	if (mount("tmpfs", at, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0) {
		at = "/dev";
		if (mount("tmpfs", at, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0) {
			say("mounting a tmpfs for the machine files", "", errno);
			close(fd);
			return;
		}
	}
	DIR *files = machine_files(fd, at);
	if (files) {
		overlay_files(files);
		closedir(files);
	}
	if (umount2(at, MNT_DETACH) < 0) say("detaching the machine files' tmpfs from ", at, errno);
}
