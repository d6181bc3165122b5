package tests

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// compatRuns is how many `hermit run`s of a compatibility guest must agree.
const compatRuns = 3

// compatCase is a guest whose native output is the same on every run.
type compatCase struct {
	name string
	argv argvFunc
	want string // its whole stdout, natively and under hermit
}

// checkCompat runs each case natively (stdout must be want, exit 0), under
// `hermit run` compatRuns times (the native output every time, so no
// hang, no lost or changed line), and records and replays it (the replay
// must show the recording). Each command is bounded by runTimeout: a hang
// fails the case.
func checkCompat(t *testing.T, cases []compatCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			nat := native(t, argv)
			if nat.Exit != 0 || string(nat.Stdout) != c.want {
				t.Fatalf("native run: want exit 0 and stdout\n%s\ngot %s", c.want, describe(nat))
			}
			for i := 1; i <= compatRuns; i++ {
				r := hermitRun(t, nil, argv)
				if d := firstDiff(nat.Stdout, r.Stdout); d != "" || r.Exit != 0 {
					t.Fatalf("hermit run %d: stdout differs from native at %s; %s", i, d, describe(r))
				}
			}
			dir := filepath.Join(t.TempDir(), "trace")
			rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), append([]string{"record", "-o", dir, "--"}, argv...)...)
			if d := firstDiff(nat.Stdout, rec.Stdout); d != "" || rec.Exit != 0 {
				t.Fatalf("hermit record: stdout differs from native at %s; %s", d, describe(rec))
			}
			rec.Stderr = guestStderr(rec.Stderr)
			rep := replay(t, dir)
			rep.Stderr = guestStderr(rep.Stderr)
			sameRun(t, "replay", rec, rep)
		})
	}
}

// TestKernelWaits: calls that block in the kernel until another guest
// process acts (file locks, System V queues and semaphores, a write to a
// full socket or pipe, a POSIX message queue, the open of a FIFO) end as
// natively: the engine turns them into waits
// of its own, so the process that releases them gets to run.
func TestKernelWaits(t *testing.T) {
	checkCompat(t, []compatCase{{
		name: "locks, queues, semaphores, full socket and pipe",
		argv: cGuest("kernel_waits.c"),
		want: `flock: parent lets go
flock: child done waiting
fcntl: parent lets go
fcntl: child done waiting
ofd: parent lets go
ofd: child done waiting
msgrcv: parent lets go
child: received "hello"
msgrcv: child done waiting
msgsnd: parent lets go
msgsnd: child done waiting
parent: then received "second"
semop: parent lets go
semop: child done waiting
semtimedop: parent lets go
semtimedop: child done waiting
socket: parent lets go
socket: child done waiting
writev: parent lets go
writev: child done waiting
pipe: parent lets go
pipe: child done waiting
semop with a SIGALRM handler: EINTR
semtimedop of 300 ms: EAGAIN
flock with an SA_RESTART handler: restarted, got the lock
msgrcv on a queue removed meanwhile: EIDRM
all waits ended
`,
	}, {
		// Loopback TCP is a host network's, so hermit let the write wait
		// in the kernel, holding the turn its guest reader needed.
		name: "a 16 MiB write over loopback TCP to a guest reader",
		argv: cGuest("tcp_big.c"),
		want: "a thread read 16777216 bytes over 127.0.0.1\na child read 16777216 bytes over ::1\nboth writes returned 16777216\n",
	}, {
		name: "POSIX message queues",
		argv: cGuest("mqueue.c"),
		want: `child: received "question"
child: answering; the queue will be full
parent: received "answer"
parent: received "second"
mq_timedreceive of 300 ms on an empty queue: ETIMEDOUT
`,
	}, {
		// hermit run does not stop at opens: a thread that sleeps in
		// one is found and its open made again where the engine sees it.
		name: "opens of a FIFO",
		argv: cGuest("fifo_open.c"),
		want: `reader first: read "from a thread", then end of file
writer first: read "from a child", then end of file
two children: read "from a sibling", then end of file
O_RDWR: no wait
O_NONBLOCK reader: read 0
O_NONBLOCK writer without a reader: ENXIO
`,
	}, {
		name: "a shell's FIFO",
		argv: func(*testing.T) []string {
			return []string{"/bin/sh", "-c", `p=$(mktemp -u); mkfifo $p; cat $p & echo hi > $p; wait; exec 3<>$p; echo rw >&3; read x <&3; echo "got $x"; exec 3>&-; (echo late > $p) & sleep 0.1; cat $p; wait; rm $p`}
		},
		want: "hi\ngot rw\nlate\n",
	}})
}

