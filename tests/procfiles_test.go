package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// procGlobalScript reads /proc/uptime and /proc/loadavg before and after a
// 2 s sleep.
const procGlobalScript = "cat /proc/uptime /proc/loadavg; sleep 2; cat /proc/uptime"

// TestProcUptimeLoadavg: /proc/uptime and /proc/loadavg tell the guest's
// virtual uptime (advanced by its own sleep) and its own threads, the same
// on every run and in replay, not the host's.
func TestProcUptimeLoadavg(t *testing.T) {
	argv := tool("sh", "-c", procGlobalScript)(t)
	first := hermitRun(t, nil, argv)
	want := regexp.MustCompile(`\A(\d+)\.(\d\d) \d+\.\d\d\n0\.00 0\.00 0\.00 1/\d+ \d+\n(\d+)\.(\d\d) \d+\.\d\d\n\z`)
	m := want.FindStringSubmatch(string(first.Stdout))
	if first.Exit != 0 || m == nil {
		t.Fatalf("hermit run: want two uptimes around a loadavg line; %s", describe(first))
	}
	if before, after := atoi(t, []byte(m[1])), atoi(t, []byte(m[3])); after-before != 2 || m[2] != m[4] {
		t.Errorf("uptime went from %s.%s to %s.%s over a 2 s sleep; want exactly 2 s more", m[1], m[2], m[3], m[4])
	}
	if r := hermitRun(t, nil, argv); string(r.Stdout) != string(first.Stdout) {
		t.Errorf("hermit run 2: %q, run 1 printed %q", r.Stdout, first.Stdout)
	}
	rerunAndReplay(t, argv, string(first.Stdout)) // run 3, a recording and its replays
}

// TestProcStatMeminfo: /proc/stat and /proc/meminfo describe the virtual
// machine (one CPU, 4 GiB, booted at the epoch less the uptime), the same
// on every run and in replay.
func TestProcStatMeminfo(t *testing.T) {
	argv := tool("sh", "-c", "cat /proc/uptime /proc/stat; grep -E '^(MemTotal|MemFree|MemAvailable|Cached):' /proc/meminfo")(t)
	first := hermitRun(t, nil, argv)
	out := string(first.Stdout)
	up := regexp.MustCompile(`\A(\d+)\.\d\d `).FindStringSubmatch(out)
	boot := regexp.MustCompile(`(?m)^btime (\d+)$`).FindStringSubmatch(out)
	if first.Exit != 0 || up == nil || boot == nil {
		t.Fatalf("hermit run: want the uptime and a btime line; %s", describe(first))
	}
	if got, want := atoi(t, []byte(boot[1])), int(detcore.DefaultEpoch.Unix())-atoi(t, []byte(up[1]))-1; got != want && got != want+1 {
		t.Errorf("btime %d, want the virtual epoch less the uptime (%d)", got, want)
	}
	for _, want := range []string{"\ncpu0 ", "MemTotal:        4194304 kB\n", "MemAvailable:    2097152 kB\n", "Cached:                0 kB\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\ncpu1 ") {
		t.Errorf("/proc/stat shows more CPUs than the guest's one:\n%s", out)
	}
	rerunAndReplay(t, argv, out)
}

// TestProcMountinfoStable: /proc/self/mountinfo is the same on every run:
// mount ids renumbered (the kernel's are host-wide), and the machine
// files mounted from a tmpfs of their own, not from a directory with a
// random name.
func TestProcMountinfoStable(t *testing.T) {
	argv := tool("cat", "/proc/self/mountinfo")(t)
	first := hermitRun(t, nil, argv)
	if first.Exit != 0 || !strings.HasPrefix(string(first.Stdout), "2 1 ") || !strings.Contains(string(first.Stdout), " /%proc%cpuinfo /proc/cpuinfo ") {
		t.Fatalf("hermit run: want mounts numbered from 2 (parent 1), /proc/cpuinfo mounted from the machine files; %s", describe(first))
	}
	for i := 2; i <= 3; i++ {
		if r := hermitRun(t, nil, argv); string(r.Stdout) != string(first.Stdout) {
			t.Errorf("hermit run %d differs from run 1 at %s", i, firstDiff(first.Stdout, r.Stdout))
		}
	}
}

