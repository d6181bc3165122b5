/* mremap_move: mremap with MREMAP_MAYMOVE grows a mapping of the file
 * argv[1] (and an anonymous one) where the kernel chooses. For a file the
 * kernel's choice depends on the filesystem (huge-page alignment), which
 * the replay's rebuilt root does not share: it must move it to the
 * recorded address all the same.
 */
#include "guest.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv) {
	CHECK(argc == 2);
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	char *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(p != MAP_FAILED);
	char *q = mremap(p, 4096, 4 << 20, MREMAP_MAYMOVE);
	CHECK(q != MAP_FAILED);
	say("file mapping %s, at %p: %.8s\n", q == p ? "grown in place" : "moved", (void *)q, q);
	char *a = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(a != MAP_FAILED);
	strcpy(a, "anonymous");
	char *b = mremap(a, 1 << 20, 16 << 20, MREMAP_MAYMOVE);
	CHECK(b != MAP_FAILED);
	say("anonymous mapping at %p: %s\n", (void *)b, b);
	char *c = mremap(b, 16 << 20, 64 << 10, 0);
	say("shrunk in place %d\n", c == b);
	return 0;
}