// TestJobControl: a process stopped by SIGSTOP stays stopped (it writes
// nothing) until SIGCONT, its parent's waitpid sees it stopped and
// continued, also with five threads, and when it stops itself; a SIGKILL
// ends it while stopped; a terminal's SIGTTOU and SIGTTIN stop a
// background process group's writes to its settings and reads.
func TestJobControl(t *testing.T) {
	const stopCont = `SIGSTOP: stopped by signal 19
written while stopped: 0 bytes
SIGCONT: continued
the child writes again
SIGSTOP again: stopped by signal 19
SIGKILL while stopped: killed by signal 9
`
	checkCompat(t, []compatCase{
		{"stop and continue a child", cGuest("jobctl.c"), stopCont},
		{"stop and continue a child with threads", cGuest("jobctl.c", "threads"), stopCont},
		{"a child stops itself", cGuest("jobctl.c", "self"), `raise(SIGSTOP): stopped by signal 19
SIGCONT: continued
child: exited 4
`},
		// The terminal is a pty the guest opens; its job-control signals
		// come from the kernel, which replay sends in its place.
		{"a terminal stops its background processes", cGuest("tty_jobctl.c"),
			"background tcsetattr: stopped by Stopped (tty output)\nbackground read: stopped by Stopped (tty input)\nsession leader exited\n"},
	})
}

// TestEscapes: corners where a traced program could slip out of hermit's
// hands, or a wait could hang it, behave as natively.
func TestEscapes(t *testing.T) {
	checkCompat(t, []compatCase{
		{"signalfd read with the signal pending", cGuest("escapes.c", "signalfd"), "signalfd read: signal 12\n"},
		{"CLONE_UNTRACED child", cGuest("escapes.c", "untraced"), "untraced child runs\nuntraced child exited 3\n"},
		{"sigsuspend with a pending signal", cGuest("escapes.c", "sigsuspend"), "sigsuspend: -1, EINTR, handler ran 1 time(s)\nsigtimedwait: 12\n"},
		{"a blocked signal across execve", cGuest("escapes.c", "execmask"), "after execve: SIGUSR1 blocked: yes\n"},
		{"SIGALRM to the thread that takes it", cGuest("escapes.c", "alarm"), "SIGALRM caught by the main thread: 1\n"},
		// The run ends with the main process, but not at once: what its
		// children still do in the next 50 ms of virtual time is done.
		{"a child finishes after the main process", cGuest("escapes.c", "orphan"), "main exits first\norphan: the main process is gone, I finish\n"},
		// Only a fault with no handler to take it can be the kernel
		// ignoring a pid namespace init's fatal signal (TestRefusals).
		{"a handled fault again and again at one instruction", cGuest("fault_handled.c"), "recovered from 5 faults at one instruction\n"},
		// Under hermit the guest's first process is in hermit's process
		// group: the kernel's kill(0) would reach hermit too.
		{"kill(0) reaches the guest's group only", cGuest("escapes.c", "killgroup"), "kill(0, SIGABRT): caught by the process 1 time(s), by its child: yes\n"},
		// A traced thread keeps even the signals its process ignores
		// pending, and they would cut its calls short.
		{"ignored signals do not interrupt calls", cGuest("escapes.c", "ignored"), "poll(1500 ms) with SIGALRM ignored at 1 s: 0 after its timeout\npoll(300 ms) while a child exits: 0\nread with an ignored SIGUSR1 sent meanwhile: 1\n"},
	})
}

