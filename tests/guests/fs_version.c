/* fs_version: creates a file in the directory argv[1] and asks for its
 * inode generation with ioctl(FS_IOC_GETVERSION), which ext4 and tmpfs
 * draw at random for each new inode. Prints it, or the errno when the
 * file system keeps none. */
#include "guest.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>

int main(int argc, char **argv) {
	CHECK(argc == 2);
	char path[4096];
	snprintf(path, sizeof path, "%s/fs_version.tmp", argv[1]);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	long version = -1;
	if (ioctl(fd, FS_IOC_GETVERSION, &version) == 0)
		say("version %ld\n", version);
	else
		say("FS_IOC_GETVERSION: %s\n", strerror(errno));
	long bad;
	CHECK(ioctl(-1, FS_IOC_GETVERSION, &bad) == -1 && errno == EBADF);
	say("bad descriptor: EBADF\n");
	close(fd);
	unlink(path);
	return 0;
}
