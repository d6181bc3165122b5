// Package ptrace is hermit's kernel backend: it launches the guest in
// fresh namespaces under a seccomp filter, traces it with ptrace, and
// implements detcore.Tracer. It is the only package that talks to ptrace
// and golang.org/x/sys/unix.
//
// Preconditions: every method except Preempt must be called from the one
// goroutine that called Start, and that goroutine must stay locked to its
// OS thread (runtime.LockOSThread) for the life of the Tracer: ptrace
// binds a tracee to the thread that attached it.
package ptrace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/sys/unix"
)

// Options configure a launch.
type Options struct {
	// Path is the program to execute (already resolved), Argv its argv.
	// With Root set, Path and Dir are paths inside the root, and need not
	// exist on the host.
	Path string
	Argv []string
	Env  []string
	Dir  string
	// Root, when set, is the directory whose tree is the guest's whole
	// filesystem (replay): the guest's root is an overlay whose lower
	// layer is Root and whose upper layer is a fresh tmpfs, so the guest's
	// writes go nowhere. The host's /dev, a fresh /proc, a /tmp (unless
	// Root has one) and the machine files (CPUs) are mounted inside it;
	// nothing else of the host is reachable. The guest starts in Dir
	// inside the root ("/" when empty). PrivateTmp is ignored.
	Root string
	// CPU pins the tracer and the guest to one CPU; -1 leaves them free.
	CPU int
	// Fds, when set, are the descriptors from 3 on the guest inherits, each
	// a stand-in (a replay answers its calls from the trace); it inherits
	// no others. Nil: it inherits hermit's (InheritedFds).
	Fds *[]StandIn
	// TrapTSC makes rdtsc fault (PR_SET_TSC) so it can be emulated.
	TrapTSC bool
	// TrapCPUID makes CPUID fault (ARCH_SET_CPUID) after every exec, so it
	// can be answered from CPUID; where the machine cannot, Start fails.
	TrapCPUID bool
	// PrivateTmp gives the guest its own /tmp: of the host's, the entries
	// the run names (tmpSpec), overlaid with a tmpfs that takes every
	// write and vanishes with the run.
	PrivateTmp bool
	// WholeTmp shows all of the host's /tmp under the private one.
	WholeTmp bool
	// LocalNet gives the guest a network namespace of its own, with only
	// loopback, whose TCP the launcher tunes to repeat (launcher.c).
	LocalNet bool
	// CPUs, when not 0, is how many CPUs /proc/cpuinfo and
	// /sys/devices/system/cpu show the guest.
	CPUs int
	// Hostname is the guest's hostname in its UTS namespace.
	Hostname string
	// HostsEntry gives Hostname the address 127.0.1.1 in the guest's
	// /etc/hosts (a copy of the host's, bind-mounted), so that a program
	// that looks its own name up finds it, as on the host. A replay
	// leaves it off: its guest reads the recording's copy.
	HostsEntry bool
	// Traced lists the syscalls the seccomp filter sends to the tracer.
	Traced []int
	// Stdin, Stdout and Stderr are the guest's; nil means hermit's own.
	Stdin, Stdout, Stderr *os.File
	// Note, when set, receives a line for the user when the start is
	// slow: hermit waits for it (a loaded machine can take seconds).
	Note func(msg string)
	// OwnGroup puts the guest in a process group of its own, out of the
	// terminal's foreground group: the terminal's ^C and ^\ reach hermit
	// (and a debugger sharing the terminal), not the guest. A replay needs
	// it: a signal from outside would make the guest leave its recording.
	OwnGroup bool
}

// ptrace options: every event the engine needs, nothing more.
const seizeOptions = unix.PTRACE_O_TRACESYSGOOD | unix.PTRACE_O_EXITKILL |
	unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK |
	unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_TRACESECCOMP

