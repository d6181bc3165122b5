package replay

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/trace"
)

// Recording is a trace opened for replay. Its rebuilt root filesystem is
// made once and shared by every run; each run writes to its own
// throwaway layer over it.
type Recording struct {
	Dir      string
	Header   *trace.Header
	Settings recorder.Settings
	// Events is how many events the trace holds (up to any damage).
	Events uint64
	files  []trace.File
	// root is the rebuilt root; tmp a directory of this replay's own.
	root, tmp string
	stdin     string
	// progress is the event the latest run has reached.
	progress atomic.Uint64
}

// Progress returns how many events the latest run has consumed.
func (rec *Recording) Progress() uint64 { return rec.progress.Load() }

// Options configure the runs of a Recording.
type Options struct {
	// Stdout and Stderr receive the guest's output (nil: /dev/null).
	Stdout, Stderr *os.File
	// CPU pins each run to one CPU; -1 does not pin.
	CPU int
	// Warn receives one-line warnings (may be nil).
	Warn func(string)
	// Debug, when set, receives the engine's scheduling log.
	Debug func(format string, args ...any)
	// Started, when set, is called by Play once the guest runs, with a
	// function that kills it (from any goroutine): Play then returns
	// ErrStopped.
	Started func(kill func())
}

// ErrStopped says Play's run was killed (Options.Started).
var ErrStopped = errors.New("the replay was stopped")

