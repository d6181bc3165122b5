package ptrace_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/ptrace"
)

// rootGuest runs in the replay root. It prints what it sees, one
// "key=value" line each, and writes files that must not reach the host.
const rootGuest = `
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void show(const char *key, const char *path) {
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	if (!f) {
		printf("%s=absent\n", key);
		return;
	}
	if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	printf("%s=%s\n", key, buf);
}

static int cpus(void) {
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f) return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "processor", 9)) n++;
	fclose(f);
	return n;
}

static const char *put(const char *path) {
	FILE *f = fopen(path, "w");
	if (!f || fputs("guest\n", f) < 0 || fclose(f)) return "fail";
	return "ok";
}

int main(int argc, char **argv) {
	char buf[256] = "";
	printf("cwd=%s\n", getcwd(buf, sizeof buf) ? buf : "?");
	show("data", "/data/msg.txt");
	show("relative", "../data/msg.txt");
	printf("write=%s\n", put("out.txt"));
	show("readback", "out.txt");
	printf("tmp=%s\n", put("/tmp/scratch"));
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	printf("exe=%s\n", buf);
	printf("pid=%d\n", getpid());
	show("online", "/sys/devices/system/cpu/online");
	printf("cpus=%d\n", cpus());
	int fd = open("/dev/null", O_WRONLY);
	printf("devnull=%s\n", fd >= 0 && write(fd, "x", 1) == 1 ? "ok" : "fail");
	show("host", argv[1]);
	show("passwd", "/etc/passwd");
	printf("up=%s\n", chdir("/../../..") == 0 && getcwd(buf, sizeof buf) ? buf : "?");
	return 3;
}
`

// rootRun is a guest run in a replay root: its root directory on the
// host, and what the guest printed.
type rootRun struct {
	tmp, root string
	out       map[string]string
}

