package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/hermitdbg/hermit/trace"
)

const traceUsage = `Usage:
  hermit trace ls                 list the traces in the trace directory
  hermit trace info [TRACE]       describe a trace and check it for damage
  hermit trace ps [TRACE]         list the recorded processes: pid, parent,
                                  exit status and command line
  hermit trace dump [TRACE] [--from N] [--to M] [--tid T] [--json]
                                  print events, one line each
  hermit trace rm TRACE...        delete traces

TRACE is a path (anything containing '/'), the name of a trace in the trace
directory, or "latest"; info, ps and dump default to the latest trace.

The trace directory is $HERMIT_TRACE_DIR, else $XDG_DATA_HOME/hermit, else
~/.local/share/hermit. Here it is %s.

info, ps and dump exit with status 1 if the trace is truncated or damaged,
after printing everything readable before the damage.
`

const psUsage = `Usage: hermit trace ps [TRACE]

List the processes of TRACE (default: the latest trace) in creation order:

  PID    the process's pid, as the program saw it
  PPID   its parent's pid (- for the recorded command)
  EXIT   its exit status, the signal that killed it (SIGSEGV), or - if it
         had not ended when the recording did
  EVENT  the event from which it runs its command (its last exec)
  CMD    the command line of its last exec; "(fork of PID)" and that
         process's command line for a fork that never exec'd

PID and CMD are what "hermit replay --onprocess PID|NAME" takes. A trace
recorded before hermit logged processes shows the recorded command alone.
`

const dumpUsage = `Usage: hermit trace dump [TRACE] [--from N] [--to M] [--tid T] [--json]

Print the events of TRACE (default: the latest trace), one line each:

  #N TID name(args=DIGEST) = RESULT [ext] ADDR<-"bytes written"...
  #N TID clone(flags=0x...) = CHILD
  #N TID execve("path", ["argv"...]) maps path@ADDR=blob:ID...
  #N TID --- SIGNAME {si_code=C} deterministic|async ---
  #N TID +++ exited with S +++      (thread exits say "thread exited")
  #N TID timing T                   (logical time a blocking external call completed)

DIGEST is the digest of the call's arguments. [ext] marks results that came
from the host and are injected on replay; other results are recomputed and
only checked.

Flags:
`

// traceMain runs "hermit trace ARGS..." and returns the exit status.
func traceMain(args []string) int {
	return runTrace(args, os.Stdout, os.Stderr)
}

// runTrace is traceMain with its output streams as arguments.
func runTrace(args []string, stdout, stderr io.Writer) int {
	base := trace.DefaultDir()
	if len(args) == 0 {
		fmt.Fprintf(stderr, traceUsage, base)
		return 2
	}
	c := &traceCmd{name: "hermit trace " + args[0], base: base, stdout: stdout, stderr: stderr}
	switch args[0] {
	case "ls", "list":
		return c.ls(args[1:])
	case "info":
		return c.info(args[1:])
	case "dump":
		return c.dump(args[1:])
	case "ps":
		return c.ps(args[1:])
	case "rm":
		return c.rm(args[1:])
	case "help", "-h", "-help", "--help":
		fmt.Fprintf(stdout, traceUsage, base)
		return 0
	}
	fmt.Fprintf(stderr, "hermit trace: unknown command %q (commands: ls, info, ps, dump, rm)\n", args[0])
	return 2
}

type traceCmd struct {
	name   string // "hermit trace info", for messages
	base   string // the trace directory
	stdout io.Writer
	stderr io.Writer
	warned bool // warnIndex has said the index was not used
}

// fail prints a one-line error and returns exit status 1.
func (c *traceCmd) fail(format string, a ...any) int {
	fmt.Fprintf(c.stderr, "%s: %s\n", c.name, fmt.Sprintf(format, a...))
	return 1
}

// parse parses flags and positional arguments in any order. It returns the
// positional arguments and, if parsing ended the command, its exit status.
func (c *traceCmd) parse(fs *flag.FlagSet, usage string, args []string, maxPos int) ([]string, int, bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(c.stdout, usage)
			fs.SetOutput(c.stdout)
			fs.PrintDefaults()
			return nil, 0, true
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "%s: %v (see --help)\n", c.name, err)
			return nil, 2, true
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if maxPos >= 0 && len(pos) > maxPos {
		fmt.Fprintf(c.stderr, "%s: unexpected argument %q (see --help)\n", c.name, pos[maxPos])
		return nil, 2, true
	}
	return pos, 0, false
}