// Open opens the trace in dir and rebuilds the files its program used.
func Open(dir string) (*Recording, error) {
	r, err := trace.Open(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rec := &Recording{Dir: dir, Header: r.Header()}
	if rec.Settings, err = recorder.ParseSettings(rec.Header.Flags); err != nil {
		return nil, err
	}
	var ev trace.Event
	var damage error // reported when the replay reaches it
	for {
		if err := r.Next(&ev); err != nil {
			if err != io.EOF {
				damage = err
			}
			break
		}
		if ev.Kind == trace.KindFile && ev.File != nil {
			rec.files = append(rec.files, *ev.File)
		}
	}
	rec.Events = r.Pos()
	if err := rec.build(r, damage); err != nil {
		rec.Close()
		return nil, err
	}
	return rec, nil
}

// build makes the root directory and the stdin file. damage is what ended
// the events early, if anything.
func (rec *Recording) build(r *trace.Reader, damage error) error {
	// This replay's own directory, made only when needed.
	ownDir := func() (string, error) {
		if rec.tmp == "" {
			tmp, err := os.MkdirTemp("", "hermit-replay-")
			if err != nil {
				return "", err
			}
			rec.tmp = tmp
		}
		return rec.tmp, nil
	}
	var err error
	var files []trace.File
	for _, f := range rec.files {
		if f.Path != recorder.StdinPath {
			files = append(files, f)
		}
	}
	if rec.Header.Dir != "" {
		files = append(files, trace.File{Path: rec.Header.Dir, Mode: trace.ModeDir | 0o755})
	}
	files = append(files, trace.File{Path: "/tmp", Mode: trace.ModeDir | 0o1777})
	if rec.root, err = cachedRoot(files, r.OpenBlob); err != nil {
		return fmt.Errorf("rebuilding the recorded files: %w", err)
	}
	if rec.root == "" {
		// No cache directory: a root of our own, removed by Close.
		tmp, err := ownDir()
		if err != nil {
			return err
		}
		rec.root = path.Join(tmp, "root")
		if err := os.Mkdir(rec.root, 0o755); err != nil {
			return err
		}
		if err := BuildRoot(rec.root, files, r.OpenBlob); err != nil {
			return fmt.Errorf("rebuilding the recorded files: %w", err)
		}
	}
	if rec.Settings.CPUID && !ptrace.CPUIDFaulting() {
		return errors.New("the recording virtualized cpuid (--virtualize-cpuid), which needs CPUID faulting, and this machine has none")
	}
	if _, err := os.Stat(path.Join(rec.root, rec.Settings.Path)); err != nil {
		if damage != nil {
			// The program's file event is lost with the rest.
			return programLost(damage, rec.Events, rec.Settings.Path)
		}
		return fmt.Errorf("the trace does not hold the program %s (was it recorded by this hermit?)", rec.Settings.Path)
	}
	rec.stdin = os.DevNull
	if stdin, ok := rec.stdinFile(); ok {
		rc, err := r.OpenBlob(stdin.Blob)
		if err != nil {
			return err
		}
		defer rc.Close()
		tmp, err := ownDir()
		if err != nil {
			return err
		}
		rec.stdin = path.Join(tmp, "stdin")
		f, err := os.OpenFile(rec.stdin, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, rc)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return nil
}

// programLost says that damage to the trace, after n intact events, took
// the program's file with it.
func programLost(damage error, n uint64, program string) error {
	if n == 0 {
		return fmt.Errorf("%s; no event is readable, so neither is the program %s", trace.Explain(damage), program)
	}
	return fmt.Errorf("%s; the %d events before the damage do not hold the program %s", trace.Explain(damage), n, program)
}

// stdinFile finds the captured regular-file stdin.
func (rec *Recording) stdinFile() (trace.File, bool) {
	for _, f := range rec.files {
		if f.Path == recorder.StdinPath {
			return f, true
		}
	}
	return trace.File{}, false
}

// Close removes the files made for the replay (not the cached root).
func (rec *Recording) Close() error {
	if rec.tmp == "" {
		return nil
	}
	return os.RemoveAll(rec.tmp)
}

// Starter returns a Starter of runs of rec.
func (rec *Recording) Starter(opts Options) Starter {
	return func(h Hooks) (Runner, error) { return rec.start(opts, h) }
}

// Play replays rec from start to end with no debugger: the guest's output
// goes to opts.Stdout and opts.Stderr.
func (rec *Recording) Play(opts Options) (detcore.Result, error) {
	type outcome struct {
		res detcore.Result
		err error
	}
	o := ptrace.OnOwnThread(func() outcome {
		r, err := rec.start(opts, Hooks{})
		if err != nil {
			return outcome{err: err}
		}
		var killed atomic.Bool
		if opts.Started != nil {
			opts.Started(func() {
				killed.Store(true)
				r.Kill()
			})
		}
		res, err := r.Run()
		switch {
		case killed.Load():
			return outcome{res, ErrStopped}
		case err == nil:
			rec.progress.Store(rec.Events)
		}
		return outcome{res, err}
	})
	return o.res, o.err
}

// openStdin gives a run the kind of stdin the recording had, so that calls
// replay runs for real on it (lseek, fcntl) behave the same: the captured
// file, an empty pipe or socket (reads from those are replayed from the
// trace), or /dev/null.
func (rec *Recording) openStdin() (*os.File, error) {
	switch rec.Header.Flags[recorder.FlagStdin] {
	case "pipe":
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		w.Close()
		return r, nil
	case "socket":
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		syscall.Close(fds[1])
		return os.NewFile(uintptr(fds[0]), "stdin"), nil
	}
	return os.Open(rec.stdin)
}

// run is one replay run.
type run struct {
	t      *ptrace.Tracer
	eng    *detcore.Engine
	p      *player
	reader *trace.Reader
	files  []*os.File
}

func (rec *Recording) start(opts Options, h Hooks) (Runner, error) {
	reader, err := trace.Open(rec.Dir)
	if err != nil {
		return nil, err
	}
	r := &run{reader: reader}
	stdin, err := rec.openStdin()
	if err != nil {
		reader.Close()
		return nil, err
	}
	r.files = append(r.files, stdin)
	out := func(f *os.File) *os.File {
		if f != nil {
			return f
		}
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return nil
		}
		r.files = append(r.files, null)
		return null
	}
	var keep *[]ptrace.StandIn
	if fds, ok := rec.Header.Flags[recorder.FlagFds]; ok {
		// The guest inherits the descriptors the recording's did, and
		// no others (its next open's number depends on them).
		var want []ptrace.StandIn
		for _, f := range strings.Split(fds, ",") {
			if s, ok := ptrace.ParseStandIn(f); ok {
				want = append(want, s)
			}
		}
		keep = &want
	}
	s := rec.Settings
	t, root, err := ptrace.Start(ptrace.Options{
		Path: s.Path, Argv: rec.Header.Argv, Env: rec.Header.Env, Dir: rec.Header.Dir,
		Root: rec.root, CPU: opts.CPU, Hostname: "hermit", TrapTSC: s.TrapTSC, TrapCPUID: s.CPUID, Fds: keep,
		Traced: append(detcore.InterceptedSyscalls(), recorder.Syscalls()...),
		CPUs:   s.CPUs,
		Stdin:  stdin, Stdout: out(cmp.Or(h.Stdout, opts.Stdout)), Stderr: out(cmp.Or(h.Stderr, opts.Stderr)),
		// ^C at the terminal is for hermit or its debugger, never the
		// guest's: the recording had no such signal.
		OwnGroup: true,
		Note:     opts.Warn,
	})
	if err != nil {
		r.close()
		return nil, fmt.Errorf("starting the replay: %w", err)
	}
	r.t = t
	onEvent := func(n uint64) {
		rec.progress.Store(n + 1)
		if h.OnEvent != nil {
			h.OnEvent(n)
		}
	}
	r.p = newPlayer(reader, onEvent)
	r.p.pipes = t
	r.p.fastDigests = s.FastWriteDigests
	var tr detcore.Tracer = &oracle{HostTracer: t, Actions: detcore.Actions{Inner: t}, p: r.p, signals: s.SignalAnswers, send: t.SendSignal}
	if h.Wrap != nil {
		tr = h.Wrap(tr)
	}
	cfg := s.Config()
	cfg.Journal = r.p
	if s.CPUID {
		cfg.CPUID = r.p.cpuid
	}
	cfg.Warn = opts.Warn
	cfg.Debug = opts.Debug
	// The replay's watchdog preempts a thread where the recording's did
	// (trace.KindPreempt: after as much CPU time, at a point that may
	// differ, as record warned). Elsewhere it waits longer than the
	// recording's did, so as not to preempt where the recording did not
	// (a thread that spins without syscalls would hang a replay that went
	// astray), and the divergence that follows is reported.
	cfg.Watchdog = replayWatchdogFor(s.Watchdog)
	if h.Wrap != nil {
		// A debugger's breakpoints, steps and memory view stay apart
		// from hermit's int3s: without them each spin is found after
		// its budget, at the same point (detcore/spintrap.go).
		cfg.NoSpinTraps = true
	}
	cfg.WatchdogHint = fmt.Sprintf("the recording's watchdog did not preempt it here: a replay preempts after %v, and diverges", cfg.Watchdog)
	r.eng = detcore.NewEngine(tr, cfg, root)
	return r, nil
}

// replayWatchdog is how long a replayed thread may run without a stop
// while others wait, at least.
const replayWatchdog = 10 * time.Second

// replayWatchdogFor is the replay's watchdog for a recording whose
// watchdog was recorded (-1: not kept): none if the recording had none
// (a thread may have computed for minutes while others waited), else
// five times the recording's, and at least replayWatchdog.
func replayWatchdogFor(recorded time.Duration) time.Duration {
	if recorded == 0 {
		return 0
	}
	return max(replayWatchdog, 5*recorded)
}

func (r *run) close() {
	for _, f := range r.files {
		f.Close()
	}
	r.files = nil
	r.reader.Close()
	if r.t != nil {
		r.t.Close()
	}
}

// Run implements Runner.
func (r *run) Run() (detcore.Result, error) {
	defer r.close()
	res, err := r.eng.Run()
	if err == nil {
		err = r.p.finish(res)
	}
	if err != nil {
		r.t.KillAll()
		if errors.Is(err, ErrKilled) {
			// As in the recording: killed where its trace ends.
			res.ExitCode, res.Signal = 128+9, 9
			return res, nil
		}
		var de *DivergenceError
		if errors.As(err, &de) {
			return res, de
		}
		var te *TruncatedError
		if errors.As(err, &te) {
			return res, te
		}
	}
	return res, err
}

// Engine implements Runner.
func (r *run) Engine() *detcore.Engine { return r.eng }

// Kill implements Runner.
func (r *run) Kill() { r.t.KillAll() }
