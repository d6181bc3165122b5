/* failed_change DIR: DIR holds files a and b. Changes to the files that
   fail (a mkdir of a directory that is there, as Python's
   makedirs(exist_ok=True) makes; a symlink over a file; utimensat of a
   file that is not there), then changes that succeed on DIR's files. A
   replay skips the failed ones, and must not take them for made at the
   next call's exit (a failed mkdir's replay then asked the host about
   DIR at the unlink after it, which its recording had not: npm ci). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static void say(const char *what, int r) { printf("%s: %d (%s)\n", what, r, r ? strerror(errno) : "-"); }
int main(int argc, char **argv) {
	if (argc != 2 || chdir(argv[1]) != 0)
		return 2;
	say("mkdir .", mkdir(".", 0777));
	say("unlink a", unlink("a"));
	say("symlink over b", symlink("x", "b"));
	say("rename b c", rename("b", "c"));
	say("mkdir none/x", mkdir("none/x", 0777));
	say("utimensat none", utimensat(AT_FDCWD, "none", NULL, 0));
	say("unlink c", unlink("c"));
	return 0;
}
