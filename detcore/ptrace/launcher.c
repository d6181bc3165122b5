// The launcher runs inside the guest's fresh namespaces before the Go
// runtime starts (a constructor), so that it is single-threaded and never
// consumes pids the guest would see. It is enabled by HERMIT_LAUNCH_MODE in the
// environment; otherwise it returns at once and hermit runs normally.
//
// As pid 1 of the new pid namespace it mounts a private /proc, sets the
// hostname, and forks the guest's first process (pid 2). That child turns
// off ASLR, stops itself so the tracer can seize it, installs the seccomp
// filter and execs the program. pid 1 then reaps every process of the
// namespace until none is left, like an init.
//
// With HERMIT_LAUNCH_ROOT set (replay), the guest's whole filesystem is
// that directory overlaid with a tmpfs (see enter_root), and the guest
// starts in HERMIT_LAUNCH_CWD inside it.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher.h"

#define ENV_PREFIX "HERMIT_LAUNCH_"

void say(const char *a, const char *b, int err) {
	char buf[512];
	size_t n = 0;
	const char *parts[] = {"hermit: launcher: ", a, b, err ? ": " : "", err ? strerror(err) : "", "\n"};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		size_t l = strlen(parts[i]);
		if (n + l >= sizeof(buf)) break;
		memcpy(buf + n, parts[i], l);
		n += l;
	}
	if (write(2, buf, n) < 0) {}
}

static int hexval(char c) {
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	return -1;
}

// Launch stages, reported with errno when one fails (see launchStage in
// tracer.go).
enum { STAGE_CONFIG = 1, STAGE_NAMESPACE, STAGE_MOUNT, STAGE_FORK, STAGE_PERSONALITY,
       STAGE_NO_NEW_PRIVS, STAGE_STOP, STAGE_TSC, STAGE_SECCOMP, STAGE_EXEC };

// Reports the failed stage and errno to the tracer through fd errfd and
// exits with code.
static void fail(int errfd, int stage, int err, int code) {
	if (errfd >= 0) {
		int v[2] = {stage, err};
		if (write(errfd, v, sizeof v) < 0) {}
	}
	_exit(code);
}

// stand_in opens a descriptor like one the recording's guest inherited:
// kind 'p' a pipe's end, 's' one of a socketpair, else /dev/null, with
// the access mode and O_APPEND and O_NONBLOCK of flags (F_GETFL's; -1:
// unknown, read-write), close-on-exec.
static int stand_in(char kind, long flags) {
	int acc = flags < 0 ? O_RDWR : (int)(flags & O_ACCMODE);
	int nonblock = flags < 0 ? 0 : (int)(flags & O_NONBLOCK);
	int p[2];
	if (kind == 'p' && acc != O_RDWR && pipe2(p, O_CLOEXEC | nonblock) == 0) {
		close(acc == O_WRONLY ? p[0] : p[1]);
		return acc == O_WRONLY ? p[1] : p[0];
	}
	if (kind == 's' && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0, p) == 0) {
		close(p[1]);
		return p[0];
	}
	return open("/dev/null", acc | O_CLOEXEC | (flags < 0 ? 0 : (int)(flags & (O_APPEND | O_NONBLOCK))));
}

