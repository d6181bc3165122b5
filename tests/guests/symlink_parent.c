/* symlink_parent: a directory made through a symlink the program made
 * (mkdir D/link/sub, link -> target), then an open of the link itself
 * with O_NOFOLLOW. hermit record kept a copy of D/link, as the directory
 * it leads to, for replay to start with: replay's symlinkat failed
 * there, and the open found a directory (Go's os.Root MkdirAll tests
 * diverged).
 */
#include "guest.h"
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

int main(void) {
	char d[] = "/tmp/symlink_parent.XXXXXX", p[64];
	CHECK(mkdtemp(d) != NULL && chdir(d) == 0);
	CHECK(mkdir("target", 0700) == 0 && symlink("target", "link") == 0);
	CHECK(mkdir("link/sub", 0700) == 0);
	int fd = open("link", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	say("open of the link: %s\n", fd < 0 ? strerror(errno) : "a directory");
	struct stat st;
	CHECK(stat("target/sub", &st) == 0 && S_ISDIR(st.st_mode));
	say("target/sub is a directory\n");
	CHECK(rmdir("target/sub") == 0 && unlink("link") == 0 && rmdir("target") == 0);
	snprintf(p, sizeof p, "%s", d);
	CHECK(chdir("/") == 0 && rmdir(p) == 0);
	return 0;
}
