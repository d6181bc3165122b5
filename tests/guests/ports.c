/* ports: prints every port a program can learn about its own sockets, and
 * the filesystem ids and free counts statfs gives. Natively the kernel picks the ephemeral
 * ports and the ids of a fresh tmpfs, so they change on every run; under
 * hermit the guest sees virtual ones, the same on every run.
 *
 * Every port line is "PROTO WHAT: KEY=PORT ...", so the test can check
 * that the ports agree (a client's peer is the listener, accept's peer is
 * the client, ...). The lines about IPv6 are replaced by one "v6 skipped"
 * line when the host has no IPv6 loopback. The "fork" lines come from a
 * child that connects and sends while its parent waits in accept and
 * recvfrom, so that the parent's calls wait before they return.
 */
#include "guest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/wait.h>

/* port returns the port of an AF_INET or AF_INET6 address. */
static int port(const struct sockaddr_storage *ss) {
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return -1;
}

static int local_port(int fd) {
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	CHECK(getsockname(fd, (struct sockaddr *)&ss, &len) == 0);
	return port(&ss);
}

static int peer_port(int fd) {
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	CHECK(getpeername(fd, (struct sockaddr *)&ss, &len) == 0);
	return port(&ss);
}

/* loopback fills ss with the loopback address of family af (v4mapped:
 * ::ffff:127.0.0.1) and port p, and returns its length. */
static socklen_t loopback(struct sockaddr_storage *ss, int af, int v4mapped, int p) {
	memset(ss, 0, sizeof *ss);
	if (af == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_port = htons(p);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof *a;
	}
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
	a->sin6_family = AF_INET6;
	a->sin6_port = htons(p);
	if (v4mapped)
		inet_pton(AF_INET6, "::ffff:127.0.0.1", &a->sin6_addr);
	else
		a->sin6_addr = in6addr_loopback;
	return sizeof *a;
}

static void exchange(int a, int b) {
	char buf[16];
	CHECK(send(a, "ping", 4, 0) == 4);
	CHECK(recv(b, buf, sizeof buf, 0) == 4);
	CHECK(send(b, "pong", 4, 0) == 4);
	CHECK(recv(a, buf, sizeof buf, 0) == 4);
	CHECK(memcmp(buf, "pong", 4) == 0);
}

/* tcp: a listener on the loopback address of family af, port 0; a client
 * of family caf (connecting to the v4-mapped address when af is AF_INET
 * and caf AF_INET6); the accepted connection. */
static void tcp(const char *name, int af, int caf) {
	struct sockaddr_storage ss;
	socklen_t len = loopback(&ss, af, 0, 0);
	int l = socket(af, SOCK_STREAM, 0);
	CHECK(l >= 0);
	CHECK(bind(l, (struct sockaddr *)&ss, len) == 0);
	CHECK(listen(l, 4) == 0);
	int lp = local_port(l);
	say("%s listener: listen=%d\n", name, lp);

	int c = socket(caf, SOCK_STREAM, 0);
	CHECK(c >= 0);
	len = loopback(&ss, caf, af != caf, lp);
	CHECK(connect(c, (struct sockaddr *)&ss, len) == 0);
	say("%s client: local=%d peer=%d\n", name, local_port(c), peer_port(c));

	len = sizeof ss;
	int a = accept(l, (struct sockaddr *)&ss, &len);
	CHECK(a >= 0);
	say("%s accept: from=%d local=%d remote=%d\n", name, port(&ss), local_port(a), peer_port(a));
	exchange(c, a);
	close(a);
	close(c);
	close(l);
}

/* udp: a server bound to port 0 and an unbound client that sends first;
 * the server learns the client's port from recvfrom before the client
 * asks for it. */
static void udp(const char *name, int af) {
	struct sockaddr_storage ss, from;
	socklen_t len = loopback(&ss, af, 0, 0);
	int s = socket(af, SOCK_DGRAM, 0);
	CHECK(s >= 0);
	CHECK(bind(s, (struct sockaddr *)&ss, len) == 0);
	int sp = local_port(s);
	say("%s server: bound=%d\n", name, sp);

	int c = socket(af, SOCK_DGRAM, 0);
	CHECK(c >= 0);
	len = loopback(&ss, af, 0, sp);
	CHECK(sendto(c, "ping", 4, 0, (struct sockaddr *)&ss, len) == 4);
	CHECK(port(&ss) == sp); /* the guest's own address is left alone */

	char buf[16];
	socklen_t flen = sizeof from;
	CHECK(recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen) == 4);
	int cp = port(&from);
	CHECK(sendto(s, "pong", 4, 0, (struct sockaddr *)&from, flen) == 4);
	flen = sizeof from;
	CHECK(recvfrom(c, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen) == 4);
	say("%s exchange: server-saw=%d client-local=%d client-saw=%d\n", name, cp, local_port(c), port(&from));

	/* recvmsg and sendmsg, with names. */
	struct iovec iov = {buf, sizeof buf};
	struct msghdr m = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1};
	struct sockaddr_storage to;
	len = loopback(&to, af, 0, sp);
	struct iovec oiov = {"again", 5};
	struct msghdr om = {.msg_name = &to, .msg_namelen = len, .msg_iov = &oiov, .msg_iovlen = 1};
	CHECK(sendmsg(c, &om, 0) == 5);
	CHECK(recvmsg(s, &m, 0) == 5);
	say("%s msg: server-saw=%d\n", name, port(&from));
	close(c);
	close(s);
}