// keep_fds leaves the guest the descriptors above 2 that list names ("-"
// then a comma-separated list of FD or FD/KIND/FLAGS), each a stand-in
// (stand_in), and closes the others but errfd, which is above them all
// and closes at the exec (a replay's guest inherits what the recording's
// did).
static void keep_fds(const char *list, int errfd) {
	if (!list) return;
	int want[1024], n = 0;
	char kinds[1024];
	long flags[1024];
	for (const char *p = list; *p && n < 1024;) {
		char *end;
		long fd = strtol(p, &end, 10);
		char kind = 0;
		long fl = -1;
		if (end[0] == '/' && end[1] && end[2] == '/') {
			kind = end[1];
			fl = strtol(end + 3, &end, 10);
		}
		if (end != p && fd >= 3 && fd != errfd) {
			want[n] = (int)fd;
			kinds[n] = kind;
			flags[n++] = fl;
		}
		while (*end && *end != ',') end++;
		p = *end ? end + 1 : end;
	}
	DIR *d = opendir("/proc/self/fd");
	if (!d) fail(errfd, STAGE_CONFIG, errno, 125);
	int open_fds[4096], m = 0;
	struct dirent *e;
	while ((e = readdir(d)) && m < 4096) {
		int fd = atoi(e->d_name);
		if (fd >= 3 && fd != dirfd(d) && fd != errfd) open_fds[m++] = fd;
	}
	closedir(d);
	for (int i = 0; i < m; i++) {
		int keep = 0;
		for (int j = 0; j < n; j++) keep |= open_fds[i] == want[j];
		if (!keep) close(open_fds[i]);
	}
	for (int j = 0; j < n; j++) {
		int fd = stand_in(kinds[j], flags[j]);
		if (fd < 0 || (fd != want[j] && dup2(fd, want[j]) < 0)) fail(errfd, STAGE_CONFIG, errno, 125);
		if (fd == want[j]) fcntl(fd, F_SETFD, 0);
		else close(fd);
	}
}

static void run_guest(char **argv, char **envp, int errfd) {
	const char *hex = getenv(ENV_PREFIX "FILTER");
	const char *tsc = getenv(ENV_PREFIX "TSC");
	size_t len = hex ? strlen(hex) / 2 : 0;
	unsigned char *bytes = malloc(len + 1);
	for (size_t i = 0; i < len; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0 || !bytes) fail(errfd, STAGE_CONFIG, EINVAL, 125);
		bytes[i] = (unsigned char)(hi << 4 | lo);
	}
	// The guest gets an environment without hermit's variables.
	size_t n = 0;
	for (char **e = envp; *e; e++) n++;
	char **env = calloc(n + 1, sizeof(char *));
	size_t k = 0;
	for (char **e = envp; *e; e++)
		if (strncmp(*e, ENV_PREFIX, strlen(ENV_PREFIX))) env[k++] = *e;
	env[k] = NULL;

	if (errfd >= 0) fcntl(errfd, F_SETFD, FD_CLOEXEC);
	keep_fds(getenv(ENV_PREFIX "FDS"), errfd);
	if (personality(ADDR_NO_RANDOMIZE) < 0) fail(errfd, STAGE_PERSONALITY, errno, 125);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) fail(errfd, STAGE_NO_NEW_PRIVS, errno, 125);
	// Wait here until the tracer has seized us.
	if (kill(getpid(), SIGSTOP) < 0) fail(errfd, STAGE_STOP, errno, 125);
	if (tsc && tsc[0] == '1' && prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) < 0) fail(errfd, STAGE_TSC, errno, 125);
	struct sock_fprog prog = {.len = (unsigned short)(len / sizeof(struct sock_filter)),
				  .filter = (struct sock_filter *)bytes};
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) fail(errfd, STAGE_SECCOMP, errno, 125);
	execve(argv[0], argv + 1, env);
	int err = errno;
	fail(errfd, STAGE_EXEC, err, err == ENOENT ? 127 : 126);
}

// root_fail reports that building the guest's root failed at what (with
// arg) and exits.
static void root_fail(int errfd, const char *what, const char *arg) {
	int err = errno;
	say(what, arg, err);
	fail(errfd, STAGE_MOUNT, err, 125);
}

