package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// Calls whose replay diverged (#11 item 6): each guest is recorded and
// replayed, and the replay must show what the recording did. What hermit
// cannot replay is refused: the recording warns in one line naming the
// call, and the replay stops there with the same words.

// recordReplay records argv with the record flags and replays it: the
// replay must show the recording's stdout, stderr and exit status (which
// must be 0).
func recordReplay(t *testing.T, flags, argv []string) testenv.Result {
	t.Helper()
	return recordReplayIn(t, nil, flags, argv)
}

// recordReplayIn is recordReplay with the recording started by the
// command wrap, which runs its arguments (hermit record ...).
func recordReplayIn(t *testing.T, wrap, flags, argv []string) testenv.Result {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	args := append(append(append([]string{"record", "-o", dir}, flags...), "--"), argv...)
	cmd := append(append(slices.Clone(wrap), testenv.Hermit(t)), args...)
	rec := testenv.RunWith(t, hermitOpts(t, nil), cmd[0], cmd[1:]...)
	if !strings.Contains(string(rec.Stderr), savedLine+dir) {
		t.Fatalf("hermit %s: no trace saved\n%s", strings.Join(args, " "), describe(rec))
	}
	rec.Stderr = guestStderr(rec.Stderr)
	if rec.Exit != 0 {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	// hermit's own lines (a warning the replay gives again) are not the
	// guest's output.
	rep := replay(t, dir)
	raw := rep.Stderr
	rep.Stderr = guestStderr(rep.Stderr)
	if !bytes.Equal(rep.Stdout, rec.Stdout) || !bytes.Equal(rep.Stderr, rec.Stderr) || rep.Exit != rec.Exit {
		// hermit's own lines say why (a divergence, with its event),
		// which the comparison leaves out.
		t.Logf("replay's stderr, hermit's lines included:\n%s", raw)
	}
	sameRun(t, "replay", rec, rep)
	return rec
}

// TestReplayCompat: guests of the classes that replay identically.
func TestReplayCompat(t *testing.T) {
	cases := []struct {
		name string
		root bool // needs root: mounts, namespaces, capabilities, netfilter
		argv func(t *testing.T) []string
	}{
		// /proc/self/mem and /proc/PID/mem are the guest's own memory:
		// replay reads and writes them for real.
		{"proc mem", false, func(t *testing.T) []string { return cGuest("proc_mem.c")(t) }},
		// Files whose times, mode, owner and size the guest changes
		// without opening them: replay's root has them as they were (the
		// times' change failed there, and the replay diverged at the
		// lookup after it).
		{"files changed but never opened", false, func(t *testing.T) []string {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			for _, f := range []string{a, b} {
				if err := os.WriteFile(f, []byte("content of "+f), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			return append(cGuest("touch_unopened.c")(t), a, b)
		}},
		// copy_file_range from a file that was there before to one the
		// guest makes: in a replay they are on two layers of an overlay,
		// where the kernel refuses it (EXDEV); cp and cat make it. (Not
		// in /tmp, which is an overlay in the recording too.)
		{"copy_file_range", false, func(t *testing.T) []string {
			dir, err := os.MkdirTemp("/var/tmp", "hermit-copy-range-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			in := filepath.Join(dir, "in")
			if err := os.WriteFile(in, []byte("the input file's 33 bytes of text"), 0o644); err != nil {
				t.Fatal(err)
			}
			return append(cGuest("copy_range.c")(t), in, filepath.Join(dir, "out"))
		}},
		// A rename out of the private /tmp, which fails there (EXDEV)
		// and not in a replay's root, and mv's copy after it.
		{"a rename that fails with EXDEV", false, func(t *testing.T) []string {
			dir, err := os.MkdirTemp("/var/tmp", "hermit-rename-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			return append(cGuest("rename_exdev.c")(t), dir)
		}},
		// A directory the guest made by a rename, after an open in it
		// failed (cargo's target/).
		{"a directory made by a rename", false, func(t *testing.T) []string {
			return append(cGuest("rename_made.c")(t), t.TempDir())
		}},
		// Changes to the files that fail, each before one that succeeds
		// (npm ci; Python's makedirs(exist_ok=True), then an unlink).
		{"failed changes before others", false, func(t *testing.T) []string {
			dir := t.TempDir()
			for _, f := range []string{"a", "b"} {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			return append(cGuest("failed_change.c")(t), dir)
		}},
		// A program larger than recorder.LargeFile (Chromium's): its
		// code is stored all the same, or the replay cannot exec it.
		{"a program of 300 MB", false, func(t *testing.T) []string {
			argv := cGuest("pgrp.c")(t)
			big := filepath.Join(t.TempDir(), "big")
			b, err := os.ReadFile(argv[0])
			if err == nil {
				err = os.WriteFile(big, b, 0o755)
			}
			if err == nil {
				err = os.Truncate(big, 300<<20)
			}
			if err != nil {
				t.Fatal(err)
			}
			return append([]string{big}, argv[1:]...)
		}},
		// A signal wakes an epoll_wait of a signalfd.
		{"epoll of a signalfd", false, cGuest("signalfd_wait.c", "e")},
		// Process groups and sessions: a replay's guest is in a group of
		// its own.
		{"process group ids", false, cGuest("pgrp.c")},
		// A signal that ends a probed wait (EINTR) or has it made again.
		{"a signal ends a probed wait", false, cGuest("wait_signal.c", "eintr")},
		{"a signal restarts a probed wait", false, cGuest("wait_signal.c", "restart")},
		// A signal that interrupts a read waiting in hermit's code.
		{"a signal interrupts a read of an empty pipe", false, cGuest("pipe_signal.c")},
		// The interpreter of a script the guest writes and then runs.
		{"exec a written script", false, func(t *testing.T) []string {
			return []string{testenv.BuildC(t, "exec_written.c"), t.TempDir()}
		}},
		// Mounts in the guest's mount namespace: a tmpfs (made again),
		// bind mounts of its own directory (made again) and of /etc
		// (emulated, /etc's files the guest read are in the trace),
		// remounts, propagation, the new mount API with a tmpfs.
		{"mounts", true, func(t *testing.T) []string {
			return []string{testenv.BuildC(t, "mounts.c"), t.TempDir(), "all"}
		}},
		// A bind mount of a host file (the program itself) is made
		// again from the file's copy in the trace; the copy then runs
		// from a descriptor whose mount is gone.
		{"bind mount of a host file", true, func(t *testing.T) []string {
			return []string{testenv.BuildC(t, "mounts.c"), t.TempDir(), "selfbind"}
		}},
		{"unshare and clone with namespaces", true, func(t *testing.T) []string { return cGuest("namespaces.c")(t) }},
		// The capability queries answer from the recording.
		{"capabilities", true, func(t *testing.T) []string { return cGuest("caps.c")(t) }},
		// iptables calls write through pointers in their arguments.
		{"netfilter sockopts", true, func(t *testing.T) []string { return cGuest("netfilter.c")(t) }},
		// The signals of the guest's own changes come again in replay.
		{"dnotify", false, func(t *testing.T) []string { return []string{testenv.BuildC(t, "dnotify.c"), t.TempDir()} }},
		// 32-bit calls fail with ENOSYS, in replay too.
		{"int 0x80", false, func(t *testing.T) []string { return int80Guest(t) }},
		// splice, sendfile and tee between a TCP socket (a stand-in in
		// replay) and the guest's pipes and files: replay redoes the
		// guest's end.
		{"splice and sendfile with a socket", false, func(t *testing.T) []string {
			return []string{testenv.BuildC(t, "splice.c"), t.TempDir()}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.root && os.Geteuid() != 0 {
				testenv.Skip(t, "needs root")
			}
			recordReplay(t, nil, c.argv(t))
		})
	}
}

// TestReplayCapabilitiesElsewhere replays a guest that asks about its
// capabilities on a "machine" with a smaller bounding set (setpriv drops
// two capabilities from hermit's): the answers are the recording's.
func TestReplayCapabilitiesElsewhere(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root")
	}
	setpriv := testenv.Require(t, "setpriv")
	dir := filepath.Join(t.TempDir(), "trace")
	rec := record(t, dir, nil, cGuest("caps.c")(t))
	if rec.Exit != 0 {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	rep := testenv.RunWith(t, hermitOpts(t, nil), setpriv, "--bounding-set", "-wake_alarm,-sys_boot",
		testenv.Hermit(t), "replay", "--autopilot", dir)
	sameRun(t, "replay with a smaller bounding set", rec, rep)
}

// TestReplayDirectoryModes: a guest that drops to an unprivileged user
// is refused below a 0700 directory of root's (the test build cache) and
// allowed into one that user owns, in the replay as in the recording:
// the rebuilt directories keep their modes and owners.
func TestReplayDirectoryModes(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root to change users")
	}
	const nobody = 65534
	bin := testenv.BuildC(t, "dir_modes.c")
	if st, err := os.Stat(filepath.Dir(bin)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the build cache %s should be a 0700 directory: %v", filepath.Dir(bin), err)
	}
	owned, err := os.MkdirTemp("", "hermit-dir-modes-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(owned)
	file := filepath.Join(owned, "file")
	if err := os.WriteFile(file, []byte("the user's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{owned, file} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	rec := recordReplay(t, nil, []string{bin, owned, fmt.Sprint(nobody)})
	for _, want := range []string{"own program as the user: Permission denied\n", "owned file as the user: opened\n"} {
		if !strings.Contains(string(rec.Stdout), want) {
			t.Errorf("recording: stdout lacks %q\n%s", want, describe(rec))
		}
	}
}

// TestReplayMremapPlacement: an mremap that moves a mapping of a file on
// a tmpfs, where the kernel does not align it to huge pages as it does
// on the cache's filesystem (ext4) that the replay's file lies on: the
// replay moves it to the recorded address.
func TestReplayMremapPlacement(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root to mount a tmpfs")
	}
	unshare := testenv.Require(t, "unshare")
	// Not below /tmp, which the guest sees through an overlay of its own.
	mnt, err := os.MkdirTemp("/var/tmp", "hermit-mremap-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(mnt)
	// The tmpfs is mounted in a mount namespace of the recording's own,
	// not the host's, where every guest started meanwhile would show it
	// in its mountinfo (TestRecordDiskFull).
	if r := testenv.Run(t, runTimeout, unshare, "--mount", "--propagation", "private", "mount", "-t", "tmpfs", "-o", "size=16m", "none", mnt); r.Exit != 0 {
		testenv.Skip(t, "cannot mount a tmpfs: "+strings.TrimSpace(string(r.Stderr)))
	}
	data := filepath.Join(mnt, "data")
	wrap := []string{unshare, "--mount", "--propagation", "private", "sh", "-c",
		`mount -t tmpfs -o size=16m none "$1" && yes mremapme | tr -d '\n' | head -c 5600000 >"$2" && shift 2 && exec "$@"`, "sh", mnt, data}
	rec := recordReplayIn(t, wrap, nil, []string{testenv.BuildC(t, "mremap_move.c"), data})
	if !strings.Contains(string(rec.Stdout), "file mapping moved") {
		t.Errorf("recording: the file mapping did not move\n%s", describe(rec))
	}
}

// TestReplayTerminalIoctls records a guest whose stdin and stdout are a
// terminal (script(1)'s), which also opens /dev/tty and a pty pair of its
// own, and replays it without a terminal: the ioctls' answers, written
// through their arguments, and the reads of the pty come from the trace.
func TestReplayTerminalIoctls(t *testing.T) {
	script := testenv.Require(t, "script")
	bin := testenv.BuildC(t, "tty_ioctls.c")
	dir := filepath.Join(t.TempDir(), "trace")
	cmd := fmt.Sprintf("stty rows 31 cols 97; exec %s record -o %s -- %s", testenv.Hermit(t), dir, bin)
	rec := testenv.RunWith(t, hermitOpts(t, nil), script, "-qefc", cmd, "/dev/null")
	// script shows the terminal: the guest's stdout and stderr, and
	// hermit's lines, with \r\n.
	out := hermitLinesOut(bytes.ReplaceAll(rec.Stdout, []byte("\r\n"), []byte("\n")))
	if rec.Exit != 0 || !bytes.Contains(out, []byte("isatty 1 1\n")) || !bytes.Contains(out, []byte("TIOCGWINSZ: 0 97x31\n")) {
		t.Fatalf("hermit record under script: want exit 0, stdin and stdout terminals of 97x31; %s", describe(rec))
	}
	rep := replay(t, dir)
	rec.Stdout, rec.Stderr = out, nil
	rep.Stderr = guestStderr(rep.Stderr)
	sameRun(t, "replay without a terminal", rec, rep)
	// trace dump tells which opens replay stands in for.
	dump := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "trace", "dump", dir)
	if dump.Exit != 0 || !strings.Contains(string(dump.Stdout), "[terminal: replay stands in a pty of its own]") {
		t.Fatalf("hermit trace dump: want the /dev/tty open marked as a stand-in; %s", describe(dump))
	}
}

// TestReplayOnTerminal: a recording made with stdin and stderr /dev/null
// and stdout a pipe (a CI job's) replays on a terminal (script(1)'s):
// isatty there says what it said in the recording, for /dev/null too
// (asked of the replay's terminal, it said yes, and the replay diverged:
// Node's start).
func TestReplayOnTerminal(t *testing.T) {
	t.Parallel()
	script := testenv.Require(t, "script")
	sh := testenv.Require(t, "sh")
	dir := filepath.Join(t.TempDir(), "trace")
	bin := testenv.BuildC(t, "isatty_stdio.c")
	rec := testenv.RunWith(t, hermitOpts(t, nil), sh, "-c", `exec "$@" 2>/dev/null`, "sh", testenv.Hermit(t), "record", "-o", dir, "--", bin)
	const want = "isatty: stdin 0, stdout 0, stderr 0\n"
	if rec.Exit != 0 || string(rec.Stdout) != want {
		t.Fatalf("hermit record: want %q; %s", want, describe(rec))
	}
	rep := testenv.RunWith(t, hermitOpts(t, nil), script, "-qefc", testenv.Hermit(t)+" replay --autopilot "+dir, "/dev/null")
	out := bytes.ReplaceAll(rep.Stdout, []byte("\r\n"), []byte("\n"))
	if rep.Exit != 0 || string(out) != want {
		t.Errorf("hermit replay on a terminal: want exit 0 and %q; %s", want, describe(rep))
	}
}

// TestRecordRefusesUnreplayable: a filesystem with a device through the
// new mount API, and a copy of a host directory's mount, would be made for
// real by a replay; the recording runs them and warns in one line naming
// the call, and the replay stops there (status 125) with the same words.
func TestRecordRefusesUnreplayable(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root to mount")
	}
	bin := testenv.BuildC(t, "mounts.c")
	cases := []struct{ mode, call, reason string }{
		{"fsopen", `fsopen("ext4")`, "a mount of a device or of host files through the new mount API cannot be replayed"},
		{"open_tree", `open_tree("/usr", OPEN_TREE_CLONE)`, "a copy of a host directory's mount cannot be replayed"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "trace")
			rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "record", "-o", dir, "--", bin, t.TempDir(), c.mode)
			warning := fmt.Sprintf("hermit: warning: %s: %s; a replay of this trace stops there\n", c.call, c.reason)
			if rec.Exit != 0 || !strings.Contains(string(rec.Stderr), warning) {
				t.Fatalf("hermit record: want exit 0 and the warning %q; %s", warning, describe(rec))
			}
			rep := replay(t, dir)
			diverged := fmt.Sprintf(": %s: %s (hermit record warned that it cannot be replayed)\n", c.call, c.reason)
			if rep.Exit != replayExit || !strings.Contains(string(rep.Stderr), "hermit: replay diverged at event ") ||
				!strings.Contains(string(rep.Stderr), diverged) || len(rep.Stdout) != 0 {
				t.Fatalf("replay: want status %d, no output and a divergence ending %q; %s", replayExit, diverged, describe(rep))
			}
			// trace dump marks the refused call.
			dump := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "trace", "dump", dir)
			if dump.Exit != 0 || !strings.Contains(string(dump.Stdout), "[refused: replay stops here]") {
				t.Fatalf("hermit trace dump: want the refused call marked; %s", describe(dump))
			}
		})
	}
}

// TestRecordWarnsOfDnotify: a recording that asks for directory change
// signals (fcntl F_NOTIFY) warns that changes made from outside the
// guest send signals the trace does not hold.
func TestRecordWarnsOfDnotify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), "record", "-o", dir, "--", testenv.BuildC(t, "dnotify.c"), t.TempDir())
	if rec.Exit != 0 || !strings.Contains(string(rec.Stderr), "hermit: warning: fcntl(F_NOTIFY) on ") {
		t.Errorf("hermit record of dnotify.c: want exit 0 and the F_NOTIFY warning; %s", describe(rec))
	}
}