// TestProcSchedStable: /proc/self/sched and /proc/self/schedstat, the
// host scheduler's accounting, read the same on every run.
func TestProcSchedStable(t *testing.T) {
	argv := tool("sh", "-c", "cat /proc/self/schedstat /proc/self/sched")(t)
	first := hermitRun(t, nil, argv)
	if first.Exit != 0 || !regexp.MustCompile(`\A\d+ 0 0\n`).Match(first.Stdout) || !strings.Contains(string(first.Stdout), "nr_switches") {
		t.Fatalf("hermit run: want schedstat in virtual time, then sched; %s", describe(first))
	}
	for i := 2; i <= 3; i++ {
		if r := hermitRun(t, nil, argv); string(r.Stdout) != string(first.Stdout) {
			t.Errorf("hermit run %d differs from run 1 at %s", i, firstDiff(first.Stdout, r.Stdout))
		}
	}
}

// TestProcMemoryStable: /proc/self/smaps_rollup, statm and smaps count
// the pages of each mapping that are resident, which the page cache and
// the host's other processes (Pss divides a page among all its sharers)
// decide: they read the same on every run, the totals those of
// /proc/self/status.
func TestProcMemoryStable(t *testing.T) {
	argv := tool("sh", "-c", "cat /proc/self/smaps_rollup /proc/self/statm /proc/self/smaps")(t)
	first := hermitRun(t, nil, argv)
	out := string(first.Stdout)
	if first.Exit != 0 || !regexp.MustCompile(`(?m)^Rss: +1024 kB\nPss: +1024 kB$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^\d+ 256 128 \d+ 0 \d+ 0$`).MatchString(out) || !strings.Contains(out, "Size:") {
		t.Fatalf("hermit run: want smaps_rollup's Rss and Pss as status's VmRSS (1024 kB), statm's resident and shared pages as status's, then smaps; %s", describe(first))
	}
	for i := 2; i <= 3; i++ {
		if r := hermitRun(t, nil, argv); string(r.Stdout) != out {
			t.Errorf("hermit run %d differs from run 1 at %s", i, firstDiff(first.Stdout, r.Stdout))
		}
	}
}

// TestProcHostCounters: the host's counters (/proc/vmstat, interrupts,
// pressure, open files, the entropy pool) read the same on every run, with
// their numbers 0, and /proc/sys/kernel/random/uuid gives a new UUID at
// each read, the same ones on every run, in replay too. (Before, each
// changed from run to run, and --summary counted no nondeterministic point.)
func TestProcHostCounters(t *testing.T) {
	t.Parallel()
	argv := tool("sh", "-c", "cat /proc/sys/kernel/random/uuid /proc/sys/kernel/random/uuid /proc/sys/kernel/random/boot_id "+
		"/proc/sys/fs/file-nr /proc/sys/kernel/random/entropy_avail; head -5 /proc/vmstat; head -3 /proc/interrupts")(t)
	first := hermitRun(t, nil, argv)
	out := string(first.Stdout)
	uuid := `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\n`
	m := regexp.MustCompile(`\A(` + uuid + `)(` + uuid + `)` + uuid + "0\t0\t0\n0\n").FindStringSubmatch(out)
	if first.Exit != 0 || m == nil || m[1] == m[2] {
		t.Fatalf("hermit run: want two different UUIDs, a boot id, and file-nr and entropy_avail of 0; %s", describe(first))
	}
	if regexp.MustCompile(`[1-9]`).MatchString(out[len(m[0]):]) {
		t.Errorf("vmstat and interrupts show numbers other than 0:\n%s", out[len(m[0]):])
	}
	rerunAndReplay(t, argv, out)
}