// open_beneath opens path, relative to directory dir, as an O_PATH
// descriptor without following any symbolic link: the root comes from a
// trace, and a link in it must not lead the launcher, which still sees the
// host, out of it. Missing directories are created (0755) when make is
// set. With file set the last component is a regular file, created empty
// and read-only when missing and make is set; otherwise a directory.
static int open_beneath(int dir, const char *path, int make, int file) {
	char buf[512];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int cur = openat(dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c && cur >= 0; c = strtok_r(NULL, "/", &save)) {
		int reg = file && *save == 0;
		int next = -1, err = EINVAL;
		if (strcmp(c, ".") && strcmp(c, "..")) {
			int flags = O_PATH | O_NOFOLLOW | O_CLOEXEC | (reg ? 0 : O_DIRECTORY);
			next = openat(cur, c, flags);
			if (next < 0 && errno == ENOENT && make) {
				if (reg) {
					int f = openat(cur, c, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
					if (f >= 0) close(f);
				} else {
					mkdirat(cur, c, 0755);
				}
				next = openat(cur, c, flags);
			}
			err = errno;
			struct stat st;
			// O_PATH|O_NOFOLLOW opens a symbolic link itself.
			if (next >= 0 && reg && (fstat(next, &st) < 0 || !S_ISREG(st.st_mode))) {
				close(next);
				next = -1;
				err = ELOOP;
			}
		}
		close(cur);
		cur = next;
		errno = err;
	}
	return cur;
}

// mount_at mounts over the file or directory open (O_PATH) as fd.
static int mount_at(const char *src, int fd, const char *type, unsigned long flags) {
	char dst[64];
	snprintf(dst, sizeof dst, "/proc/self/fd/%d", fd);
	return mount(src, dst, type, flags, NULL);
}

// root_files bind-mounts the machine files of directory files (see
// machine_files) over their paths in the new root, open as mfd, creating
// the ones that are missing.
static void root_files(DIR *files, int mfd) {
	struct dirent *e;
	while ((e = readdir(files)) != NULL) {
		if (e->d_name[0] != '%') continue;
		char rel[256];
		snprintf(rel, sizeof rel, "%s", e->d_name + 1);
		for (char *c = rel; *c; c++)
			if (*c == '%') *c = '/';
		int src = openat(dirfd(files), e->d_name, O_PATH | O_CLOEXEC);
		if (src < 0) {
			say("opening ", e->d_name, errno);
			continue;
		}
		int dst = open_beneath(mfd, rel, 1, 1);
		char from[64];
		snprintf(from, sizeof from, "/proc/self/fd/%d", src);
		if (dst < 0 || mount_at(from, dst, NULL, MS_BIND) < 0) say("bind-mounting over /", rel, errno);
		close(src);
		if (dst >= 0) close(dst);
	}
}

// enter_root makes the guest's root an overlay whose lower layer is
// directory lower and whose upper layer is a fresh tmpfs, so that the
// guest's writes go nowhere, with the host's /dev, a fresh /proc, a /tmp
// and the machine files of file files (machine_files; -1 for none) inside
// it, and moves the launcher into it for good (chroot). The overlay is
// built on a tmpfs mounted over /tmp, which no one else sees: the mounts
// are private to the namespace, and the machine files are written there
// too. lower may lie under /tmp: it is opened first. The host's view is
// then detached.
static void enter_root(const char *lower, int files, int errfd) {
	int lowerfd = open(lower, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (lowerfd < 0) root_fail(errfd, "opening the replay root ", lower);
	int devfd = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (devfd < 0) root_fail(errfd, "opening ", "/dev");
	struct stat st;
	if (fstat(lowerfd, &st) < 0) root_fail(errfd, "reading the mode of ", lower);

	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0)
		root_fail(errfd, "mounting a tmpfs on /tmp to build the root in", "");
	// The upper layer's root is the guest's "/": give it the root's mode.
	if (mkdir("/tmp/l", 0700) < 0 || mkdir("/tmp/u", 0700) < 0 || chmod("/tmp/u", st.st_mode & 07777) < 0 ||
	    mkdir("/tmp/w", 0700) < 0 || mkdir("/tmp/m", 0700) < 0)
		root_fail(errfd, "making the overlay's directories", "");
	DIR *fdir = files >= 0 ? machine_files(files, "/tmp/f") : NULL;
	char src[64];
	snprintf(src, sizeof src, "/proc/self/fd/%d", lowerfd);
	if (mount(src, "/tmp/l", NULL, MS_BIND, NULL) < 0) root_fail(errfd, "bind-mounting ", lower);
	const char *opts = "lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w";
	if (mount("overlay", "/tmp/m", "overlay", 0, opts) < 0 &&
	    // In a user namespace overlayfs wants user.* xattrs.
	    mount("overlay", "/tmp/m", "overlay", 0, "lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w,userxattr") < 0)
		root_fail(errfd, "mounting an overlay (upper layer tmpfs) on the replay root ", lower);
	int mfd = open("/tmp/m", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0) root_fail(errfd, "opening the new root", "");

	int fd = open_beneath(mfd, "proc", 1, 0);
	if (fd < 0 || mount_at("proc", fd, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC) < 0)
		root_fail(errfd, "mounting /proc in the new root", "");
	close(fd);
	fd = open_beneath(mfd, "dev", 1, 0);
	snprintf(src, sizeof src, "/proc/self/fd/%d", devfd);
	if (fd < 0 || mount_at(src, fd, NULL, MS_BIND | MS_REC) < 0) root_fail(errfd, "bind-mounting /dev in the new root", "");
	close(fd);
	// The host's /dev/shm is writable shared state: the guest gets a
	// throwaway one (POSIX shared memory and semaphores still work).
	// (tmpfs's root is 1777 by default.)
	fd = open_beneath(mfd, "dev/shm", 0, 0);
	if (fd >= 0) {
		if (mount_at("tmpfs", fd, "tmpfs", MS_NOSUID | MS_NODEV) < 0) say("mounting a private /dev/shm", "", errno);
		close(fd);
	}
	// A /tmp for the guest, unless the root has one (or a link there).
	if (mkdirat(mfd, "tmp", 01777) == 0 && fchmodat(mfd, "tmp", 01777, 0) < 0)
		root_fail(errfd, "making /tmp in the new root", "");
	if (fdir) {
		root_files(fdir, mfd);
		closedir(fdir);
	}
	close(devfd);
	close(lowerfd);

	// pivot_root, not chroot: a chrooted process may not make a user
	// namespace (unshare(CLONE_NEWUSER) fails with EPERM), which the
	// recorded program did. The host's tree is detached afterwards.
	if (fchdir(mfd) < 0 || syscall(SYS_pivot_root, ".", ".") < 0) root_fail(errfd, "entering the new root (pivot_root)", "");
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0) root_fail(errfd, "detaching the host's mounts", "");
	close(mfd);
	const char *cwd = getenv(ENV_PREFIX "CWD");
	if (!cwd || !cwd[0]) cwd = "/";
	if (chdir("/") < 0 || chdir(cwd) < 0) root_fail(errfd, "entering the working directory in the new root: ", cwd);
}

