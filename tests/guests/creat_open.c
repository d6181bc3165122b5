/* creat_open: open(O_CREAT) without O_EXCL, of a file that is not there
 * (the call creates it: a dnotify watch on its directory sees that, in a
 * replay too) and of one that is (its content, from before the run, is
 * read back). argv[1]: a directory holding a file "old".
 */
#include "guest.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t created;
static void onio(int sig) { (void)sig; created = 1; }

int main(int argc, char **argv) {
	CHECK(argc == 2 && chdir(argv[1]) == 0);
	signal(SIGIO, onio);
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	CHECK(dir >= 0 && fcntl(dir, F_NOTIFY, DN_CREATE) == 0);
	int fd = openat(dir, "new", O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	say("creating \"new\" signalled the watch: %s\n", created ? "yes" : "no");
	char buf[64] = {0};
	fd = open("old", O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0 && read(fd, buf, sizeof buf - 1) >= 0);
	say("\"old\" holds: %s", buf);
	return 0;
}