// Tracer implements detcore.Tracer with ptrace.
type Tracer struct {
	// tscShapes are the rdtsc sites' shapes by their code (tscsite.go).
	tscShapes map[string]tscShape
	initPid   int
	rootTid   int
	// pidfds caches a pidfd per traced thread, for pidfd_getfd.
	pidfds    map[int]int
	trapCPUID bool
	// stdioFiles identifies hermit's own stdio (see FdClass);
	// inheritedFiles the guest's other inherited files.
	stdioFiles, inheritedFiles map[devIno]bool
	// pidns names the guest's pid namespace (see peerOutside).
	pidns string
	// localNet: the guest has a network namespace of its own
	// (Options.LocalNet), which nothing outside reaches (outside).
	localNet bool
	// filter is the guest's seccomp program; emus holds the count-mode
	// state of threads resumed with ResumeCount (count.go).
	filter []unix.SockFilter
	emus   map[int]*emuState
	// handled counts the stops the tracer handled itself since the last
	// one it reported (Stop.Handled).
	handled int
	// held are the guest descriptors hermit has copies of until the
	// next resume (heldFd).
	held map[fdKey]*held
	// vdsoCache is the last vDSO parsed (readVDSO).
	vdsoCache *vdsoImage
	// clocks are the threads' CPU-time counters (cputime.go).
	clocks taskClocks
	// loopback says, by socket inode, whether a TCP connection's peer is
	// a guest's socket (loopbackInside).
	loopback map[uint64]bool
	// ptyPeers remembers, by pty, the guest descriptor of the side a
	// write's bytes went to, found last (PtyFlush).
	ptyPeers map[uint64]fdKey
}

var _ detcore.Tracer = (*Tracer)(nil)

// Launch errors the CLI maps to exit statuses.
var (
	// ErrNotFound: the program does not exist (exit 127).
	ErrNotFound = errors.New("no such file or directory")
	// ErrNotExecutable: the program cannot be executed (exit 126).
	ErrNotExecutable = errors.New("permission denied or not an executable")
)

// Start launches the guest and returns once its first thread has completed
// execve and is stopped, ready for the engine to resume it.
func Start(o Options) (*Tracer, int, error) {
	if err := quietSIGCHLD(); err != nil {
		return nil, 0, fmt.Errorf("setting SA_NOCLDSTOP: %w", err)
	}
	if o.CPU >= 0 {
		var set unix.CPUSet
		set.Set(o.CPU)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return nil, 0, fmt.Errorf("pinning to CPU %d: %w", o.CPU, err)
		}
	}
	filter := buildFilter(o.Traced, detcore.ConditionalSyscalls())
	// The pipe's write end is inheritable until the launcher has it: a
	// launcher another run started meanwhile (a debugger's checkpoint
	// helper) would keep it open for as long as that run lives.
	launchMu.Lock()
	locked := true
	unlock := func() {
		if locked {
			locked = false
			launchMu.Unlock()
		}
	}
	defer unlock()
	errR, errW, err := launcherPipe(o)
	if err != nil {
		return nil, 0, err
	}
	defer errR.Close()
	files := ""
	if o.CPUs > 0 {
		hosts := ""
		if o.HostsEntry {
			hosts = o.Hostname
		}
		mf, err := machineFiles(o.CPUs, hosts, o.TrapCPUID)
		if err == nil {
			mf, err = inheritAbove(mf, int(errW.Fd()))
		}
		if err != nil {
			errW.Close()
			return nil, 0, fmt.Errorf("preparing /proc/cpuinfo: %w", err)
		}
		// The launcher reads it and closes its copy.
		defer mf.Close()
		files = strconv.Itoa(int(mf.Fd()))
	}
	cmd := &exec.Cmd{
		Path: "/proc/self/exe",
		// The launcher execs Path with argv Argv.
		Args:   append([]string{"hermit-launcher", o.Path}, o.Argv...),
		Env:    append(launchEnv(o, filter), envFiles+"="+files, envErrFd+"="+strconv.Itoa(int(errW.Fd()))),
		Dir:    launchDir(o),
		Stdin:  orFile(o.Stdin, os.Stdin),
		Stdout: orFile(o.Stdout, os.Stdout),
		Stderr: orFile(o.Stderr, os.Stderr),
		// No ExtraFiles: the descriptors from 3 on that the guest
		// inherits keep their numbers, and the launcher's pipe is above
		// them (launcherPipe).
		SysProcAttr: &syscall.SysProcAttr{
			// A fresh IPC namespace: System V IPC ids are then the
			// same on every run (they count up machine-wide otherwise).
			Cloneflags: unix.CLONE_NEWPID | unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC,
			Pdeathsig:  syscall.SIGKILL,
			Setpgid:    o.OwnGroup,
		},
	}
	if o.LocalNet {
		cmd.SysProcAttr.Cloneflags |= unix.CLONE_NEWNET
	}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= unix.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	// The launcher, pid 1 of the guest's namespace, which the guest can
	// read in /proc/1 (stat, maps: Java's ProcessHandle, ps), runs
	// without ASLR too, so that its stack and heap lie where they did
	// on the last run. The calling thread (the tracer's, locked) forks it
	// and passes on its personality.
	restore := noRandomize()
	err = cmd.Start()
	restore()
	errW.Close()
	unlock()
	if err != nil {
		return nil, 0, explainStart(err)
	}
	t := &Tracer{initPid: cmd.Process.Pid, pidfds: map[int]int{}, trapCPUID: o.TrapCPUID, filter: filter, emus: map[int]*emuState{}, localNet: o.LocalNet}
	tid, err := t.seizeRoot(errR, o.Argv[0], o.Note)
	if err != nil {
		t.KillAll()
		return nil, 0, err
	}
	t.rootTid = tid
	return t, tid, nil
}