// rta_add appends attribute type with data to the netlink message at
// msg (room bytes), returning the attribute or NULL if it does not fit.
static struct rtattr *rta_add(struct nlmsghdr *msg, size_t room, int type, const void *data, size_t len) {
	size_t off = NLMSG_ALIGN(msg->nlmsg_len);
	if (off + RTA_SPACE(len) > room) return NULL;
	struct rtattr *a = (struct rtattr *)((char *)msg + off);
	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len) memcpy(RTA_DATA(a), data, len);
	msg->nlmsg_len = off + RTA_ALIGN(a->rta_len);
	return a;
}

// quickack replaces the local route to 127.0.0.1/plen on lo with one that
// acknowledges at once (the route metric quickack, ip route's "quickack
// 1"): no delayed ACK, whose timer would decide when a writer's data
// moves on.
static int quickack(int nl, int plen) {
	char buf[256];
	memset(buf, 0, sizeof buf);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	h->nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	h->nlmsg_type = RTM_NEWROUTE;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_REPLACE;
	struct rtmsg *r = NLMSG_DATA(h);
	r->rtm_family = AF_INET;
	r->rtm_dst_len = plen;
	r->rtm_table = RT_TABLE_LOCAL;
	r->rtm_protocol = RTPROT_KERNEL;
	r->rtm_scope = RT_SCOPE_HOST;
	r->rtm_type = RTN_LOCAL;
	unsigned char dst[4] = {127, 0, 0, plen == 32 ? 1 : 0};
	unsigned char src[4] = {127, 0, 0, 1};
	int lo = (int)if_nametoindex("lo");
	unsigned one = 1;
	struct rtattr *m;
	if (!rta_add(h, sizeof buf, RTA_DST, dst, 4) || !rta_add(h, sizeof buf, RTA_PREFSRC, src, 4) ||
	    !rta_add(h, sizeof buf, RTA_OIF, &lo, sizeof lo) || !(m = rta_add(h, sizeof buf, RTA_METRICS, NULL, 0)))
		return -1;
	if (!rta_add(h, sizeof buf, RTAX_QUICKACK, &one, sizeof one)) return -1;
	m->rta_len = (unsigned short)((char *)h + h->nlmsg_len - (char *)m);
	if (send(nl, buf, h->nlmsg_len, 0) < 0) return -1;
	char ack[256];
	ssize_t n = recv(nl, ack, sizeof ack, 0);
	struct nlmsghdr *a = (struct nlmsghdr *)ack;
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) || a->nlmsg_type != NLMSG_ERROR) return -1;
	struct nlmsgerr *e = NLMSG_DATA(a);
	if (e->error) {
		errno = -e->error;
		return -1;
	}
	return 0;
}

