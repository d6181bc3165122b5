/* splice: the calls that move data between descriptors inside the kernel,
 * with a TCP socket (which replay does not have: it is external) at one
 * end and the guest's own pipe or file at the other, as Go's io.Copy
 * between connections and its file server do. Prints what arrived where,
 * and where the file offsets are after.
 *   socket -> pipe      splice, then the pipe is read
 *   pipe -> socket      splice, then the peer reads it
 *   file -> socket      sendfile at the file's offset, then with an offset
 *                       argument (the file's own offset does not move)
 *   pipe -> pipe        tee between two pipes, both the guest's
 *
 * Usage: splice DIR (a writable directory for the file).
 */
#include "guest.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

/* readsome reads up to size-1 bytes that fd has, as a string. */
static char *readsome(int fd, char *buf, size_t size) {
	ssize_t n = read(fd, buf, size - 1);
	CHECK(n >= 0);
	buf[n] = 0;
	return buf;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	char buf[256];

	int l = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(l >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof a;
	CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0);
	CHECK(getsockname(l, (struct sockaddr *)&a, &alen) == 0);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(c >= 0 && connect(c, (struct sockaddr *)&a, sizeof a) == 0);
	int s = accept(l, NULL, NULL);
	CHECK(s >= 0);
	int p[2], q[2];
	CHECK(pipe(p) == 0 && pipe(q) == 0);

	const char *hello = "from the peer, through a pipe";
	CHECK(write(c, hello, strlen(hello)) == (ssize_t)strlen(hello));
	CHECK(shutdown(c, SHUT_WR) == 0);
	ssize_t total = 0, n;
	while ((n = splice(s, NULL, p[1], NULL, 4096, 0)) > 0)
		total += n;
	CHECK(n == 0);
	say("socket -> pipe: %zd bytes, the pipe holds \"%s\"\n", total, readsome(p[0], buf, sizeof buf));

	const char *back = "back to the peer";
	CHECK(write(p[1], back, strlen(back)) == (ssize_t)strlen(back));
	CHECK(write(p[1], " and more", 9) == 9);
	n = splice(p[0], NULL, s, NULL, strlen(back), 0);
	say("pipe -> socket: %zd bytes, the peer reads \"%s\"", n, readsome(c, buf, sizeof buf));
	say(", the pipe keeps \"%s\"\n", readsome(p[0], buf, sizeof buf));

	char path[4096];
	snprintf(path, sizeof path, "%s/sendfile.txt", argv[1]);
	int f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(f >= 0);
	const char *text = "0123456789 a file sent whole";
	CHECK(write(f, text, strlen(text)) == (ssize_t)strlen(text));
	CHECK(lseek(f, 11, SEEK_SET) == 11);
	n = sendfile(s, f, NULL, 100);
	say("file -> socket: %zd bytes, the peer reads \"%s\", the file is at %ld\n", n, readsome(c, buf, sizeof buf),
	    (long)lseek(f, 0, SEEK_CUR));
	off_t off = 2;
	n = sendfile(s, f, &off, 5);
	say("file -> socket at 2: %zd bytes, the peer reads \"%s\", offset %ld, the file is at %ld\n", n,
	    readsome(c, buf, sizeof buf), (long)off, (long)lseek(f, 0, SEEK_CUR));

	CHECK(write(p[1], "teed", 4) == 4);
	n = tee(p[0], q[1], 100, 0);
	say("pipe -> pipe: %zd bytes teed, \"%s\"", n, readsome(q[0], buf, sizeof buf));
	say(" and \"%s\" still in the first\n", readsome(p[0], buf, sizeof buf));
	return 0;
}
