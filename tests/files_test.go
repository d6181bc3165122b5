package tests

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// fileNames are the files makeShuffledDir creates, besides the
// subdirectory "sub", the symlink "link" and the hard link "hard".
var fileNames = []string{"alpha", "beta", "delta", "epsilon", "gamma", "kappa", "mu", "omega", "zeta"}

// makeShuffledDir creates a fresh directory whose files are created in a
// random order, each with a random real modification time, so that
// inode numbers, directory order and times all differ from the last one.
func makeShuffledDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	names := append(slices.Clone(fileNames), "sub")
	for _, i := range rand.Perm(len(names)) {
		p := filepath.Join(dir, names[i])
		var err error
		if names[i] == "sub" {
			err = os.Mkdir(p, 0o755)
		} else {
			err = os.WriteFile(p, []byte(strings.Repeat(names[i], 3)+"\n"), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-time.Duration(rand.IntN(1e6)) * time.Second)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	for _, err := range []error{
		os.Symlink("alpha", filepath.Join(dir, "link")),
		os.Link(filepath.Join(dir, "beta"), filepath.Join(dir, "hard")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runIn runs `hermit run -- ARGV` (or ARGV natively) in directory dir.
func runIn(t *testing.T, dir string, hermit bool, argv ...string) testenv.Result {
	t.Helper()
	name, args := argv[0], argv[1:]
	if hermit {
		name, args = testenv.Hermit(t), hermitArgs(nil, argv)
	}
	return testenv.RunWith(t, testenv.Opts{Timeout: runTimeout, Dir: dir}, name, args...)
}

// TestFilesListingDeterministic: ls -li, find and stat over a directory
// created afresh in a shuffled order print the same under hermit every
// time, inode numbers and times included, while natively they differ.
func TestFilesListingDeterministic(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"ls", "find", "stat"} {
		testenv.Require(t, tool)
	}
	sh := testenv.Require(t, "sh")
	script := `ls -li; find . -printf '%i %p %T@\n'; stat . *`
	argv := []string{sh, "-c", script}

	nat1, nat2 := runIn(t, makeShuffledDir(t), false, argv...), runIn(t, makeShuffledDir(t), false, argv...)
	if nat1.Exit != 0 || bytes.Equal(nat1.Stdout, nat2.Stdout) {
		t.Fatalf("native runs over two fresh directories: want exit 0 and different listings, got\n%s\nand\n%s", describe(nat1), describe(nat2))
	}
	var first testenv.Result
	for i := 1; i <= hermitRuns; i++ {
		r := runIn(t, makeShuffledDir(t), true, argv...)
		if r.Exit != 0 {
			t.Fatalf("hermit run %d: %s", i, describe(r))
		}
		if got, want := findOrder(r.Stdout), slices.Sorted(slices.Values(append(fileNames, "hard", "link", "sub"))); !slices.Equal(got, want) {
			t.Errorf("hermit run %d: find lists %q, want the sorted %q", i, got, want)
		}
		if i == 1 {
			first = r
			continue
		}
		if d := firstDiff(first.Stdout, r.Stdout); d != "" {
			t.Fatalf("hermit run %d: stdout differs from run 1 at %s\nrun 1:\n%s\nrun %d:\n%s", i, d, first.Stdout, i, r.Stdout)
		}
		if d := firstDiff(first.Stderr, r.Stderr); d != "" {
			t.Fatalf("hermit run %d: stderr differs from run 1 at %s", i, d)
		}
	}
	out := string(first.Stdout)
	for _, want := range []string{"Jan  1 00:00 alpha", "./alpha 1767225600.0000000000", "IO Block: 4096", "Modify: 2026-01-01 00:00:00.000000000"} {
		if !strings.Contains(out, want) {
			t.Errorf("hermit run: stdout lacks %q:\n%s", want, out)
		}
	}
}

// findOrder returns the names find printed ("INODE ./NAME TIME" lines),
// in its order.
func findOrder(out []byte) []string {
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && strings.HasPrefix(f[1], "./") {
			names = append(names, f[1][2:])
		}
	}
	return names
}

// TestFilesStatErrors: the stat family fails under hermit exactly as
// natively (differential), including paths the tracer cannot look up
// itself (/proc/self, /dev/stdin) and paths that leave the directory.
func TestFilesStatErrors(t *testing.T) {
	t.Parallel()
	py := testenv.Require(t, "python3")
	script := `
import errno, os, sys
base = os.path.basename(os.getcwd())
os.symlink("loop", "loop")
os.symlink("/nonexistent", "dangling")
os.symlink(os.getcwd() + "/alpha", "abs")
fd = os.open(".", os.O_RDONLY)
paths = ["alpha", "missing", "alpha/x", "alpha/", "sub/", "loop", "dangling", "abs", "",
         "/nonexistent/x", "/proc/self/fd/0", "/dev/stdin", "../" + base + "/alpha", "sub/../alpha"]
for p in paths:
    for name, f in (("stat", os.stat), ("lstat", os.lstat), ("at", lambda p: os.stat(p, dir_fd=fd))):
        try:
            st = f(p)
            print(repr(p), name, "ok", oct(st.st_mode))
        except OSError as e:
            print(repr(p), name, errno.errorcode[e.errno])
for bad in (-1, 999):
    try:
        os.fstat(bad)
    except OSError as e:
        print("fstat", bad, errno.errorcode[e.errno])
`
	argv := []string{py, "-c", script}
	nat := runIn(t, makeShuffledDir(t), false, argv...)
	got := runIn(t, makeShuffledDir(t), true, argv...)
	if nat.Exit != 0 || got.Exit != 0 {
		t.Fatalf("native: %s\nhermit: %s", describe(nat), describe(got))
	}
	if d := firstDiff(nat.Stdout, got.Stdout); d != "" {
		t.Errorf("hermit run: stdout differs from native at %s\nnative:\n%s\nhermit:\n%s", d, nat.Stdout, got.Stdout)
	}
}

// dirwalkC reads a directory with readdir, telldir, seekdir and
// rewinddir, then with raw getdents64 calls and buffers holding one entry,
// and checks d_ino against fstatat's st_ino.
const dirwalkC = `#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
	DIR *d = opendir(".");
	struct dirent *e;
	long pos[64];
	char names[64][256];
	int n = 0;
	for (long p = telldir(d); (e = readdir(d)) && n < 64; p = telldir(d), n++) {
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) return 1;
		pos[n] = p;
		snprintf(names[n], sizeof names[n], "%s", e->d_name);
		printf("%s d_off=%ld ino %s\n", e->d_name, (long)e->d_off, e->d_ino == st.st_ino ? "matches" : "DIFFERS");
	}
	for (int i = n - 1; i >= 0; i -= 3) {
		seekdir(d, pos[i]);
		e = readdir(d);
		printf("seekdir to %s: %s\n", names[i], e && !strcmp(e->d_name, names[i]) ? "ok" : "WRONG");
	}
	rewinddir(d);
	int m = 0;
	while (readdir(d)) m++;
	printf("rewinddir: %d of %d entries\n", m, n);
	closedir(d);

	int fd = open(".", O_RDONLY | O_DIRECTORY);
	char buf[4096];
	long r = syscall(SYS_getdents64, fd, buf, 8);
	printf("8-byte buffer: %s\n", r < 0 && errno == EINVAL ? "EINVAL" : "?");
	for (int k = 0; (r = syscall(SYS_getdents64, fd, buf, 40)) > 0; k++) {
		printf("[%s at %ld]", ((struct dirent64 *)buf)->d_name, (long)lseek(fd, 0, SEEK_CUR));
		if (k == 2) {
			fflush(stdout);
			if (fork() == 0) {
				syscall(SYS_getdents64, fd, buf, 40);
				printf("[child read %s]", ((struct dirent64 *)buf)->d_name);
				fflush(stdout);
				_exit(0);
			}
			wait(NULL);
		}
	}
	printf(" end %ld\n", r);
	r = syscall(SYS_getdents64, 999, buf, sizeof buf);
	printf("bad fd: %s\n", r < 0 && errno == EBADF ? "EBADF" : "?");
	return 0;
}
`

// TestFilesReaddir: readdir, telldir, seekdir and rewinddir work on the
// sorted listing; d_off is the index of the next entry; raw getdents64
// with small buffers, EINVAL and a forked child sharing the offset behave
// as the kernel's.
func TestFilesReaddir(t *testing.T) {
	t.Parallel()
	cc := testenv.Require(t, "cc")
	bin := filepath.Join(t.TempDir(), "dirwalk")
	src := bin + ".c"
	if err := os.WriteFile(src, []byte(dirwalkC), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := testenv.Run(t, runTimeout, cc, "-O1", "-Wall", "-Werror", "-o", bin, src); r.Exit != 0 {
		t.Fatalf("cc: %s", describe(r))
	}
	got := runIn(t, makeShuffledDir(t), true, bin)
	out := string(got.Stdout)
	if got.Exit != 0 || strings.Contains(out, "DIFFERS") || strings.Contains(out, "WRONG") {
		t.Fatalf("hermit run: %s", describe(got))
	}
	for _, want := range []string{
		". d_off=1 ino matches\n.. d_off=2 ino matches\nalpha d_off=3 ino matches\nbeta d_off=4",
		"rewinddir: 14 of 14 entries\n",
		"8-byte buffer: EINVAL\n",
		"[. at 1][.. at 2][alpha at 3][child read beta][delta at 5]",
		"[zeta at 14] end 0\nbad fd: EBADF\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("hermit run: stdout lacks %q:\n%s", want, out)
		}
	}
}

// TestFilesTimes: files from the host read the epoch, so make sees no
// clock skew; files the guest writes get the virtual time of the write,
// touch sets the time it is given, and make rebuilds what is out of date.
func TestFilesTimes(t *testing.T) {
	t.Parallel()
	mk := testenv.Require(t, "make")
	sh := testenv.Require(t, "sh")
	dir := t.TempDir()
	makefile := "out: in\n\tcat in > out\nstamp: out\n\ttouch stamp\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(makefile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(365 * 24 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "Makefile"), future, future); err != nil {
		t.Fatal(err)
	}
	// Under `make test` the outer make's variables would make these print
	// "make[1]:" and Entering/Leaving lines.
	script := `unset MAKELEVEL MAKEFLAGS MFLAGS; ` + mk + ` stamp && ` + mk + ` stamp && echo y >> in && ` + mk + ` stamp && touch -d 2030-02-03 old &&
stat -c '%n %y' Makefile in out stamp old`
	r := runIn(t, dir, true, sh, "-c", script)
	if r.Exit != 0 || bytes.Contains(r.Stderr, []byte("skew")) || bytes.Contains(r.Stderr, []byte("in the future")) {
		t.Fatalf("hermit run: %s", describe(r))
	}
	lines := strings.Split(strings.TrimSpace(string(r.Stdout)), "\n")
	wantMakes := []string{"cat in > out", "touch stamp", "make: 'stamp' is up to date.", "cat in > out", "touch stamp"}
	if len(lines) != len(wantMakes)+5 || !slices.Equal(lines[:len(wantMakes)], wantMakes) {
		t.Fatalf("hermit run: want make to print %q, then five stat lines; got\n%s", wantMakes, r.Stdout)
	}
	stats := lines[len(wantMakes):]
	if stats[0] != "Makefile 2026-01-01 00:00:00.000000000 +0000" || stats[4] != "old 2030-02-03 00:00:00.000000000 +0000" {
		t.Errorf("want the Makefile at the epoch and old at 2030-02-03, got\n%s", strings.Join(stats, "\n"))
	}
	if !(stats[0][9:] < stats[1][3:] && stats[1][3:] < stats[2][4:] && stats[2][4:] < stats[3][6:]) {
		t.Errorf("want in, out and stamp written in that order after the epoch, got\n%s", strings.Join(stats, "\n"))
	}
}

// TestFilesTimesBesideWrites: an open with O_TRUNC, truncate(2) and an
// open that creates a file move its mtime as natively (hermit kept the
// time of the last write, or the epoch); O_CREAT of a file that is there
// and a read-only open do not. A directory's mtime moves as entries are
// made in it and taken out (it never moved), by creat, openat2 and the
// bind of a Unix socket too (they did not move it); a FIFO, socket, node
// or symbolic link made has the time of its making (it had the epoch's:
// CPython's test_tarfile extractall_none_mtime).
func TestFilesTimesBesideWrites(t *testing.T) {
	checkCompat(t, []compatCase{{"truncating and creating opens, truncate", cGuest("file_times.c"), `an open with O_TRUNC: moved 1 s
truncate(2): moved 1 s
O_CREAT of a file that is there: moved 0 s
a read-only open: moved 0 s
a new file: 3 s after the truncate
a mkdir that fails: its directory moved 0 s
a file made in a directory: moved 2 s
a file there truncated: moved 0 s
rename: moved 2 s
symlink: moved 1 s
mkdir: moved 1 s
rmdir: moved 1 s
unlinkat: moved 1 s
creat: moved 1 s
creat of a file that is there: the file moved 1 s, the directory 0 s
openat2 that creates: moved 2 s
openat2 with O_TRUNC: the file moved 1 s
bind of a Unix socket: the directory moved 2 s, the file made there at the same time
mkfifo: the directory moved 1 s, the file made there at the same time
mknod of a regular file: the directory moved 1 s, the file made there at the same time
symlink: the directory moved 1 s, the file made there at the same time
`}, {"python imports a module written after its first look", pyGuest("import_new.py"), "imported a module written after the first look: 42\n"}})
}

// TestFilesQueriesRecorded: readlink and access, which a recording
// answers at their entry when the answer is an error or a file's
// existence, tell the guest what they tell it natively, in the recording
// and in its replay: links, directories, dangling and looping links,
// missing paths, procfs, bad descriptors, sizes, modes and flags.
func TestFilesQueriesRecorded(t *testing.T) {
	t.Parallel()
	bin := testenv.BuildC(t, "queries.c")
	nat := native(t, []string{bin, t.TempDir()})
	if nat.Exit != 0 {
		t.Fatalf("native: %s", describe(nat))
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, []string{bin, t.TempDir()})
	sameRun(t, "hermit record (against the native run)", nat, rec)
	sameRun(t, "hermit replay", rec, replay(t, dir))
}

// TestGuestMadeTrees: trees the program makes replay as it made them. A
// working directory deeper than 4096 bytes, found again by stat of "."
// and lstat of "../../name" above it, as Go's os.Getwd does (the lstats
// fell back to the real call, whose inode numbers in replay were not the
// recording's: Go's TestGetwdDeep diverged). A directory made through a
// symlink the program made (the recording kept a copy of the link, as a
// directory, for replay to start with: Go's os.Root tests diverged).
func TestGuestMadeTrees(t *testing.T) {
	t.Parallel()
	checkCompat(t, []compatCase{
		{"48 levels of 100 bytes", cGuest("deep_cwd.c"), "getcwd: ERANGE\nlevels found: 48 of 48\n"},
		{"mkdir through a symlink", cGuest("symlink_parent.c"), "open of the link: Not a directory\ntarget/sub is a directory\n"},
	})
}

// TestFilesBirthTime: a file or directory the guest makes is born at the
// virtual time it makes it (statx's birth time); one from the host, at
// the epoch. (Every birth time was the epoch: a file made a second in was
// born before it was made.)
func TestFilesBirthTime(t *testing.T) {
	t.Parallel()
	argv := tool("sh", "-c", `sleep 1; f=$(mktemp); mkdir "$f.d"; echo x > "$f"; stat -c %W "$f" "$f.d" /etc/hostname`)(t)
	first := hermitRun(t, nil, argv)
	epoch := detcore.DefaultEpoch.Unix()
	want := fmt.Sprintf("%d\n%d\n%d\n", epoch+1, epoch+1, epoch)
	if first.Exit != 0 || string(first.Stdout) != want {
		if strings.HasPrefix(string(first.Stdout), "0\n") {
			testenv.Skip(t, "this machine's /tmp keeps no birth times")
		}
		t.Fatalf("hermit run: want birth times %q (made 1 s in; the host's file at the epoch); %s", want, describe(first))
	}
	rerunAndReplay(t, argv, string(first.Stdout))
}