// launcherPipe returns the pipe on which the launcher reports a failure
// before it execs the guest. Its write end is inherited by the launcher
// at its own number, above every descriptor the guest inherits (hermit's,
// or the replay's stand-ins), which keep theirs: passed as ExtraFiles it
// took 3, and a guest's inherited 3 (make's jobserver) was lost.
func launcherPipe(o Options) (r, w *os.File, err error) {
	r, w, err = os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	above := 2
	fds := InheritedFds()
	if o.Fds != nil {
		fds = fds[:0]
		for _, s := range *o.Fds {
			fds = append(fds, s.Fd)
		}
	}
	for _, fd := range fds {
		above = max(above, fd)
	}
	if w, err = inheritAbove(w, above); err != nil {
		r.Close()
		return nil, nil, fmt.Errorf("the launcher's pipe: %w", err)
	}
	return r, w, nil
}

// inheritAbove moves f to the lowest free descriptor above n, not
// close-on-exec, so that the launcher inherits it there; it sets that
// flag itself before it execs the guest. No other launcher is started
// while the tracer starts this one (launchMu).
func inheritAbove(f *os.File, n int) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD, n+1)
	name := f.Name()
	f.Close()
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// noRandomize turns ASLR off for the calling thread's children, and
// returns what turns it on again.
func noRandomize() func() {
	const query, addrNoRandomize = 0xffffffff, 0x0040000
	prev, _, errno := unix.RawSyscall(unix.SYS_PERSONALITY, query, 0, 0)
	if errno != 0 || prev&addrNoRandomize != 0 {
		return func() {}
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_PERSONALITY, prev|addrNoRandomize, 0, 0); errno != 0 {
		return func() {}
	}
	return func() { unix.RawSyscall(unix.SYS_PERSONALITY, prev, 0, 0) }
}

func orFile(f, def *os.File) *os.File {
	if f != nil {
		return f
	}
	return def
}

