// pipe_writes: blocking writes larger than a pipe holds. "big": one
// write of 1 MiB while the reader reads 10 KiB at a time (the kernel
// returns the whole count); "slow": 128 KiB writes while the reader,
// after 10 KiB, makes 40 stat calls before it drains (no hang);
// "signal": a signal comes while the write waits for room, before the
// reader reads (the write returns what it wrote, the pipe's 64 KiB, and
// the reader gets exactly that); "stdout": one write of 1 MiB to stdout
// (a pipe whose reader is outside), its count on stderr. "writev" and
// "writevmany": 1 MiB in one writev of 3 entries, or of 256 (each
// partly written in some part); "socket", "sendto" and "sockwritev": 1
// MiB in one write, send, writev or sendmsg to a Unix stream socket
// ("sendmsg": its msghdr and iovecs are as they were after). The reader
// checks every byte it gets against the pattern the writer wrote.
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[1 << 20];

static void on_usr1(int sig) { (void)sig; }

static unsigned char pattern(long i) { return (unsigned char)(i * 131 + i / 4096); }

// drain reads fd to its end, pausing after the first 10 KiB; it returns
// the bytes read.
static long drain(int fd, int stats, pid_t signal_to) {
	char b[10240];
	long total = 0, bad = -1;
	ssize_t r;
	if (signal_to) {
		usleep(100000);
		kill(signal_to, SIGUSR1);
	}
	while ((r = read(fd, b, sizeof b)) > 0) {
		if (total == 0) {
			struct stat st;
			for (int i = 0; i < stats; i++)
				stat("/", &st);
		}
		for (ssize_t i = 0; i < r; i++)
			if (bad < 0 && (unsigned char)b[i] != pattern(total + i))
				bad = total + i;
		total += r;
	}
	if (bad >= 0)
		printf("byte %ld differs\n", bad);
	return total;
}

int main(int argc, char **argv) {
	if (argc != 2)
		return 2;
	const char *mode = argv[1];
	for (long i = 0; i < (long)sizeof buf; i++)
		buf[i] = pattern(i);
	int sock = strncmp(mode, "sock", 4) == 0 || strncmp(mode, "send", 4) == 0 || strcmp(mode, "signalmsg") == 0;
	if (strcmp(mode, "stdout") == 0) {
		fprintf(stderr, "stdout: wrote %zd\n", write(1, buf, sizeof buf));
		return 0;
	}
	int p[2];
	if ((sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) : pipe(p)) != 0)
		return 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL); // no SA_RESTART
	pid_t parent = getpid();
	pid_t c = fork();
	if (c == 0) {
		close(p[1]);
		if (sock)
			shutdown(p[0], SHUT_WR);
		long n = drain(p[0], strcmp(mode, "slow") == 0 ? 40 : 0, strncmp(mode, "signal", 6) == 0 ? parent : 0);
		printf("%s: reader got %ld\n", mode, n);
		return 0;
	}
	close(p[0]);
	long wrote = 0;
	if (strcmp(mode, "slow") == 0) {
		for (int i = 0; i < 4; i++)
			wrote += write(p[1], buf + i * (128 << 10), 128 << 10);
	} else if (strcmp(mode, "writev") == 0 || strcmp(mode, "sockwritev") == 0) {
		struct iovec iov[3] = {{buf, 100 << 10}, {buf + (100 << 10), 700 << 10}, {buf + (800 << 10), 224 << 10}};
		wrote = writev(p[1], iov, 3);
	} else if (strcmp(mode, "writevmany") == 0) {
		static struct iovec iov[256];
		for (int i = 0; i < 256; i++)
			iov[i] = (struct iovec){buf + i * 4096, 4096};
		wrote = writev(p[1], iov, 256);
		for (int i = 0; i < 256; i++)
			if (iov[i].iov_base != buf + i * 4096 || iov[i].iov_len != 4096)
				printf("iovec %d changed\n", i);
	} else if (strcmp(mode, "sendmsg") == 0 || strcmp(mode, "signalmsg") == 0) {
		struct iovec iov[2] = {{buf, 300 << 10}, {buf + (300 << 10), 724 << 10}};
		struct msghdr m;
		memset(&m, 0, sizeof m);
		m.msg_iov = iov;
		m.msg_iovlen = 2;
		wrote = sendmsg(p[1], &m, 0);
		if (m.msg_iov != iov || m.msg_iovlen != 2 || iov[0].iov_base != buf || iov[1].iov_len != 724 << 10)
			printf("msghdr changed\n");
	} else if (strcmp(mode, "sendto") == 0) {
		wrote = send(p[1], buf, sizeof buf, 0);
	} else {
		wrote = write(p[1], buf, sizeof buf);
	}
	close(p[1]);
	waitpid(c, NULL, 0);
	printf("%s: wrote %ld\n", mode, wrote);
	return 0;
}
