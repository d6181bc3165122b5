/* sendmmsg_full dgram|seqpacket|stream: one blocking sendmmsg of 200
 * messages of 1 KiB to a Unix socketpair whose other end a thread reads:
 * it returns 200, as natively, once the reader has made room. Under
 * hermit it blocked in the kernel when the reader's queue filled, with
 * the reader parked: a hang.
 */
#include "guest.h"
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>

#define N 200
#define SIZE 1024

static int s[2], stream;
static long got;

static void *reader(void *arg) {
	(void)arg;
	static char b[2 * SIZE];
	while (got < N * SIZE) {
		ssize_t k = recv(s[1], b, stream ? sizeof b : SIZE, 0);
		CHECK(k > 0);
		for (ssize_t i = 0; i < k; i++)
			CHECK(b[i] == 'a' + (got + i) / SIZE % 26);
		got += k;
	}
	return NULL;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	int type = !strcmp(argv[1], "dgram") ? SOCK_DGRAM : !strcmp(argv[1], "seqpacket") ? SOCK_SEQPACKET : SOCK_STREAM;
	stream = type == SOCK_STREAM;
	CHECK(socketpair(AF_UNIX, type, 0, s) == 0);
	static char buf[N][SIZE];
	static struct mmsghdr m[N];
	static struct iovec v[N];
	for (int i = 0; i < N; i++) {
		memset(buf[i], 'a' + i % 26, SIZE);
		v[i] = (struct iovec){buf[i], SIZE};
		m[i].msg_hdr.msg_iov = &v[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	pthread_t t;
	CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
	int r = sendmmsg(s[0], m, N, 0);
	CHECK(pthread_join(t, NULL) == 0);
	int lens = 1;
	for (int i = 0; i < N; i++)
		lens &= m[i].msg_len == SIZE;
	say("%s: sendmmsg returned %d, every msg_len %s, the reader got %ld\n", argv[1], r, lens ? "1024" : "wrong", got);
	return 0;
}
