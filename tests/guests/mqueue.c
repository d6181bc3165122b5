/* mqueue.c: POSIX message queues that block until another process acts:
 * a child waits in mq_receive for its parent's message and answers it,
 * the parent waits in mq_receive for the answer, a sender waits on a full
 * queue until the other side receives, and mq_timedreceive on an empty
 * queue times out. */
#include "guest.h"
#include <fcntl.h>
#include <mqueue.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

int main(void) {
	/* Two queues, one each way, so that no reader can take its own
	 * message (natively, on a loaded machine, the parent could). */
	char name[64], back[64];
	snprintf(name, sizeof name, "/hermit-mq-%d", (int)getpid());
	snprintf(back, sizeof back, "/hermit-mq-%d-back", (int)getpid());
	struct mq_attr attr = {.mq_maxmsg = 1, .mq_msgsize = 32};
	mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
	mqd_t a = mq_open(back, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
	CHECK(q != (mqd_t)-1 && a != (mqd_t)-1);
	char buf[32];
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		ssize_t n = mq_receive(q, buf, sizeof buf, NULL);
		CHECK(n > 0);
		say("child: received \"%.*s\"\n", (int)n, buf);
		/* Said before the send: after it, the parent, woken, may write
		 * first (natively, on a loaded machine). */
		say("child: answering; the queue will be full\n");
		CHECK(mq_send(a, "answer", 6, 0) == 0);
		/* The queue holds one message: this send waits for the parent. */
		CHECK(mq_send(a, "second", 6, 0) == 0);
		_exit(0);
	}
	usleep(2000);
	CHECK(mq_send(q, "question", 8, 0) == 0);
	usleep(2000); /* the child takes the question before the parent waits */
	for (int i = 0; i < 2; i++) {
		ssize_t n = mq_receive(a, buf, sizeof buf, NULL);
		CHECK(n > 0);
		say("parent: received \"%.*s\"\n", (int)n, buf);
	}
	CHECK(waitpid(pid, NULL, 0) == pid);
	struct timespec ts;
	CHECK(clock_gettime(CLOCK_REALTIME, &ts) == 0);
	ts.tv_nsec += 300 * 1000 * 1000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	CHECK(mq_timedreceive(q, buf, sizeof buf, NULL, &ts) < 0);
	say("mq_timedreceive of 300 ms on an empty queue: %s\n", errno == ETIMEDOUT ? "ETIMEDOUT" : "other");
	CHECK(mq_unlink(name) == 0 && mq_unlink(back) == 0);
	return 0;
}