// newRootRun makes a root under a new temporary directory holding the
// guest at /bin/prog, /data/msg.txt and /work, and calls setup, if set, to
// add to it.
func newRootRun(t *testing.T, setup func(r *rootRun)) *rootRun {
	t.Helper()
	r := &rootRun{tmp: t.TempDir()}
	r.root = filepath.Join(r.tmp, "root")
	src := filepath.Join(r.tmp, "guest.c")
	if err := os.WriteFile(src, []byte(rootGuest), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"bin", "data", "work"} {
		if err := os.MkdirAll(filepath.Join(r.root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	prog := filepath.Join(r.root, "bin", "prog")
	if out, err := exec.Command("cc", "-static", "-O1", "-o", prog, src).CombinedOutput(); err != nil {
		t.Skipf("needs a C compiler that links statically (cc -static): %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(r.root, "data", "msg.txt"), []byte("from the root\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(r)
	}
	return r
}

// run runs the guest with argv[1] hostPath and returns its exit status.
func (r *rootRun) run(t *testing.T, hostPath string) int {
	t.Helper()
	stdout, err := os.Create(filepath.Join(r.tmp, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(r.tmp, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()

	// The tracer stays bound to this thread; it is not unlocked, so that
	// it ends with the test.
	runtime.LockOSThread()
	tr, tid, err := ptrace.Start(ptrace.Options{
		Root: r.root, Path: "/bin/prog", Argv: []string{"prog", hostPath}, Dir: "/work",
		Env: []string{"PATH=/bin"}, CPU: -1, CPUs: rootCPUs, Hostname: "hermit",
		Traced: detcore.InterceptedSyscalls(), Stdout: stdout, Stderr: stderr,
	})
	if err != nil {
		skipUnprivileged(t, err, stderr)
		t.Fatal(err)
	}
	res, err := detcore.NewEngine(tr, detcore.Config{CPUs: rootCPUs}, tid).Run()
	if err != nil {
		tr.KillAll()
		tr.Close()
		t.Fatal(err)
	}
	tr.Close()
	b, err := os.ReadFile(stdout.Name())
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := os.ReadFile(stderr.Name())
	t.Logf("guest output:\n%s\nstderr:\n%s", b, msg)
	r.out = map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(l, "=")
		r.out[k] = v
	}
	return res.ExitCode
}

func (r *rootRun) check(t *testing.T, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if r.out[k] != w {
			t.Errorf("%s = %q, want %q", k, r.out[k], w)
		}
	}
}

// rootCPUs is how many CPUs the root tests' guest is told it has: not
// the default, so that the number is seen to pass through.
const rootCPUs = 3

// TestRoot runs a static program in a root made of a few files and checks
// that it sees them, and only them, and that its writes stay in the run.
func TestRoot(t *testing.T) {
	r := newRootRun(t, nil)
	secret := filepath.Join(r.tmp, "secret")
	if err := os.WriteFile(secret, []byte("host only\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := listTree(t, r.root)
	if code := r.run(t, secret); code != 3 {
		t.Errorf("exit status %d, want 3", code)
	}
	r.check(t, map[string]string{
		"cwd":      "/work",
		"data":     "from the root",
		"relative": "from the root",
		"write":    "ok",
		"readback": "guest",
		"tmp":      "ok",
		"exe":      "/bin/prog",
		"pid":      "2",
		"online":   "0-2",
		"cpus":     "3",
		"devnull":  "ok",
		"host":     "absent",
		"passwd":   "absent",
		"up":       "/",
	})
	if after := listTree(t, r.root); after != before {
		t.Errorf("the root changed on the host:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestRootHostileLinks gives the root links where the launcher mounts
// things (/sys, /tmp) that point at a host directory: the launcher must not
// follow them, and the guest must see them resolve inside its root.
func TestRootHostileLinks(t *testing.T) {
	var outside string
	r := newRootRun(t, func(r *rootRun) {
		outside = filepath.Join(r.tmp, "outside")
		if err := os.Mkdir(outside, 0o777); err != nil {
			t.Fatal(err)
		}
		for _, l := range []string{"sys", "tmp"} {
			if err := os.Symlink(outside, filepath.Join(r.root, l)); err != nil {
				t.Fatal(err)
			}
		}
	})
	before := listTree(t, r.root)
	r.run(t, outside)
	// /tmp/scratch resolves to the missing r.tmp/outside/scratch of the root.
	r.check(t, map[string]string{"data": "from the root", "tmp": "fail", "online": "absent", "host": "absent"})
	if ents, err := os.ReadDir(outside); err != nil || len(ents) != 0 {
		t.Errorf("%s holds %v (%v), want nothing", outside, ents, err)
	}
	if after := listTree(t, r.root); after != before {
		t.Errorf("the root changed on the host:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestRootMissingDir checks that a working directory missing from the
// root fails the launch with a stage, not a hang or a host fallback.
func TestRootMissingDir(t *testing.T) {
	root := t.TempDir()
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	runtime.LockOSThread()
	tr, _, err := ptrace.Start(ptrace.Options{
		Root: root, Path: "/bin/true", Argv: []string{"true"}, Dir: "/nowhere",
		CPU: -1, Traced: detcore.InterceptedSyscalls(), Stderr: stderr,
	})
	if err == nil {
		tr.KillAll()
		tr.Close()
		t.Fatal("Start succeeded, want an error")
	}
	skipUnprivileged(t, err, stderr)
	msg, _ := os.ReadFile(stderr.Name())
	if !strings.Contains(string(msg), "entering the working directory in the new root: /nowhere") {
		t.Errorf("launcher said %q, want it to name the working directory", msg)
	}
}

// skipUnprivileged skips t when, without root, the launch failed for want
// of user namespaces or of overlayfs in one (kernels before 6.6 have no
// user xattrs on tmpfs, the upper layer).
func skipUnprivileged(t *testing.T, err error, stderr *os.File) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	msg, _ := os.ReadFile(stderr.Name())
	switch {
	case strings.Contains(err.Error(), "creating pid/mount/uts namespaces"):
		t.Skipf("needs root or unprivileged user namespaces: %v", err)
	case strings.Contains(string(msg), "mounting an overlay"):
		t.Skipf("needs root or overlayfs with a tmpfs upper layer in a user namespace (Linux 6.6+): %s", strings.TrimSpace(string(msg)))
	}
}

// listTree lists every path under dir with its mode and size.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, rel+" "+fi.Mode().String()+" "+fi.ModTime().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