func launchEnv(o Options, filter []unix.SockFilter) []string {
	env := append([]string(nil), o.Env...)
	flag := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	env = append(env,
		envMode+"=1",
		envFilter+"="+encodeFilter(filter),
		// Where PR_SET_TSC makes no rdtsc fault (TSCTraps), asking for
		// it changes nothing the guest sees but costs every stop: the
		// kernel then rewrites CR4 at each switch between the guest and
		// hermit, a trap to the hypervisor in some VMs (+9.6 µs a stop,
		// 35%, on one of ours).
		envTSC+"="+flag(o.TrapTSC && TSCTraps()),
		envTmp+"="+tmpSpec(o),
		envNet+"="+flag(o.LocalNet),
		// A signal sent to the launcher goes on to the guest, but in a
		// replay (its own group), which takes no signal from outside.
		envForward+"="+flag(!o.OwnGroup),
		envHostname+"="+o.Hostname,
	)
	if o.Fds != nil {
		list := make([]string, 0, len(*o.Fds)+1)
		list = append(list, "-") // none: an empty value would read as unset
		for _, s := range *o.Fds {
			list = append(list, s.String())
		}
		env = append(env, envFds+"="+strings.Join(list, ","))
	}
	if o.Root != "" {
		env = append(env, envRoot+"="+o.Root, envCwd+"="+o.Dir)
	}
	return env
}

// Launcher variables for Options.Root (the others are in launcher.go).
const (
	// envRoot is the lower layer of the guest's root.
	envRoot = "HERMIT_LAUNCH_ROOT"
	// envCwd is the guest's working directory inside the root.
	envCwd = "HERMIT_LAUNCH_CWD"
)

// launchDir is the launcher's working directory. With a root, Dir is a
// path inside it, which the launcher enters once it is there; on the host
// it may not exist.
func launchDir(o Options) string {
	if o.Root != "" {
		return "/"
	}
	return o.Dir
}

func explainStart(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSPC) {
		return fmt.Errorf("creating pid/mount/uts namespaces: %w (hermit needs root or unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0)", err)
	}
	return fmt.Errorf("starting the launcher: %w", err)
}

// seizeRoot finds the launcher's child (the guest's first process) once it
// has stopped itself, seizes it, and runs it to its first exec.
func (t *Tracer) seizeRoot(errR *os.File, name string, note func(string)) (int, error) {
	pid, err := t.launched(errR, name, note)
	if err != nil {
		return 0, err
	}
	if err := ptraceRaw(unix.PTRACE_SEIZE, pid, 0, seizeOptions); err != nil {
		if errors.Is(err, unix.EPERM) {
			return 0, fmt.Errorf("ptrace: %w (is ptrace allowed? check kernel.yama.ptrace_scope and the container's seccomp profile / CAP_SYS_PTRACE)", err)
		}
		return 0, fmt.Errorf("ptrace seize: %w", err)
	}
	for {
		p, ws, err := wait4(pid, unix.WALL)
		if err != nil {
			return 0, err
		}
		if p != pid {
			continue
		}
		switch {
		case ws.Exited() || ws.Signaled():
			return 0, t.launchFailure(errR, name, ws)
		case ws.Stopped() && ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == unix.PTRACE_EVENT_EXEC:
			return pid, nil
		case ws.Stopped() && ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == unix.PTRACE_EVENT_SECCOMP:
			// The launcher's own execve.
			if err := ptraceRaw(unix.PTRACE_CONT, pid, 0, 0); err != nil {
				return 0, err
			}
		default:
			// The self-SIGSTOP, re-reported as a group stop after seizing.
			if err := ptraceRaw(unix.PTRACE_CONT, pid, 0, 0); err != nil {
				return 0, err
			}
		}
	}
}

// launchStages name the launcher's steps, as launcher.c numbers them, and
// say how to fix a failure where the fix is outside hermit.
var launchStages = map[uint32]struct{ what, fix string }{
	1:  {"reading the launch configuration", ""},
	2:  {"entering a new pid namespace", "hermit needs root or unprivileged user namespaces"},
	3:  {"mounting the guest's /proc", "hermit needs CAP_SYS_ADMIN in its user namespace"},
	4:  {"forking the guest", ""},
	5:  {"turning off ASLR (personality)", "a seccomp profile may forbid personality(2)"},
	6:  {"setting no_new_privs", ""},
	7:  {"stopping for the tracer", ""},
	8:  {"making rdtsc trap (PR_SET_TSC)", "try --no-trap-rdtsc"},
	9:  {"installing the seccomp filter", "the kernel needs CONFIG_SECCOMP_FILTER, and a container's own seccomp profile must allow seccomp(2)"},
	10: {"executing the program", ""},
}