// parseOpen parses the flags and the one optional TRACE argument of a
// command and opens the trace. A nil Reader means the command is over,
// with the status returned.
func (c *traceCmd) parseOpen(fs *flag.FlagSet, usage string, args []string) (*trace.Reader, int) {
	pos, code, done := c.parse(fs, usage, args, 1)
	if done {
		return nil, code
	}
	return c.open(first(pos))
}

// open resolves a TRACE argument ("" for the latest) and opens the trace.
func (c *traceCmd) open(arg string) (*trace.Reader, int) {
	dir, err := trace.Resolve(c.base, arg)
	if err != nil {
		return nil, c.fail("%v", err)
	}
	r, err := trace.Open(dir)
	if err != nil {
		return nil, c.fail("%s: %v", dir, err)
	}
	c.warnIndex(r)
	return r, 0
}

// warnIndex says, in one line, that the index of r was not used, if so
// and not said yet: the events file alone was read, and is complete.
func (c *traceCmd) warnIndex(r *trace.Reader) {
	err := r.IndexError()
	if err == nil || c.warned {
		return
	}
	c.warned = true
	fmt.Fprintf(c.stderr, "%s: warning: %s: %v; read the events file alone, which is complete\n", c.name, r.Dir(), err)
}

// damagedPath names the file of trace dir that err is about, or dir.
func damagedPath(dir string, err error) string {
	if f := trace.DamagedFile(err); f != "" {
		return filepath.Join(dir, f)
	}
	return dir
}

func (c *traceCmd) ls(args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	usage := fmt.Sprintf("Usage: hermit trace ls\n\nList the traces in %s, oldest first; * marks the latest.\n", c.base)
	if _, code, done := c.parse(fs, usage, args, 0); done {
		return code
	}
	ents, err := trace.List(c.base)
	if err != nil {
		return c.fail("%v", err)
	}
	if len(ents) == 0 {
		fmt.Fprintf(c.stdout, "no traces in %s\n", c.base)
		return 0
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPROGRAM\tRECORDED\tSIZE\tEVENTS\tSTATUS")
	for _, e := range ents {
		name, prog, when, status := e.Name, "?", "?", "ok"
		if e.Latest {
			name += " *"
		}
		if e.Header != nil {
			prog = e.Header.Program()
			when = e.Header.Created.Local().Format("2006-01-02 15:04:05")
		}
		if e.Err != nil {
			status = e.Err.Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", name, prog, when, humanBytes(e.Size), e.Events, status)
	}
	tw.Flush()
	return 0
}

func (c *traceCmd) rm(args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	usage := "Usage: hermit trace rm TRACE...\n\nDelete traces. Directories that hold no trace are refused.\n"
	pos, code, done := c.parse(fs, usage, args, -1)
	if done {
		return code
	}
	if len(pos) == 0 {
		fmt.Fprintf(c.stderr, "%s: no trace named (see --help)\n", c.name)
		return 2
	}
	status := 0
	for _, arg := range pos {
		dir, err := trace.Resolve(c.base, arg)
		if err == nil {
			err = trace.Remove(dir)
		}
		if err != nil {
			status = c.fail("%v", err)
			continue
		}
		fmt.Fprintf(c.stdout, "removed %s\n", dir)
	}
	return status
}

func (c *traceCmd) info(args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	usage := "Usage: hermit trace info [TRACE]\n\nDescribe TRACE (default: the latest) and check every block and blob.\n"
	r, code := c.parseOpen(fs, usage, args)
	if r == nil {
		return code
	}
	defer r.Close()
	h := r.Header()
	pt := trace.NewProcessTable(h)
	st, damage := r.ScanWith(pt.Add)
	c.warnIndex(r) // the scan may find the index's statistics wrong

	tw := tabwriter.NewWriter(c.stdout, 0, 8, 1, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, a...)) }
	row("trace", "%s", r.Dir())
	row("format", "version %d, recorded by hermit %s", h.Version, orUnknown(h.Hermit))
	row("recorded", "%s", h.Created.Local().Format(time.RFC3339))
	row("command", "%s", quoteArgs(h.Argv))
	row("directory", "%s", orUnknown(h.Dir))
	row("environment", "%d variables", len(h.Env))
	row("flags", "%s", formatFlags(h.Flags))
	row("host", "kernel %s; CPU %s; %d CPUID leaves", orUnknown(h.Kernel), orUnknown(h.CPU), len(h.CPUID))
	row("events", "%d in %d blocks; %s", st.Events, st.Blocks, formatThreads(st.Threads))
	blobs, blobBytes := r.StoredBlobs()
	ratio := 0.0
	if st.FileBytes > 0 {
		ratio = float64(st.RawBytes) / float64(st.FileBytes)
	}
	row("size", "events %s (%s encoded, compression %.1fx, %.2f bytes/event); %d blobs, %s",
		humanBytes(int64(st.FileBytes)), humanBytes(int64(st.RawBytes)), ratio, perEvent(st.FileBytes, st.Events),
		blobs, humanBytes(blobBytes))
	status := "complete, all blocks and blobs intact"
	if damage != nil {
		status = trace.Explain(damage)
	}
	row("status", "%s", status)
	tw.Flush()

	fmt.Fprintln(c.stdout)
	tw = tabwriter.NewWriter(c.stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "KIND\tEVENTS\tSHARE\tENCODED\tBYTES/EVENT\t")
	for k := trace.Kind(1); k < trace.NumKinds; k++ {
		ks := st.Kinds[k]
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%s\t%.1f\t\n", k, ks.Events, 100*perEvent(ks.Events, st.Events),
			humanBytes(int64(ks.Bytes)), perEvent(ks.Bytes, ks.Events))
	}
	tw.Flush()
	if procs := pt.Processes(); len(procs) > 0 {
		fmt.Fprintln(c.stdout)
		printProcesses(c.stdout, procs, infoProcesses)
	}
	if damage != nil {
		return c.fail("%s: %v", damagedPath(r.Dir(), damage), damage)
	}
	return 0
}