// TestReplayCreatingOpen: open(O_CREAT) without O_EXCL of a missing file
// creates it in replay too, so the dnotify signal its creation sends
// comes again (the file was captured, empty, as if it had been there);
// of a file there before the run, it keeps the file's content.
func TestReplayCreatingOpen(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "old"), []byte("from before the run\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := recordReplay(t, nil, []string{testenv.BuildC(t, "creat_open.c"), dir})
	if want := "creating \"new\" signalled the watch: yes\n\"old\" holds: from before the run\n"; string(rec.Stdout) != want {
		t.Errorf("hermit record: stdout %q, want %q", rec.Stdout, want)
	}
}

// TestForeignSyscallWarns: a 32-bit system call (int $0x80) from a 64-bit
// program fails with ENOSYS under hermit, and hermit says so in one line
// naming the call and where it was made, instead of failing it silently.
func TestForeignSyscallWarns(t *testing.T) {
	t.Parallel()
	r := hermitRun(t, nil, int80Guest(t))
	if r.Exit != 0 || !strings.Contains(string(r.Stdout), "int $0x80 getpid: -38\n") {
		t.Fatalf("want exit 0 and ENOSYS (-38) from int $0x80; %s", describe(r))
	}
	warn := regexp.MustCompile(`(?m)^hermit: warning: thread \d+ made a 32-bit system call \(int \$0x80, i386 call 20\) at 0x[0-9a-f]+ \(main\+0x[0-9a-f]+ in int80\): hermit runs x86-64 system calls only, so it fails with ENOSYS$`)
	if !warn.Match(r.Stderr) {
		t.Errorf("stderr lacks the one-line warning naming the call:\n%s", r.Stderr)
	}
	if n := strings.Count(string(r.Stderr), "32-bit system call"); n != 1 {
		t.Errorf("the warning comes %d times, want once", n)
	}
}

