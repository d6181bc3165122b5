/* deep_cwd: a working directory more than 4096 bytes deep, whose getcwd
 * fails with ERANGE, found again as Go's os.Getwd finds it: by stat of
 * "." and lstat of each "../../name" above it. hermit's stat of a path
 * with ".." from such a directory fell back to the real call, whose inode
 * numbers in replay are not the recording's: the replay diverged.
 */
#include "guest.h"
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#define DEPTH 48

int main(void) {
	char name[101];
	memset(name, 'd', 100);
	name[100] = 0;
	char tmpl[] = "/tmp/deep_cwd.XXXXXX";
	CHECK(mkdtemp(tmpl) != NULL && chdir(tmpl) == 0);
	for (int i = 0; i < DEPTH; i++) {
		name[0] = 'a' + i % 26;
		CHECK(mkdir(name, 0700) == 0 && chdir(name) == 0);
	}
	char buf[PATH_MAX];
	int err = getcwd(buf, sizeof buf) == NULL ? errno : 0;
	say("getcwd: %s\n", err == ERANGE ? "ERANGE" : "no error");
	// Walk up: each level's directory is found in its parent by lstat.
	struct stat dot;
	CHECK(stat(".", &dot) == 0);
	static char up[4 * DEPTH + 128];
	int found = 0;
	for (int level = DEPTH - 1; level >= 0; level--) {
		name[0] = 'a' + level % 26;
		size_t n = strlen(up);
		snprintf(up + n, sizeof up - n, "../");
		char path[sizeof up + 128];
		snprintf(path, sizeof path, "%s%s", up, name);
		struct stat d;
		CHECK(lstat(path, &d) == 0);
		if (d.st_dev == dot.st_dev && d.st_ino == dot.st_ino)
			found++;
		CHECK(stat(up, &dot) == 0);
	}
	say("levels found: %d of %d\n", found, DEPTH);
	for (int level = DEPTH - 1; level >= 0; level--) {
		name[0] = 'a' + level % 26;
		CHECK(chdir("..") == 0 && rmdir(name) == 0);
	}
	CHECK(chdir("/") == 0 && rmdir(tmpl) == 0);
	return 0;
}