var digestRE = regexp.MustCompile(`(?m)^  schedule digest: ([0-9a-f]{16})$`)

// checkDigests runs each case compatRuns times under `hermit run
// --summary`: each run must exit 0 with no warning and no
// nondeterministic point, and all must have one schedule digest.
func checkDigests(t *testing.T, cases []compatCase) {
	for _, c := range cases {
		t.Run(c.name+" deterministically", func(t *testing.T) {
			t.Parallel()
			argv := c.argv(t)
			var digests []string
			for i := 0; i < compatRuns; i++ {
				r := hermitRun(t, []string{"--summary"}, argv)
				d := digestRE.FindSubmatch(r.Stderr)
				if r.Exit != 0 || d == nil || bytes.Contains(r.Stderr, []byte("warning")) || !bytes.Contains(r.Stderr, []byte("nondeterministic points: 0\n")) {
					t.Fatalf("run %d: want exit 0, no warning, no nondeterministic point; %s", i+1, describe(r))
				}
				digests = append(digests, string(d[1]))
			}
			if len(slices.Compact(slices.Clone(digests))) != 1 {
				t.Errorf("schedule digests of %d runs differ: %v", compatRuns, digests)
			}
		})
	}
}

// TestUntracedLoops: a thread that loops on calls hermit lets through
// without a stop (gettid, getpid) while what ends its loop needs virtual
// time (an interval timer's signal) or another thread's turns ends as
// natively and at once: those calls become scheduling points while others
// wait (detcore/count.go), so no watchdog preemption, which would make
// the run unrepeatable, is needed; three runs give one schedule digest.
// Another process counts when it shares memory with the looping one
// (detcore/sharedmem.go): a child that loops on getppid, having just
// woken its parent through a pipe, until the parent sets a flag in an
// anonymous MAP_SHARED mapping or in System V shared memory.
func TestUntracedLoops(t *testing.T) {
	cases := []compatCase{
		{"an interval timer ends a loop on gettid", cGuest("untraced_loops.c", "timer"), "timer: 20 ticks ended a loop on gettid\n"},
		{"another thread ends a loop on getpid", cGuest("untraced_loops.c", "threads"), "threads: the worker's flag ended a loop on getpid\n"},
		{"a parent ends its child's loop through MAP_SHARED memory", cGuest("untraced_loops.c", "shared"), "shared: the parent's flag ended the child's loop on getppid\n"},
		{"a parent ends its child's loop through System V shared memory", cGuest("untraced_loops.c", "shm"), "shm: the parent's flag ended the child's loop on getppid\n"},
	}
	checkCompat(t, cases)
	checkDigests(t, cases)
}

// TestRefusals: what hermit cannot model ends with one line saying so,
// never a hang: a ptrace option hermit does not emulate fails with EIO
// and a warning that names it; a
// fault in the init of a pid namespace the guest made (which the kernel
// ignores while hermit traces it) kills it, with a warning; a guest
// whose threads all wait on each other ends with status 125 and the
// deadlock described; a daemon left running when the main process exits
// is killed, and --summary says so.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name, src, mode string
		exit            int
		stdout, line    string
	}{
		{"guest PTRACE_O_TRACESECCOMP", "guest_ptrace.c", "seccomp", 0, "stopped by signal 19, event 0\nPTRACE_O_TRACESECCOMP: -1 EIO\nexited with 0\n",
			"hermit: warning: the guest called ptrace: PTRACE_SETOPTIONS with options 0x80 is not emulated by hermit"},
		// Its counters count the host's events: refused, as by a kernel
		// whose perf_event_paranoid forbids them.
		{"perf_event_open", "escapes.c", "perf", 0, "perf_event_open: EACCES\n", "hermit: warning: perf_event_open: performance counters count the host's events"},
		{"pid namespace init faults", "escapes.c", "pidns", 0, "init of the new namespace: pid 1\ninit died: by signal 11\n", "it is the init of a pid namespace"},
		{"deadlock", "escapes.c", "deadlock", 125, "both locked one mutex each\n", "hermit: the guest is deadlocked: every thread waits for another"},
		// As in a container, the run ends with its main process.
		{"daemon outlives the main process", "escapes.c", "daemon", 0, "main exits, its daemon still running\n", "  processes killed when the main process exited: 1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := hermitRun(t, []string{"--summary"}, cGuest(c.src, c.mode)(t))
			if r.Exit != c.exit || string(r.Stdout) != c.stdout || !strings.Contains(string(r.Stderr), c.line) {
				t.Errorf("want exit %d, stdout %q and %q on stderr; %s", c.exit, c.stdout, c.line, describe(r))
			}
		})
	}
}