// TestProcOfTheLauncher: /proc/1 is hermit's launcher, the guest's pid 1
// (Java's ProcessHandle.allProcesses and ps read it). Its stat and maps
// are the same on every run, as the guest's own are (it had ASLR on: its
// stack and heap moved, and with them the length of stat, which made
// Maven's schedule digest differ), and its environ names no random file.
func TestProcOfTheLauncher(t *testing.T) {
	t.Parallel()
	argv := tool("sh", "-c", `cat /proc/1/stat /proc/1/maps; tr '\0' '\n' </proc/1/environ`)(t)
	first := hermitRun(t, nil, argv)
	out := string(first.Stdout)
	if first.Exit != 0 || !strings.Contains(out, "[stack]") || !strings.Contains(out, "HERMIT_LAUNCH_FILES=") {
		t.Fatalf("hermit run: want pid 1's stat, maps (with its stack) and environ; %s", describe(first))
	}
	rerunAndReplay(t, argv, out)
}

// rerunAndReplay checks that a second hermit run of argv prints out, what
// the first printed, and that a recording of it replays.
func rerunAndReplay(t *testing.T, argv []string, out string) {
	t.Helper()
	if r := hermitRun(t, nil, argv); string(r.Stdout) != out {
		t.Errorf("hermit run 2 printed %q, run 1 %q", r.Stdout, out)
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, argv)
	if got := replay(t, dir); string(got.Stdout) != string(rec.Stdout) || got.Exit != rec.Exit {
		t.Errorf("replay: %s; recorded %s", describe(got), describe(rec))
	}
	// And under the debugger, whose tracer must ask the trace the same
	// questions (it hid procfs's links, and the replay diverged).
	if r := runREPLScript(t, dir, []string{"continue"}); !strings.Contains(string(r.Stdout), fmt.Sprintf("the recording ends: the program exited with status %d", rec.Exit)) ||
		!strings.Contains(string(r.Stdout), string(rec.Stdout)) {
		t.Errorf("replay in the REPL, continued to the end: %s; recorded %s", describe(r), describe(rec))
	}
}

// TestLinkIntoProc: a file the program finds through a symbolic link into
// /proc (Debian's /etc/mtab -> /proc/mounts; pip and df look) is there in
// the replay too. The program's own stat follows the link there (hermit
// cannot follow /proc/self as the program does), and the rebuilt root had
// no such link: the replay diverged.
func TestLinkIntoProc(t *testing.T) {
	t.Parallel()
	sh := testenv.Require(t, "sh")
	link := filepath.Join(t.TempDir(), "mtab")
	if err := os.Symlink("/proc/mounts", link); err != nil {
		t.Fatal(err)
	}
	rec := recordReplay(t, nil, []string{sh, "-c", `test -e "$1" && echo found`, "sh", link})
	if string(rec.Stdout) != "found\n" {
		t.Errorf("hermit record: want found; %s", describe(rec))
	}
}

// TestProcLinksToPipes: procfs's links to a pipe or a namespace
// (readlink /proc/self/fd/0 is "pipe:[N]", /proc/self/ns/pid "pid:[N]")
// and /proc/self/fdinfo/0's ino name the virtual inode that stat gives,
// and fdinfo's mnt_id is 0, the same on every run and in replay. They
// named the host's inode and mount, another on every run; and a stat
// through such a link, which runs natively, told another number in replay.
func TestProcLinksToPipes(t *testing.T) {
	t.Parallel()
	argv := tool("sh", "-c", `echo | { readlink /proc/self/fd/0; stat -L -c %i /proc/self/fd/0; grep -E '^(ino|mnt_id):' /proc/self/fdinfo/0; }; `+
		`readlink /proc/self/ns/pid; stat -L -c %i /proc/self/ns/pid`)(t)
	first := hermitRun(t, nil, argv)
	m := regexp.MustCompile(`\Apipe:\[(\d+)\]\n(\d+)\nmnt_id:\t0\nino:\t(\d+)\npid:\[(\d+)\]\n(\d+)\n\z`).FindStringSubmatch(string(first.Stdout))
	if first.Exit != 0 || m == nil {
		t.Fatalf("hermit run: want a pipe's link, inode and fdinfo, then the pid namespace's link and inode; %s", describe(first))
	}
	if m[1] != m[2] || m[3] != m[2] || m[4] != m[5] {
		t.Errorf("the pipe's link names inode %s, its fdinfo %s, stat %s; the namespace's link %s, stat %s", m[1], m[3], m[2], m[4], m[5])
	}
	rerunAndReplay(t, argv, string(first.Stdout))
}

