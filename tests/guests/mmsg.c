/* mmsg: sendmmsg sends two datagrams over loopback UDP, and recvmmsg
 * (waiting for the first) receives both; each prints the msg_len the
 * kernel filled in, and the receiver the bytes. UDP is outside the guest
 * for a recording, which keeps what both calls wrote: replay ran
 * recvmmsg for real (it waited for ever) and showed sendmmsg's msg_len
 * as 0.
 */
#include "guest.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

int main(void) {
	int r = socket(AF_INET, SOCK_DGRAM, 0), s = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(r >= 0 && s >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof a;
	CHECK(bind(r, (void *)&a, sizeof a) == 0 && getsockname(r, (void *)&a, &l) == 0);
	CHECK(connect(s, (void *)&a, sizeof a) == 0);
	char b1[] = "hello", b2[] = "world!!";
	struct iovec v[2] = {{b1, 5}, {b2, 7}};
	struct mmsghdr m[2];
	memset(m, 0, sizeof m);
	for (int i = 0; i < 2; i++) {
		m[i].msg_hdr.msg_iov = &v[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	int n = sendmmsg(s, m, 2, 0);
	say("sendmmsg: %d, msg_len %u and %u\n", n, m[0].msg_len, m[1].msg_len);
	char buf[64] = {0};
	struct iovec iv[2] = {{buf, 32}, {buf + 32, 32}};
	struct mmsghdr rm[2];
	memset(rm, 0, sizeof rm);
	for (int i = 0; i < 2; i++) {
		rm[i].msg_hdr.msg_iov = &iv[i];
		rm[i].msg_hdr.msg_iovlen = 1;
	}
	n = recvmmsg(r, rm, 2, MSG_WAITFORONE, NULL);
	say("recvmmsg: %d, msg_len %u and %u: %.5s %.7s\n", n, rm[0].msg_len, rm[1].msg_len, buf, buf + 32);
	return 0;
}