/* forked: the parent waits in accept and recvfrom for a child that
 * connects and sends; the child prints its ports before it exits, the
 * parent what it saw once the child is gone. */
static void forked(void) {
	struct sockaddr_storage ss, from;
	socklen_t len = loopback(&ss, AF_INET, 0, 0);
	int l = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(l >= 0 && u >= 0);
	CHECK(bind(l, (struct sockaddr *)&ss, len) == 0);
	CHECK(listen(l, 4) == 0);
	CHECK(bind(u, (struct sockaddr *)&ss, len) == 0);
	int lp = local_port(l), up = local_port(u);
	say("fork listener: listen=%d udp=%d\n", lp, up);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int c = socket(AF_INET, SOCK_STREAM, 0), d = socket(AF_INET, SOCK_DGRAM, 0);
		CHECK(c >= 0 && d >= 0);
		len = loopback(&ss, AF_INET, 0, lp);
		CHECK(connect(c, (struct sockaddr *)&ss, len) == 0);
		CHECK(send(c, "hi", 2, 0) == 2);
		len = loopback(&ss, AF_INET, 0, up);
		CHECK(sendto(d, "hi", 2, 0, (struct sockaddr *)&ss, len) == 2);
		say("fork child: tcp-local=%d udp-local=%d\n", local_port(c), local_port(d));
		_exit(0);
	}
	len = sizeof from;
	int a = accept(l, (struct sockaddr *)&from, &len);
	CHECK(a >= 0);
	int ap = port(&from);
	char buf[8];
	CHECK(recv(a, buf, sizeof buf, 0) == 2);
	len = sizeof from;
	CHECK(recvfrom(u, buf, sizeof buf, 0, (struct sockaddr *)&from, &len) == 2);
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && st == 0);
	say("fork parent: tcp-from=%d udp-from=%d\n", ap, port(&from));
	close(a);
	close(l);
	close(u);
}

/* reused: the port a closed socket had, bound again explicitly on the
 * IPv6 wildcard address and reached over ::1 (Python's
 * find_unused_port(), then a server on that port). */
static void reused(void) {
	struct sockaddr_storage ss;
	socklen_t len = loopback(&ss, AF_INET, 0, 0);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(s >= 0);
	CHECK(bind(s, (struct sockaddr *)&ss, len) == 0);
	int p = local_port(s);
	close(s);
	say("tcp6 reuse: freed=%d\n", p);

	struct sockaddr_in6 any = {.sin6_family = AF_INET6, .sin6_port = htons(p), .sin6_addr = in6addr_any};
	int l = socket(AF_INET6, SOCK_STREAM, 0);
	CHECK(l >= 0);
	CHECK(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int)) == 0);
	CHECK(bind(l, (struct sockaddr *)&any, sizeof any) == 0);
	CHECK(listen(l, 1) == 0);
	int c = socket(AF_INET6, SOCK_STREAM, 0);
	CHECK(c >= 0);
	len = loopback(&ss, AF_INET6, 0, p);
	if (connect(c, (struct sockaddr *)&ss, len) != 0) {
		say("reuse: connect to [::1]:%d: %s\n", p, strerror(errno));
		exit(1);
	}
	int a = accept(l, NULL, NULL);
	CHECK(a >= 0);
	exchange(c, a);
	say("reuse: [::1] reached the server bound on [::] to the freed port\n");
	close(a);
	close(c);
	close(l);
}

/* has_v6 reports whether the host has an IPv6 loopback to bind to. */
static int has_v6(void) {
	int s = socket(AF_INET6, SOCK_DGRAM, 0);
	if (s < 0)
		return 0;
	struct sockaddr_storage ss;
	socklen_t len = loopback(&ss, AF_INET6, 0, 0);
	int ok = bind(s, (struct sockaddr *)&ss, len) == 0;
	close(s);
	return ok;
}

static void fsid(const char *path) {
	struct statfs fs;
	CHECK(statfs(path, &fs) == 0);
	int v[2];
	memcpy(v, &fs.f_fsid, sizeof v);
	say("statfs %s: fsid=%08x:%08x\n", path, v[0], v[1]);
	say("statfs %s: blocks=%llu bfree=%llu bavail=%llu files=%llu ffree=%llu\n", path,
	    (unsigned long long)fs.f_blocks, (unsigned long long)fs.f_bfree, (unsigned long long)fs.f_bavail,
	    (unsigned long long)fs.f_files, (unsigned long long)fs.f_ffree);
}

int main(void) {
	tcp("tcp4", AF_INET, AF_INET);
	udp("udp4", AF_INET);
	if (has_v6()) {
		tcp("tcp6", AF_INET6, AF_INET6);
		tcp("tcp4mapped", AF_INET, AF_INET6);
		udp("udp6", AF_INET6);
		reused();
	} else {
		say("v6 skipped\n");
	}
	forked();
	fsid("/");
	fsid("/tmp");
	return 0;
}