// local_network brings up loopback in the guest's own network namespace
// (HERMIT_LAUNCH_NET) and tunes its TCP so that what a write hands the peer
// depends on the two programs alone, not on the kernel's timers: fixed
// buffers larger than a test's transfers, no receive-buffer autotuning
// (it measures real time), no autocorking, no delayed ACKs, Reno's
// congestion control (ACK-clocked: the host's may pace sends by real time,
// as BBR does, or grow its window by it, as CUBIC does), and a receive
// window that shrinks with the buffer's room (kernels from 6.5), so that a
// full buffer does not let data in by the sender's probe timer.
static void local_network(void) {
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		say("bringing up loopback", "", errno);
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) say("bringing up loopback", "", errno);
	}
	if (s >= 0) close(s);
	int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl < 0 || quickack(nl, 8) < 0 || quickack(nl, 32) < 0) say("making loopback acknowledge at once", "", errno);
	if (nl >= 0) close(nl);
	static const char *const knobs[][2] = {
		{"/proc/sys/net/ipv4/tcp_rmem", "4096 4194304 8388608"},
		{"/proc/sys/net/ipv4/tcp_wmem", "4096 4194304 8388608"},
		{"/proc/sys/net/ipv4/tcp_moderate_rcvbuf", "0"},
		{"/proc/sys/net/ipv4/tcp_autocorking", "0"},
		{"/proc/sys/net/ipv4/tcp_shrink_window", "1"},
		{"/proc/sys/net/ipv4/tcp_congestion_control", "reno"},
	};
	for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
		int fd = open(knobs[i][0], O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && strstr(knobs[i][0], "shrink")) continue;
		size_t n = strlen(knobs[i][1]);
		if (fd < 0 || write(fd, knobs[i][1], n) != (ssize_t)n) say("setting ", knobs[i][0], errno);
		if (fd >= 0) close(fd);
	}
}

// guest is the guest's first process, for forward.
static volatile pid_t guest;