// TestGuestPtrace: a guest that traces its own children (a debugger, a
// crash handler, strace) sees what it would see natively: the stops of a
// child that asked to be traced or was attached, seized and interrupted,
// its signals (passed on or suppressed), a breakpoint it planted, an
// exec, its syscall-stops (calls skipped and changed), single steps and
// SYSEMU, its exit event, the threads and processes it creates; its
// registers and memory; and every run and replay is the same.
func TestGuestPtrace(t *testing.T) {
	stop := func(sig, event int) string { return fmt.Sprintf("stopped by signal %d, event %d\n", sig, event) }
	cases := []compatCase{
		{"PTRACE_TRACEME, memory and registers", cGuest("guest_ptrace.c", "traceme"),
			stop(19, 0) + "peek: 42\nregisters read: yes\nchild: secret is 99\nexited with 7\n"},
		{"a breakpoint the tracer plants", cGuest("guest_ptrace.c", "breakpoint"),
			stop(19, 0) + stop(5, 0) + "stopped just past the breakpoint: yes\ntarget ran\nexited with 0\n"},
		{"signals passed on and suppressed", cGuest("guest_ptrace.c", "signal"),
			stop(19, 0) + stop(10, 0) + "siginfo: signal 10\nchild: handler saw signal 10\n" + stop(12, 0) + "child: SIGUSR2 was suppressed\nexited with 0\n"},
		{"PTRACE_ATTACH to a waiting child", cGuest("guest_ptrace.c", "attach"), stop(19, 0) + "killed by signal 15\n"},
		{"PTRACE_SEIZE and PTRACE_INTERRUPT", cGuest("guest_ptrace.c", "seize"), stop(5, 128) + stop(15, 0) + "killed by signal 15\n"},
		{"a SIGSTOP to a seized child, passed on: a group stop until SIGCONT", cGuest("guest_ptrace.c", "groupstop"),
			stop(19, 0) + stop(19, 128) + stop(19, 128) + "after SIGCONT: stopped by signal 5, event 128\nkilled by signal 9\n"},
		{"a SIGSTOP to a threaded child, seized at once", cGuest("guest_ptrace.c", "seizestop"),
			"seized thread: stopped by signal 19\ninterrupted: stopped by signal 19\nchild killed by signal 9\n"},
		{"a traced child's exec", cGuest("guest_ptrace.c", "exec"), stop(19, 0) + stop(5, 0) + "the exec'd child runs\nexited with 0\n"},
		{"syscall-stops: a call skipped, a call changed, the exit event", cGuest("ptrace_syscalls.c", "syscall"),
			"child: the skipped call returned 4242; the changed one, its parent: yes\nthe child's write returned 72, error: 0\n" +
				"entry of exit_group(3)\nexit event stop: status 3, after the entry of exit_group: yes\nexited with 3\n" +
				"each entry-stop followed by its exit-stop: yes\n"},
		{"new threads and processes traced from their start", cGuest("ptrace_syscalls.c", "children"),
			"child's thread runs\nchild reaped its own child: status 4\n" +
				"fork events: 1, clone events: 1, new tracees that started stopped: 2, exits reaped: 0 0 4\n"},
		{"execve's exit-stop, a call injected there", cGuest("ptrace_syscalls.c", "exec"),
			"execve's exit-stop: exit, rax 0, orig_rax execve: yes\ninjected call's entry: getppid: yes\n" +
				"injected getppid returned the tracer's pid: yes\nthe exec'd child runs\nexited with 5\n"},
		{"single steps, SYSEMU_SINGLESTEP and SYSEMU", cGuest("ptrace_syscalls.c", "step"),
			"single steps to the end of the block: 5\nchild: the stepped getpid returned its pid: yes\n" +
				"SYSEMU_SINGLESTEP reached the syscall at step 3\nrax at the stop: -38\n" +
				"child: the call skipped by SYSEMU_SINGLESTEP returned 777\nrax at the stop: -38\n" +
				"child: the call skipped by SYSEMU returned 888\nexited with 0\n"},
	}
	checkCompat(t, cases)
	checkDigests(t, cases)
}