// int80Guest builds the int $0x80 guest, skipping t where the kernel has
// no 32-bit system call entry (the guest faults natively).
func int80Guest(t *testing.T) []string {
	argv := cGuest("int80.c")(t)
	if r := native(t, argv); r.Exit == 128+int(syscall.SIGSEGV) {
		testenv.Skip(t, "this kernel has no 32-bit system call entry (IA32 emulation): int $0x80 faults natively")
	}
	return argv
}

// TestReplayPreload: a program run with LD_PRELOAD, replayed seconds after
// its recording, replays (the dynamic loader leaves the host's rdtsc in a
// register that access does not take, which replay compared: every such
// replay diverged once the counter's upper half had moved).
func TestReplayPreload(t *testing.T) {
	t.Parallel()
	env := testenv.Require(t, "env")
	tru := testenv.Require(t, "true")
	argv := []string{env, "LD_PRELOAD=libm.so.6", tru}
	if nat := native(t, argv); nat.Exit != 0 || len(nat.Stderr) != 0 {
		testenv.Skip(t, "this machine cannot preload libm.so.6: "+describe(nat))
	}
	dir := filepath.Join(t.TempDir(), "trace")
	if rec := record(t, dir, nil, argv); rec.Exit != 0 {
		t.Fatalf("hermit record: %s", describe(rec))
	}
	// rdtsc's upper half moves every 2^32 cycles: about 1.4 s at 3 GHz.
	time.Sleep(3 * time.Second)
	if rep := replay(t, dir); rep.Exit != 0 || strings.Contains(string(rep.Stderr), "diverged") {
		t.Errorf("hermit replay 3 s after the recording: %s", describe(rep))
	}
}

