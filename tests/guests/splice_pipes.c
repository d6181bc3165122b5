/* splice_pipes: a thread moves 1 MiB into a pipe, with splice or sendfile
 * from a file or vmsplice from its memory, while a second thread drains
 * the pipe 4 KiB at a time; each call waits while the pipe is full. Then
 * "splicein": the reader splices out of a pipe a second thread fills
 * slowly, waiting while it is empty; "splicetty": splices 64 KiB from a
 * pipe into a pty's slave, whose master the second thread drains
 * ("splicettynb": with SPLICE_F_NONBLOCK, which leaves the write into the
 * pty blocking, as Go's os.File.ReadFrom does). Under hermit a call that waited in
 * the kernel kept the thread that would end the wait parked: a hang.
 */
#include "guest.h"
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <termios.h>

#define SIZE (1 << 20)
static char buf[SIZE];
static int p[2];
static long got;

static void *drain(void *arg) {
	(void)arg;
	char b[4096];
	ssize_t n;
	while ((n = read(p[0], b, sizeof b)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			CHECK(b[i] == buf[got + i]);
		got += n;
	}
	return NULL;
}

static void *fill(void *arg) {
	(void)arg;
	for (int i = 0; i < 16; i++) {
		writeall(p[1], buf + i * 4096, 4096);
		usleep(1000);
	}
	close(p[1]);
	return NULL;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	const char *mode = argv[1];
	for (int i = 0; i < SIZE; i++)
		buf[i] = (char)(i * 7 + i / 4096);
	char path[] = "/tmp/splice-XXXXXX";
	int f = mkstemp(path);
	CHECK(f >= 0 && unlink(path) == 0);
	writeall(f, buf, SIZE);
	CHECK(lseek(f, 0, SEEK_SET) == 0 && pipe(p) == 0);
	pthread_t th;
	long moved = 0;
	ssize_t n;
	if (!strncmp(mode, "splicetty", 9)) {
		// A pipe into a pty's slave, whose master a thread drains.
		int m = posix_openpt(O_RDWR | O_NOCTTY);
		CHECK(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
		int s = open(ptsname(m), O_RDWR | O_NOCTTY);
		struct termios raw;
		CHECK(s >= 0 && tcgetattr(s, &raw) == 0);
		cfmakeraw(&raw);
		CHECK(tcsetattr(s, TCSANOW, &raw) == 0);
		p[0] = m;
		CHECK(pthread_create(&th, NULL, drain, NULL) == 0);
		int q[2];
		CHECK(pipe(q) == 0);
		writeall(q[1], buf, 65536); // a pipe holds 64 KiB
		unsigned fl = strcmp(mode, "splicettynb") ? 0 : SPLICE_F_NONBLOCK;
		while (moved < 65536 && (n = splice(q[0], NULL, s, NULL, 65536 - moved, fl)) > 0)
			moved += n;
		while (got < moved)
			usleep(1000);
		say("%s: moved %ld, the reader got %ld\n", mode, moved, got);
		return 0;
	}
	if (!strcmp(mode, "splicein")) {
		// The reader's splice waits for the filler: pipe to file.
		CHECK(pthread_create(&th, NULL, fill, NULL) == 0);
		while ((n = splice(p[0], NULL, f, NULL, SIZE, 0)) > 0)
			moved += n;
		CHECK(pthread_join(th, NULL) == 0);
		say("splicein: moved %ld\n", moved);
		return 0;
	}
	CHECK(pthread_create(&th, NULL, drain, NULL) == 0);
	while (moved < SIZE) {
		if (!strcmp(mode, "splice"))
			n = splice(f, NULL, p[1], NULL, SIZE - moved, 0);
		else if (!strcmp(mode, "sendfile"))
			n = sendfile(p[1], f, NULL, SIZE - moved);
		else {
			struct iovec iov = {buf + moved, SIZE - moved};
			n = vmsplice(p[1], &iov, 1, 0);
		}
		CHECK(n > 0);
		moved += n;
	}
	close(p[1]);
	CHECK(pthread_join(th, NULL) == 0);
	say("%s: moved %ld, the reader got %ld\n", mode, moved, got);
	return 0;
}