// launchNote is how long the launcher may take to start the guest
// before hermit says it is still waiting, and launchLimit how long before
// it gives up. The start takes milliseconds; on a machine loaded with
// many runs (a parallel test suite) it took over 10s.
var (
	launchNote  = 10 * time.Second
	launchLimit = 2 * time.Minute
)

// readLaunch reads the launcher's 8-byte report from r, telling note once
// the launch is slow.
func readLaunch(r *os.File, note func(string)) (b [8]byte, n int, err error) {
	start := time.Now()
	_ = r.SetReadDeadline(start.Add(launchNote))
	defer r.SetReadDeadline(time.Time{})
	n, err = io.ReadFull(r, b[:])
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return b, n, err
	}
	if note != nil {
		note(fmt.Sprintf("the guest has not started after %v (is the machine loaded?); waiting up to %v", launchNote, launchLimit))
	}
	_ = r.SetReadDeadline(start.Add(launchLimit))
	m, err := io.ReadFull(r, b[n:])
	return b, n + m, err
}

// launched waits until the launcher's child, the guest's first process,
// has stopped itself for the tracer, and returns its pid. The launcher
// reports that (a zero stage) or a failure on errR.
func (t *Tracer) launched(errR *os.File, name string, note func(string)) (int, error) {
	b, n, err := readLaunch(errR, note)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return 0, fmt.Errorf("the launcher did not start the guest within %v", launchLimit)
	case n < len(b):
		return t.launchedUnreported(name, err)
	case binary.LittleEndian.Uint32(b[0:]) != 0:
		return 0, launchError(b, name)
	}
	bs, _ := readProcFile(fmt.Sprintf("/proc/%d/task/%d/children", t.initPid, t.initPid))
	f := strings.Fields(string(bs))
	if len(f) == 0 {
		return 0, fmt.Errorf("%s: the launcher's child is gone", name)
	}
	return strconv.Atoi(f[0])
}

// launchFailure explains why the guest never reached its first exec.
func (t *Tracer) launchFailure(errR *os.File, name string, ws unix.WaitStatus) error {
	var b [8]byte
	n, _ := io.ReadFull(errR, b[:])
	if n < len(b) {
		return fmt.Errorf("%s: the launcher exited before the program started (status %#x)", name, int(ws))
	}
	return launchError(b, name)
}

// launchError explains the failed stage the launcher reported in b.
func launchError(b [8]byte, name string) error {
	stage := binary.LittleEndian.Uint32(b[0:])
	errno := unix.Errno(binary.LittleEndian.Uint32(b[4:]))
	if stage == 10 {
		switch errno {
		case unix.ENOENT:
			return fmt.Errorf("%s: %w", name, ErrNotFound)
		case unix.EACCES, unix.ENOEXEC, unix.EISDIR, unix.EPERM:
			return fmt.Errorf("%s: %w (%v)", name, ErrNotExecutable, errno)
		}
	}
	s, ok := launchStages[stage]
	if !ok {
		return fmt.Errorf("%s: launching: %v", name, errno)
	}
	if s.fix != "" {
		return fmt.Errorf("%s: %s: %v (%s)", name, s.what, errno, s.fix)
	}
	return fmt.Errorf("%s: %s: %v", name, s.what, errno)
}

func procState(pid int) byte {
	state, _, _ := procStat(pid)
	return state
}

// procStat reads the state and process group of pid from /proc/PID/stat.
func procStat(pid int) (byte, int, error) {
	b, err := readProcFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, gone(err)
	}
	// pid (comm) state ppid pgrp ...; comm may contain anything.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 3 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	pgrp, err := strconv.Atoi(f[2])
	return f[0][0], pgrp, err
}

// InBackground implements detcore.TtyTracer: /proc/PID/stat has the
// process group and its terminal's foreground group (tpgid).
func (t *Tracer) InBackground(tid int) bool {
	b, err := readProcFile(fmt.Sprintf("/proc/%d/stat", tid))
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 6 {
		return false
	}
	pgrp, err1 := strconv.Atoi(f[2])
	tpgid, err2 := strconv.Atoi(f[5])
	return err1 == nil && err2 == nil && tpgid > 0 && pgrp != tpgid
}

