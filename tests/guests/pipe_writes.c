// pipe_writes: blocking writes larger than a pipe holds. "big": one
// write of 1 MiB while the reader reads 10 KiB at a time (the kernel
// returns the whole count); "slow": 128 KiB writes while the reader,
// after 10 KiB, makes 40 stat calls before it drains (no hang);
// "signal": a signal comes while the write waits for room, before the
// reader reads (the write returns what it wrote, the pipe's 64 KiB, and
// the reader gets exactly that); "stdout": one write of 1 MiB to stdout
// (a pipe whose reader is outside), its count on stderr.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char buf[1 << 20];

static void on_usr1(int sig) { (void)sig; }

// drain reads fd to its end, pausing after the first 10 KiB; it returns
// the bytes read.
static long drain(int fd, int stats, pid_t signal_to) {
	char b[10240];
	long total = 0;
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
		total += r;
	}
	return total;
}

int main(int argc, char **argv) {
	if (argc != 2)
		return 2;
	const char *mode = argv[1];
	if (strcmp(mode, "stdout") == 0) {
		fprintf(stderr, "stdout: wrote %zd\n", write(1, buf, sizeof buf));
		return 0;
	}
	int p[2];
	if (pipe(p) != 0)
		return 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL); // no SA_RESTART
	pid_t parent = getpid();
	pid_t c = fork();
	if (c == 0) {
		close(p[1]);
		long n = drain(p[0], strcmp(mode, "slow") == 0 ? 40 : 0, strcmp(mode, "signal") == 0 ? parent : 0);
		printf("%s: reader got %ld\n", mode, n);
		return 0;
	}
	close(p[0]);
	long wrote = 0;
	if (strcmp(mode, "slow") == 0) {
		for (int i = 0; i < 4; i++)
			wrote += write(p[1], buf, 128 << 10);
	} else {
		wrote = write(p[1], buf, sizeof buf);
	}
	close(p[1]);
	waitpid(c, NULL, 0);
	printf("%s: wrote %ld\n", mode, wrote);
	return 0;
}