// TestReplayOutsideDescriptors: calls on descriptors a recording keeps
// as outside the guest replay what the recording saw. sendmmsg and
// recvmmsg over UDP: the msg_len values and the bytes received (replay
// made recvmmsg for real, and it waited for ever; sendmmsg's msg_len read
// 0). FIONBIO, FIOCLEX and FIONCLEX on a pty master: what fcntl reads
// back (replay faked them, and its stand-in's flags never changed:
// Python's pty.spawn and tmux diverged), and F_GETFL of a master and of
// slaves opened write-only and by TIOCGPTPEER (replay's socket stand-in
// lacked O_LARGEFILE and the access mode). ^C and ^\ written to a pty
// master, which signal the slave's foreground process group: replay
// skips the write, and no terminal signalled the child's read there (it
// waited for ever, or diverged). TCP spliced into a pipe and the pipe
// into a Unix socket (replay's pipe held the recorded bytes in other
// pages, and its splices into the socket took other amounts).
func TestReplayOutsideDescriptors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		argv argvFunc
		want string
	}{
		{"sendmmsg and recvmmsg", cGuest("mmsg.c"), "sendmmsg: 2, msg_len 5 and 7\nrecvmmsg: 2, msg_len 5 and 7: hello world!!\n"},
		{"^C to a pty", cGuest("pty_signal.c", "intr"), "the child was killed by Interrupt\n"},
		{"^\\ to a pty", cGuest("pty_signal.c", "quit"), "the child was killed by Quit\n"},
		{"^C caught", cGuest("pty_signal.c", "caught"), "the child's handler ran\nthe child's read returned -1 (Interrupted system call)\nthe child exited with 0\n"},
		{"splice from TCP into a Unix socket", cGuest("splice_tcp_unix.c"), "moved 4194304, the reader got 4194304\n"},
		{"descriptor flag ioctls", cGuest("pty_flags.c"), "nonblocking: 1 then 0; close-on-exec: 1 then 0\nF_GETFL: master 100002, slave 100001, peer 4000\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			if nat := native(t, argv); nat.Exit != 0 || string(nat.Stdout) != c.want {
				t.Fatalf("native: want %q; %s", c.want, describe(nat))
			}
			if rec := recordReplay(t, nil, argv); string(rec.Stdout) != c.want {
				t.Errorf("hermit record: want %q; %s", c.want, describe(rec))
			}
		})
	}
}