// ProcStat implements detcore.Tracer.ProcStat.
func (t *Tracer) ProcStat(pid int) (byte, int, error) { return procStat(pid) }

// Wait implements detcore.Tracer.Wait.
func (t *Tracer) Wait() (detcore.Stop, error) {
	for {
		// This thread's tracees and children only (__WNOTHREAD): other
		// threads of hermit may trace runs of their own (a debugger's
		// checkpoints), whose stops are theirs.
		pid, ws, err := wait4(-1, unix.WALL|unix.WNOTHREAD)
		if err != nil {
			return detcore.Stop{}, fmt.Errorf("wait4: %w", err)
		}
		if pid == t.initPid {
			continue
		}
		st := detcore.Stop{Tid: pid}
		switch {
		case ws.Exited():
			st.Kind, st.Code = detcore.StopExited, ws.ExitStatus()
			t.forget(pid)
		case ws.Signaled():
			st.Kind, st.Sig = detcore.StopKilled, int(ws.Signal())
			t.forget(pid)
		case ws.Stopped():
			sig := int(ws.StopSignal())
			switch ev := int(ws) >> 16; {
			case sig == int(unix.SIGTRAP)|0x80:
				var report bool
				st, report, err = t.syscallStop(pid, st)
				if (err == nil && !report) || errors.Is(err, detcore.ErrGone) {
					// Handled here (count.go), or the thread is gone:
					// its exit report comes.
					t.handled++
					continue
				}
			case sig == int(unix.SIGTRAP) && ev == unix.PTRACE_EVENT_SECCOMP:
				if ok, err := t.swallowed(pid); ok {
					if err != nil && !errors.Is(err, detcore.ErrGone) {
						return st, fmt.Errorf("thread %d: %w", pid, err)
					}
					t.handled++
					continue
				}
				st.Kind = detcore.StopSeccomp
				t.seccompStop(pid)
			case sig == int(unix.SIGTRAP) && (ev == unix.PTRACE_EVENT_CLONE || ev == unix.PTRACE_EVENT_FORK || ev == unix.PTRACE_EVENT_VFORK):
				st.Kind = detcore.StopClone
				st.CloneKind = map[int]int{unix.PTRACE_EVENT_CLONE: abi.SYS_CLONE, unix.PTRACE_EVENT_FORK: abi.SYS_FORK, unix.PTRACE_EVENT_VFORK: abi.SYS_VFORK}[ev]
				st.Msg, err = getEventMsg(pid)
			case sig == int(unix.SIGTRAP) && ev == unix.PTRACE_EVENT_EXEC:
				st.Kind = detcore.StopExec
				st.Msg, err = getEventMsg(pid)
				if st.Msg != uint64(pid) {
					t.forget(int(st.Msg))
					// pid names the thread that exec'd now, not the
					// leader its counter counted, nor whose count-mode
					// state (a call being made again) was kept.
					t.clocks.forget(pid)
					delete(t.emus, pid)
				}
			case ev == unix.PTRACE_EVENT_STOP:
				st.Kind, st.Sig = detcore.StopEvent, sig
			default:
				st.Kind, st.Sig = detcore.StopSignal, sig
			}
			if err != nil {
				return st, fmt.Errorf("thread %d: reading event: %w", pid, err)
			}
		default:
			continue
		}
		st.Handled, t.handled = t.handled, 0
		return st, nil
	}
}

func gone(err error) error {
	if errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("%w: %v", detcore.ErrGone, err)
	}
	return err
}

// GetRegs implements detcore.Tracer.GetRegs.
func (t *Tracer) GetRegs(tid int, r *abi.Regs) error { return gone(getRegs(tid, r)) }

// SetRegs implements detcore.Tracer.SetRegs.
func (t *Tracer) SetRegs(tid int, r *abi.Regs) error { return gone(setRegs(tid, r)) }