// TestDevZeroReads: reads of /dev/zero return what they return natively
// in every run and in replay: the whole count, even while hermit's
// watchdog looks at the thread reading (a new thread waits to run), whose
// signal the kernel would cut the read short for; and up to the first
// unmapped page of the buffer, or EFAULT.
func TestDevZeroReads(t *testing.T) {
	const long = "long: read 134217728 of 134217728\n"
	checkCompat(t, []compatCase{
		{"long reads while another thread waits", cGuest("devzero.c", "long"), long + long + long + long},
		{"a buffer that ends unmapped", cGuest("devzero.c", "fault"), "fault: read 12188 of 20480\nfault: read -1 into unmapped memory (Bad address)\n"},
	})
}

// TestPipeWritesWhole: a blocking write, writev or send larger than a pipe
// or Unix stream socket holds returns its whole count, as natively, and
// the reader gets every byte in order (hermit used to cut it to the room
// left, a short write that programs which write once lose data to; it
// did so for writev and sockets after it stopped for write), and does not
// hang when the reader stops halfway; a signal while the write waits for
// room ends it with the count written, which the reader gets exactly.
func TestPipeWritesWhole(t *testing.T) {
	t.Parallel()
	checkCompat(t, []compatCase{
		{"one write of 1 MiB", cGuest("pipe_writes.c", "big"), "big: reader got 1048576\nbig: wrote 1048576\n"},
		{"a reader that pauses halfway", cGuest("pipe_writes.c", "slow"), "slow: reader got 524288\nslow: wrote 524288\n"},
		{"writev of 3 entries", cGuest("pipe_writes.c", "writev"), "writev: reader got 1048576\nwritev: wrote 1048576\n"},
		{"writev of 256 entries", cGuest("pipe_writes.c", "writevmany"), "writevmany: reader got 1048576\nwritevmany: wrote 1048576\n"},
		{"write to a Unix stream socket", cGuest("pipe_writes.c", "socket"), "socket: reader got 1048576\nsocket: wrote 1048576\n"},
		{"send to a Unix stream socket", cGuest("pipe_writes.c", "sendto"), "sendto: reader got 1048576\nsendto: wrote 1048576\n"},
		{"writev to a Unix stream socket", cGuest("pipe_writes.c", "sockwritev"), "sockwritev: reader got 1048576\nsockwritev: wrote 1048576\n"},
		{"sendmsg to a Unix stream socket", cGuest("pipe_writes.c", "sendmsg"), "sendmsg: reader got 1048576\nsendmsg: wrote 1048576\n"},
	})
	for _, mode := range []string{"signal", "signalmsg"} {
		argv := cGuest("pipe_writes.c", mode)(t)
		r := hermitRun(t, nil, argv)
		var got, wrote int
		if _, err := fmt.Sscanf(string(r.Stdout), mode+": reader got %d\n"+mode+": wrote %d\n", &got, &wrote); err != nil || got != wrote || wrote <= 0 || wrote >= 1<<20 {
			t.Errorf("%s: a signal while the write waits: want a part of 1 MiB written and read; %s", mode, describe(r))
		}
		if again := hermitRun(t, nil, argv); !bytes.Equal(again.Stdout, r.Stdout) {
			t.Errorf("%s: a signal while the write waits: the second run differs at %s", mode, firstDiff(r.Stdout, again.Stdout))
		}
		recordReplay(t, nil, argv)
	}
	// hermit's stdout is a pipe here: its reader, outside, drains it.
	argv := cGuest("pipe_writes.c", "stdout")(t)
	if r := hermitRun(t, nil, argv); len(r.Stdout) != 1<<20 || !strings.Contains(string(r.Stderr), "stdout: wrote 1048576\n") {
		t.Errorf("one write of 1 MiB to hermit's stdout: %d bytes came out; stderr %s", len(r.Stdout), r.Stderr)
	}
	if rec := recordReplay(t, nil, argv); len(rec.Stdout) != 1<<20 {
		t.Errorf("hermit record: %d bytes came out, want 1 MiB", len(rec.Stdout))
	}
}

