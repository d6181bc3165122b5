/* rename_made DIR: in DIR, fails to open target/f (no target yet), makes
   a directory under another name and renames it target, then makes
   target/d and a file in it, as cargo does with its target/ directory.
   The recording must not take target from the host once the run has
   made it: a replay whose root had it from the start made the first
   open succeed. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv) {
	if (argc != 2 || chdir(argv[1]) != 0)
		return 2;
	printf("open target/f: %d\n", open("target/f", O_RDONLY));
	printf("create target/f: %d\n", open("target/f", O_WRONLY | O_CREAT, 0666));
	printf("mkdir tmpdir: %d\n", mkdir("tmpdir", 0777));
	printf("rename tmpdir target: %d\n", rename("tmpdir", "target"));
	printf("mkdir target/d: %d\n", mkdir("target/d", 0777));
	int fd = open("target/d/f", O_WRONLY | O_CREAT, 0666);
	printf("create target/d/f: %d\n", fd >= 0);
	struct stat st;
	printf("stat target/f: %d\n", stat("target/f", &st));
	return 0;
}