// ReadMem implements detcore.Tracer.ReadMem with process_vm_readv.
func (t *Tracer) ReadMem(tid int, addr uint64, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
	n, err := unix.ProcessVMReadv(tid, local, remote, 0)
	if err != nil {
		return gone(err)
	}
	if n != len(b) {
		return fmt.Errorf("reading %d bytes at %#x: short read (%d)", len(b), addr, n)
	}
	return nil
}

// WriteMem implements detcore.Tracer.WriteMem. It falls back to
// /proc/PID/mem for pages that are not writable (code, the vDSO).
func (t *Tracer) WriteMem(tid int, addr uint64, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
	n, err := unix.ProcessVMWritev(tid, local, remote, 0)
	if err == nil && n == len(b) {
		return nil
	}
	if len(b) <= 16 && pokeMem(tid, addr, b) == nil {
		return nil
	}
	f, err := procOpenFile(fmt.Sprintf("/proc/%d/mem", tid), os.O_WRONLY)
	if err != nil {
		return gone(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, int64(addr)); err != nil {
		return fmt.Errorf("writing %d bytes at %#x: %w", len(b), addr, err)
	}
	return nil
}

// Preempt implements detcore.Tracer.Preempt. It may be called from any
// goroutine.
func (t *Tracer) Preempt(tid int) error { return tkill(tid, unix.SIGSTOP) }

// tkill sends sig to thread tid (tkill: hermit knows a guest thread by its
// tid alone).
func tkill(tid int, sig unix.Signal) error {
	if _, _, e := unix.RawSyscall(unix.SYS_TKILL, uintptr(tid), uintptr(sig), 0); e != 0 {
		return e
	}
	return nil
}

// KillAll implements detcore.Tracer.KillAll: killing the namespace's init
// kills every process in it.
func (t *Tracer) KillAll() {
	if t.initPid > 0 {
		unix.Kill(t.initPid, unix.SIGKILL)
	}
}

// SignalRoot sends sig to the guest's first process, as kill(1) would
// from outside: hermit passes on a SIGINT or SIGQUIT sent to it alone.
func (t *Tracer) SignalRoot(sig unix.Signal) error {
	if t.rootTid <= 0 {
		return unix.ESRCH
	}
	return unix.Kill(t.rootTid, sig)
}

// TerminalSends reports whether hermit's process group is the foreground
// one of its controlling terminal, whose ^C and ^\ reach the guest too
// (which shares the group): then hermit need not pass them on.
func TerminalSends() bool {
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pg == unix.Getpgrp()
}

// Close reaps the launcher. Call after the engine has seen every guest
// thread exit.
func (t *Tracer) Close() {
	t.dropHeld()
	for _, fd := range t.pidfds {
		unix.Close(fd)
	}
	t.pidfds = nil
	t.clocks.close()
	if t.initPid > 0 {
		// The launcher, the namespace's init, exits only once every
		// guest process is gone, and killed tracees must be reaped by
		// their tracer: reap everything until the launcher is.
		for {
			pid, _, err := wait4(-1, unix.WALL|unix.WNOTHREAD)
			if err != nil || pid == t.initPid {
				break
			}
		}
		t.initPid = 0
	}
}

// GuestTid implements detcore.Tracer.GuestTid from the NSpid line of
// /proc/TID/status.
func (t *Tracer) GuestTid(tid int) (int, error) {
	b, err := readProcFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0, gone(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			// hermit's own namespace first, then the guest's, then any
			// the guest made: a process in one of those is known by
			// its id in the guest's namespace, as its parent sees it.
			f := strings.Fields(v)
			if len(f) > 1 {
				return strconv.Atoi(f[1])
			}
			if len(f) > 0 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return 0, fmt.Errorf("no NSpid in /proc/%d/status", tid)
}

// Signals implements detcore.Tracer.Signals from /proc/TID/status.
func (t *Tracer) Signals(tid int) (thread, shared, blocked uint64, err error) {
	f, err := procOpen(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0, 0, 0, gone(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		switch k {
		case "SigPnd":
			thread = n
		case "ShdPnd":
			shared = n
		case "SigBlk":
			blocked = n
		}
	}
	return thread, shared, blocked, s.Err()
}
