package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/trace"
)

func recordMain(args []string) int {
	_, code := record(args)
	return code
}

// record is hermit record with its arguments (flags, then PROG ARGS...): it
// returns the trace directory if it kept one ("" otherwise) and hermit's
// exit status.
func record(args []string) (string, int) {
	fs := flag.NewFlagSet("hermit record", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: hermit record [-o DIR] [flags] -- PROG [ARGS...]

Runs PROG deterministically, as hermit run does, and records a trace that
'hermit replay' runs it again from, on this machine or another. The trace
holds only what determinism cannot reproduce: input from outside (stdin,
terminals, the network, pipes from other programs), host-dependent results
(file metadata, directory listings, /proc), and a copy of every file the
program used (its executable, libraries, scripts and data), stored once.
hermit exits with PROG's status and says where the trace went. Without -o
the trace goes to a new directory under $HERMIT_TRACE_DIR (else
$XDG_DATA_HOME/hermit, else ~/.local/share/hermit), and the 'latest' link
there points at it.

Flags:
`)
		fs.PrintDefaults()
	}
	var f runFlags
	f.register(fs)
	var out string
	var progress bool
	fs.StringVar(&out, "o", "", "write the trace to directory `DIR` (new or empty)")
	fs.BoolVar(&progress, "progress", false, "show events and bytes recorded so far on stderr")
	if done, code := parseFlags(fs, args); done {
		return "", code
	}
	argv := fs.Args()
	path, code := f.check("record", argv)
	if code != 0 {
		return "", code
	}
	base := ""
	if out == "" {
		base = trace.DefaultDir()
		dir, err := trace.NewDir(base, argv[0])
		if err != nil {
			fmt.Fprintf(os.Stderr, "hermit record: %v\n", err)
			return "", exitHermit
		}
		out = dir
	}
	hdr, err := recordHeader(path, argv, &f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit record: %v\n", err)
		return "", exitHermit
	}
	w, err := trace.CreateOptions(out, hdr, trace.Options{NoSync: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit record: %v\n", err)
		return "", exitHermit
	}
	if err := recordStdin(w, &hdr); err != nil {
		fmt.Fprintf(os.Stderr, "hermit record: %v\n", err)
		return "", exitHermit
	}
	stop := handleSignals()
	defer stop()
	cache, err := trace.OpenBlobCache(filepath.Join(trace.DefaultCacheDir(), "blobs"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit record: warning: %v (files are stored without it)\n", err)
	}
	var rec atomic.Pointer[recorder.Recorder]
	j := &journal{
		traced: recorder.Syscalls(),
		attach: func(t *ptrace.Tracer, cfg *detcore.Config) detcore.Tracer {
			r := recorder.New(w, t)
			r.Cache = cache
			rec.Store(r)
			cfg.Journal = r
			if cfg.CPUID != nil {
				cfg.CPUID = r.CPUID(cfg.CPUID)
			}
			return r.Tracer(t)
		},
	}
	stopProgress := func() {}
	if progress {
		stopProgress = showProgress("recording", 0, func() (uint64, int64) {
			if r := rec.Load(); r != nil {
				return r.Events(), r.Bytes.Load()
			}
			return 0, 0
		})
	}
	res, runErr := runGuest(path, argv, &f, guestIO{os.Stdin, os.Stdout, os.Stderr}, j)
	stopProgress()
	var closeErr error
	if r := rec.Load(); r != nil {
		closeErr = r.Close(res, 0)
	} else {
		closeErr = w.Close()
	}
	if runErr != nil {
		if r := rec.Load(); r == nil {
			os.RemoveAll(out)
			return "", reportLaunchError(runErr)
		}
		fmt.Fprintf(os.Stderr, "hermit record: %v\n", runErr)
		fmt.Fprintf(os.Stderr, "hermit record: the trace in %s holds the run up to that point\n", out)
		return out, exitHermit
	}
	if closeErr != nil {
		fmt.Fprintf(os.Stderr, "hermit record: %v\n", closeErr)
		return out, exitHermit
	}
	if base != "" {
		if err := trace.SetLatest(base, out); err != nil {
			fmt.Fprintf(os.Stderr, "hermit record: %v\n", err)
		}
	}
	if f.summary {
		printSummary(os.Stderr, res, &f)
	}
	if n := res.Stats.Preemptions; n > 0 {
		fmt.Fprintf(os.Stderr, "hermit record: warning: the watchdog preempted a thread that ran without syscalls %d times; a replay preempts it after as much CPU time, at a point that may differ, so it may diverge there (--watchdog=0 never preempts: for threads whose work ends by itself)\n", n)
	}
	events, files, bytes := uint64(0), 0, int64(0)
	if r := rec.Load(); r != nil {
		events, files, bytes = r.Events(), r.Files(), r.Bytes.Load()
	}
	fmt.Fprintf(os.Stderr, "hermit: trace saved to %s (%d events, %d files of %s)\n", out, events, files, humanBytes(bytes))
	return out, res.ExitCode
}

// recordHeader describes the recording.
func recordHeader(path string, argv []string, f *runFlags) (trace.Header, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return trace.Header{}, err
	}
	s := recorder.Settings{
		Path: path, Seed: f.seed, Timeslice: f.timeslice, Epoch: f.epochTime,
		Mtimes: mtimePrefixes(f.mtimes), TrapTSC: !f.noTSC, CPUID: f.cpuid,
		Heuristic: f.ch.heur, ChaosPoints: f.ch.pts, NoFastIO: f.noFast, CPUs: f.cpus,
		Watchdog: f.watchdog,
	}
	hdr := trace.Header{
		Hermit: version, Created: time.Now().UTC(), Argv: argv, Env: os.Environ(), Dir: cwd,
		Flags: s.Flags(), Kernel: ptrace.KernelRelease(), CPU: hostCPU(),
	}
	hdr.Flags[recorder.FlagStdin] = ptrace.StdioKind(os.Stdin)
	var fds []string
	for _, s := range ptrace.InheritedStandIns() {
		fds = append(fds, s.String())
	}
	hdr.Flags[recorder.FlagFds] = strings.Join(fds, ",")
	if f.pin >= 0 {
		hdr.Flags[recorder.FlagCPU] = strconv.Itoa(f.pin)
	}
	return hdr, nil
}

// recordStdin stores a regular file given as stdin, which the guest reads
// natively, so that replay can give it the same file.
func recordStdin(w *trace.Writer, hdr *trace.Header) error {
	if hdr.Flags[recorder.FlagStdin] != "file" {
		return nil
	}
	id, err := w.PutBlob(io.NewSectionReader(os.Stdin, 0, 1<<62))
	if err != nil {
		return fmt.Errorf("storing stdin: %w", err)
	}
	// The header is written already; the blob is named by an event.
	return w.Append(&trace.Event{Kind: trace.KindFile, File: &trace.File{Path: recorder.StdinPath, Mode: trace.ModeRegular | 0o600, Blob: id}})
}

func hostCPU() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// showProgress prints what counts returns (events, and bytes of files
// unless negative) every half second on stderr,
// on one line on a terminal; the returned func stops it, printing the
// final counts.
func showProgress(what string, total uint64, counts func() (uint64, int64)) func() {
	tty := ptrace.StdioKind(os.Stderr) == "tty"
	start := time.Now()
	line := func() string {
		ev, b := counts()
		files := ""
		if b >= 0 {
			files = ", " + humanBytes(b) + " of files"
		}
		of := ""
		if total > 0 {
			of = fmt.Sprintf(" of %d", total)
		}
		return fmt.Sprintf("hermit: %s: %d%s events%s, %.1fs", what, ev, of, files, time.Since(start).Seconds())
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				if tty {
					fmt.Fprint(os.Stderr, "\r\033[K")
				}
				fmt.Fprintln(os.Stderr, line())
				return
			case <-tick.C:
				if tty {
					fmt.Fprintf(os.Stderr, "\r\033[K%s", line())
				} else {
					fmt.Fprintln(os.Stderr, line())
				}
			}
		}
	}()
	return func() { close(stop); <-done }
}
