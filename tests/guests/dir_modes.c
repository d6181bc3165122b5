/* dir_modes: a program that drops its privileges (to argv[2]:argv[2])
 * after opening files below directories that the new user may or may not
 * enter: its own, a 0700 directory of root's (where the test builds it),
 * and argv[1], a 0700 directory that user owns, with a 0600 file of its
 * own. The replay's rebuilt directories must refuse and allow the same.
 */
#include "guest.h"

#include <fcntl.h>
#include <libgen.h>
#include <string.h>

static void try(const char *what, const char *path) {
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	say("%s: %s\n", what, fd >= 0 ? "opened" : strerror(errno));
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv) {
	CHECK(argc == 3);
	char self[512], owned[512];
	snprintf(self, sizeof self, "%s", argv[0]);
	snprintf(owned, sizeof owned, "%s/file", argv[1]);
	try("own program as root", self);
	try("owned file as root", owned);
	int id = atoi(argv[2]);
	CHECK(setgid(id) == 0 && setuid(id) == 0);
	try("own program as the user", self);
	try("owned file as the user", owned);
	say("access to own directory: %d\n", access(dirname(self), X_OK) == 0);
	return 0;
}