// TestSysvIPCTimes: the times System V IPC_STAT tells of a shared memory
// segment, a semaphore set and a message queue, and /proc/sysvipc/shm's
// (ipcs -t), are the virtual epoch where they are set and 0 where they
// are not, the same on every run and in replay. They were the host's
// clock, and a replay, which runs the calls again, diverged.
func TestSysvIPCTimes(t *testing.T) {
	t.Parallel()
	argv := cGuest("sysv_times.c")(t)
	first := hermitRun(t, nil, argv)
	epoch := strconv.FormatInt(detcore.DefaultEpoch.Unix(), 10)
	want := "shm ctime " + epoch + " atime " + epoch + " dtime 0\nsem ctime " + epoch + " otime " + epoch + "\nmsg ctime " + epoch + " stime " + epoch + " rtime 0\n"
	out := string(first.Stdout)
	if first.Exit != 0 || !strings.HasPrefix(out, want) {
		t.Fatalf("hermit run: want the times\n%s; %s", want, describe(first))
	}
	// key shmid perms size cpid lpid nattch uid gid cuid cgid atime dtime ctime
	row := regexp.MustCompile(`(?m)^ +0 +0 +600 +4096 +\d+ +\d+ +1 +\d+ +\d+ +\d+ +\d+ +` + epoch + ` +0 +` + epoch + ` `)
	if !row.MatchString(out[len(want):]) {
		t.Errorf("/proc/sysvipc/shm has no row of the segment attached once at %s, never detached:\n%s", epoch, out[len(want):])
	}
	rerunAndReplay(t, argv, out)
}

// TestProcStatTimes: /proc/PID/stat tells when each process started, in
// virtual time since boot (btime is the epoch less the uptime at the
// run's start), and the CPU time it used: a process made after a 2 s
// sleep started 200 ticks later, and neither used a second of CPU. (All
// had the run's start as starttime and the run's length as utime: ps
// showed every process 99% busy since the start.)
func TestProcStatTimes(t *testing.T) {
	t.Parallel()
	argv := tool("sh", "-c", `grep btime /proc/stat; cut -d' ' -f14,22 /proc/self/stat; sleep 2; cut -d' ' -f14,22 /proc/self/stat`)(t)
	first := hermitRun(t, nil, argv)
	m := regexp.MustCompile(`\Abtime (\d+)\n(\d+) (\d+)\n(\d+) (\d+)\n\z`).FindStringSubmatch(string(first.Stdout))
	if first.Exit != 0 || m == nil {
		t.Fatalf("hermit run: want btime, then two processes' utime and starttime; %s", describe(first))
	}
	btime, u1, s1, u2, s2 := atoi(t, []byte(m[1])), atoi(t, []byte(m[2])), atoi(t, []byte(m[3])), atoi(t, []byte(m[4])), atoi(t, []byte(m[5]))
	if start := btime + s1/100; start != int(detcore.DefaultEpoch.Unix()) {
		t.Errorf("the first process started at %d (btime %d + %d ticks), want the epoch %d", start, btime, s1, detcore.DefaultEpoch.Unix())
	}
	if s2-s1 != 200 {
		t.Errorf("the process made after a 2 s sleep started %d ticks after the first, want 200", s2-s1)
	}
	if u1 >= 100 || u2 >= 100 {
		t.Errorf("utime %d and %d ticks, want under a second each: they did little", u1, u2)
	}
	rerunAndReplay(t, argv, string(first.Stdout))
}
