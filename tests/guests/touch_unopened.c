/* touch_unopened: changes the times, mode, owner and size of files it
   never opens (as Java's preferences touch their mod file, and make
   touches its targets), and says what stat saw before and after: a replay
   must find each file as it was. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static void show(const char *what, const char *p, long base) {
	struct stat st;
	if (stat(p, &st) < 0) {
		printf("%s: stat: %s\n", what, strerror(errno));
		return;
	}
	printf("%s: mode %o size %ld mtime %+ld\n", what, (unsigned)(st.st_mode & 07777), (long)st.st_size, (long)st.st_mtime - base);
}
int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		const char *p = argv[i];
		struct stat st;
		if (stat(p, &st) < 0)
			return 2;
		long base = st.st_mtime;
		show("before", p, base);
		struct timespec ts[2] = {{st.st_atime, 0}, {st.st_mtime + 5, 0}};
		printf("utimensat: %d\n", utimensat(AT_FDCWD, p, ts, 0));
		printf("chmod: %d\n", chmod(p, 0600));
		printf("chown: %d\n", chown(p, getuid(), getgid()));
		printf("truncate: %d\n", truncate(p, 3));
		show("after", p, base);
	}
	return 0;
}