// TestStaleReady: a wait found ready at its stop, whose thread other
// threads preceded, is looked at again when it runs: another thread may
// have taken the data, or reaped the child (a poll the engine let into
// the kernel on the old answer hung CPython's multiprocessing pool).
func TestStaleReady(t *testing.T) {
	t.Parallel()
	var cases []compatCase
	for _, mode := range []string{"poll", "ppoll", "select", "epoll", "peek"} {
		cases = append(cases, compatCase{mode, cGuest("stale_ready.c", mode), mode + ": the last wait ended with the second byte\n"})
	}
	checkCompat(t, cases)
	// Other timeslices put the stale answer elsewhere; a timeslice of one
	// hands the turn over at every stop.
	reap := cGuest("stale_reap.c")(t)
	for ts := 1; ts <= 4; ts++ {
		flags := []string{"--timeslice", strconv.Itoa(ts)}
		if r := hermitRun(t, flags, reap); r.Exit != 0 || string(r.Stdout) != "the thread reaped a child\nthe main thread reaped a child\n" {
			t.Errorf("two threads that wait for children, timeslice %d: %s", ts, describe(r))
		}
		for _, mode := range []string{"poll", "ppoll"} {
			if r := hermitRun(t, flags, cGuest("stale_ready.c", mode)(t)); r.Exit != 0 {
				t.Errorf("%s, timeslice %d: %s", mode, ts, describe(r))
			}
		}
	}
}

// TestSpliceWaits: splice, sendfile and vmsplice into a full pipe, and a
// splice out of an empty one, wait in hermit for the other thread, which
// drains or fills the pipe (in the kernel they hung the run).
func TestSpliceWaits(t *testing.T) {
	t.Parallel()
	var cases []compatCase
	for _, mode := range []string{"splice", "sendfile", "vmsplice"} {
		cases = append(cases, compatCase{mode, cGuest("splice_pipes.c", mode), mode + ": moved 1048576, the reader got 1048576\n"})
	}
	cases = append(cases, compatCase{"splicein", cGuest("splice_pipes.c", "splicein"), "splicein: moved 65536\n"},
		compatCase{"splicetty", cGuest("splice_pipes.c", "splicetty"), "splicetty: moved 65536, the reader got 65536\n"},
		compatCase{"splicettynb", cGuest("splice_pipes.c", "splicettynb"), "splicettynb: moved 65536, the reader got 65536\n"})
	checkCompat(t, cases)
}

// TestStopThreadedChild: SIGSTOP, SIGTSTP, SIGTTIN and SIGTTOU stop a
// child that has a second thread, and the parent's waitpid sees it; a
// SIGTSTP the child catches runs its handler (both hung: the child's
// threads made their calls again and again to reach a stop, while the
// thread that took the signal waited for a turn).
func TestStopThreadedChild(t *testing.T) {
	t.Parallel()
	checkCompat(t, []compatCase{
		{"SIGSTOP", cGuest("mt_stop.c", "19"), "stopped by Stopped (signal)\nkilled: 1\n"},
		{"SIGTSTP", cGuest("mt_stop.c", "20"), "stopped by Stopped\nkilled: 1\n"},
		{"SIGTTIN", cGuest("mt_stop.c", "21"), "stopped by Stopped (tty input)\nkilled: 1\n"},
		{"SIGTTOU", cGuest("mt_stop.c", "22"), "stopped by Stopped (tty output)\nkilled: 1\n"},
		{"SIGTSTP caught", cGuest("mt_stop.c", "caught"), "the handler ran\nkilled: 1\n"},
	})
}