// forward passes a signal a process sent the launcher (a kill from a shell
// that found it, a supervisor's SIGTERM: the kernel gives pid 1 of a pid
// namespace only the signals it handles) on to the guest's first process,
// as one from outside the guest (sigqueue, pid 0), which hermit record
// keeps. A terminal's (^C, SI_KERNEL) reached the guest already: it is in
// hermit's process group. One from a guest process (its pid shows here:
// the launcher is in the guest's pid namespace) is left alone, as before.
static void forward(int sig, siginfo_t *si, void *uc) {
	(void)uc;
	if (guest <= 0 || si->si_code == SI_KERNEL || si->si_pid != 0) return;
	int saved = errno;
	siginfo_t f;
	memset(&f, 0, sizeof f);
	f.si_signo = sig;
	f.si_code = SI_QUEUE;
	syscall(SYS_rt_sigqueueinfo, guest, sig, &f);
	errno = saved;
}

__attribute__((constructor)) static void hermit_launcher(int argc, char **argv, char **envp) {
	const char *mode = getenv(ENV_PREFIX "MODE");
	if (!mode || argc < 2) return;
	const char *errs = getenv(ENV_PREFIX "ERRFD");
	int errfd = errs ? atoi(errs) : -1;
	if (getpid() != 1) {
		say("not pid 1 of a new pid namespace", "", 0);
		fail(errfd, STAGE_NAMESPACE, EPERM, 125);
	}
	// A private /proc that shows the guest's own pids.
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		say("making mounts private", "", errno);
		fail(errfd, STAGE_MOUNT, errno, 125);
	}
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		say("mounting /proc", "", errno);
		fail(errfd, STAGE_MOUNT, errno, 125);
	}
	const char *files = getenv(ENV_PREFIX "FILES");
	int files_fd = files && files[0] ? atoi(files) : -1;
	const char *root = getenv(ENV_PREFIX "ROOT");
	if (root && root[0]) {
		// The root's /tmp is already thrown away with the run.
		enter_root(root, files_fd, errfd);
	} else {
		if (files_fd >= 0) overlay_machine(files_fd);
		const char *tmp = getenv(ENV_PREFIX "TMP");
		if (tmp && tmp[0] == '1' && private_tmp(tmp[1] == '/' ? tmp + 2 : NULL) < 0) say("no private /tmp (overlayfs on tmpfs failed); the guest uses the host's", "", errno);
		// The working directory may lie under a mount just made (/tmp):
		// enter it again through the new mounts.
		char cwd[4096];
		if (getcwd(cwd, sizeof cwd) && chdir(cwd) < 0) say("re-entering ", cwd, errno);
	}
	const char *host = getenv(ENV_PREFIX "HOSTNAME");
	if (host && sethostname(host, strlen(host)) < 0) say("sethostname", "", errno);
	const char *net = getenv(ENV_PREFIX "NET");
	if (net && net[0] == '1') local_network();

	const char *fwd = getenv(ENV_PREFIX "FORWARD");
	if (fwd && fwd[0] == '1') {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = forward;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		const int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM};
		for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
	}
	pid_t child = fork();
	if (child < 0) fail(errfd, STAGE_FORK, errno, 125);
	if (child == 0) run_guest(argv + 1, envp, errfd);
	guest = child;
	// Reap everything; remember how the first process ended.
	int status = 0, code = 0;
	// Tell the tracer (a zero stage) once the child has stopped for it,
	// so that it need not poll.
	pid_t w;
	while ((w = waitpid(child, &status, WUNTRACED)) < 0 && errno == EINTR) {}
	if (w == child && !WIFSTOPPED(status)) code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (w == child && WIFSTOPPED(status) && errfd >= 0) {
		int v[2] = {0, 0};
		if (write(errfd, v, sizeof v) < 0) {}
	}
	if (errfd >= 0) close(errfd);
	for (;;) {
		pid_t p = waitpid(-1, &status, 0);
		if (p < 0) {
			if (errno == EINTR) continue;
			break;
		}
		if (p == child) code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	_exit(code);
}