func (c *traceCmd) ps(args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	r, code := c.parseOpen(fs, psUsage, args)
	if r == nil {
		return code
	}
	defer r.Close()
	procs, damage := trace.ReadProcesses(r)
	printProcesses(c.stdout, procs, -1)
	if damage != nil {
		return c.fail("%s: %v", r.Dir(), damage)
	}
	return 0
}

// infoProcesses is how many processes hermit trace info lists.
const infoProcesses = 20

// printProcesses prints the process table, at most max rows (-1: all).
func printProcesses(w io.Writer, procs []trace.Process, max int) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "PID\tPPID\tEXIT\tEVENT\tCMD")
	for i, p := range procs {
		if i == max {
			fmt.Fprintf(tw, "... %d more (hermit trace ps)\n", len(procs)-max)
			break
		}
		pid, ppid, exit, cmd := "?", "-", "-", quoteArgs(p.Argv)
		if p.Vpid != 0 {
			pid = fmt.Sprint(p.Vpid)
		}
		if p.Ppid != 0 {
			ppid = fmt.Sprint(p.Ppid)
		}
		if p.Exited {
			exit = exitString(p.Status)
		}
		if !p.Execed {
			cmd = fmt.Sprintf("(fork of %d) %s", p.ForkOf, cmd)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", pid, ppid, exit, p.Event, cmd)
	}
	tw.Flush()
}

// exitString shows a wait status as an exit code or a signal name.
func exitString(status int32) string {
	ws := syscall.WaitStatus(status)
	if ws.Signaled() {
		return signalName(int32(ws.Signal()))
	}
	return fmt.Sprint(ws.ExitStatus())
}

func first(pos []string) string {
	if len(pos) == 0 {
		return ""
	}
	return pos[0]
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func perEvent(n, events uint64) float64 {
	if events == 0 {
		return 0
	}
	return float64(n) / float64(events)
}

func quoteArgs(argv []string) string {
	if len(argv) == 0 {
		return "?"
	}
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
			q[i] = fmt.Sprintf("%q", a)
		}
	}
	return strings.Join(q, " ")
}

func formatFlags(flags map[string]string) string {
	if len(flags) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = k + "=" + flags[k]
	}
	return strings.Join(keys, " ")
}

// formatThreads lists event counts per thread, busiest first, at most 8.
func formatThreads(threads map[int32]uint64) string {
	tids := make([]int32, 0, len(threads))
	for t := range threads {
		tids = append(tids, t)
	}
	slices.SortFunc(tids, func(a, b int32) int {
		if threads[a] != threads[b] {
			return -cmpU64(threads[a], threads[b])
		}
		return int(a) - int(b)
	})
	parts := make([]string, 0, 9)
	for i, t := range tids {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("... %d more", len(tids)-8))
			break
		}
		parts = append(parts, fmt.Sprintf("%d: %d", t, threads[t]))
	}
	return fmt.Sprintf("%d threads (%s)", len(tids), strings.Join(parts, ", "))
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}