// TestPtyWritesWhole: 1 MiB written to a pty's slave that the parent
// reads from the master, 200 KiB written to the master that the child
// reads from the slave, and page-sized writes of short lines that the
// slave's output processing makes larger, arrive whole (the writes
// waited in the kernel for the reader hermit kept parked: a hang).
func TestPtyWritesWhole(t *testing.T) {
	t.Parallel()
	checkCompat(t, []compatCase{
		{"slave to master", cGuest("pty_big.c", "out"), "the parent read 1048576\n"},
		{"master to slave", cGuest("pty_big.c", "in"), "the child read 204800\n"},
		{"lines of a page", cGuest("pty_big.c", "lines"), "the parent read 393216\n"},
	})
}

// TestPtyWriteReachesOtherSide: what a write to one side of a pty sends
// is at the other side (FIONREAD counts it, a poll finds it ready) when
// the writer's next call runs or another thread runs next, on every run,
// in a recording and its replay. Natively (and under hermit before) a
// kernel worker moved it across when it got a CPU, so how many of these
// looks found it varied run to run with the host's load (CPython's
// asyncio pty tests: a schedule digest that varied).
func TestPtyWriteReachesOtherSide(t *testing.T) {
	t.Parallel()
	argv := cGuest("pty_flush.c")(t)
	if nat := native(t, argv); nat.Exit != 0 {
		t.Fatalf("native run: %s", describe(nat))
	}
	want := "slave to master: 300 of 300 there at once\n" +
		"a line to the master: 300 of 300 at the slave at once, 300 echoed back\n" +
		"a child's write to the slave: 300 of 300 at the parent's master at once\n"
	if r := hermitRepeat(t, hermitRuns, nil, argv); string(r.Stdout) != want {
		t.Errorf("hermit run: want\n%s%s", want, describe(r))
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.RunWith(t, hermitOpts(t, nil), testenv.Hermit(t), append([]string{"record", "-o", dir, "--"}, argv...)...)
	if rec.Exit != 0 || string(rec.Stdout) != want {
		t.Fatalf("hermit record: want\n%s%s", want, describe(rec))
	}
	rec.Stderr = guestStderr(rec.Stderr)
	rep := replay(t, dir)
	rep.Stderr = guestStderr(rep.Stderr)
	sameRun(t, "replay", rec, rep)
}

// TestSigtimedwaitPoll: sigtimedwait with a zero timeout takes a signal
// already pending (it timed out first, and returned EAGAIN).
func TestSigtimedwaitPoll(t *testing.T) {
	t.Parallel()
	checkCompat(t, []compatCase{
		{"a blocked signal pending", cGuest("sigtimedwait_poll.c"), "pending: 1\nfirst poll: 10\nsecond poll: -1\n"},
	})
}

// TestPipeWrongEnd: a write to a pipe's read end and a read of its write
// end fail with EBADF (hermit waited for the pipe to be ready, and
// reported a deadlock).
func TestPipeWrongEnd(t *testing.T) {
	t.Parallel()
	checkCompat(t, []compatCase{
		{"both ends", cGuest("wrong_end.c"), "write to the read end: -1 EBADF\nread of the write end: -1 EBADF\n"},
	})
}

// TestSendmmsgWhole: one blocking sendmmsg of 200 messages to a Unix
// datagram, seqpacket or stream socketpair whose reader is a thread
// sends them all and returns 200 (it blocked in the kernel once the
// reader's queue was full, with the reader parked: a hang).
func TestSendmmsgWhole(t *testing.T) {
	t.Parallel()
	var cases []compatCase
	for _, typ := range []string{"dgram", "seqpacket", "stream"} {
		cases = append(cases, compatCase{typ, cGuest("sendmmsg_full.c", typ), typ + ": sendmmsg returned 200, every msg_len 1024, the reader got 204800\n"})
	}
	checkCompat(t, cases)
}
