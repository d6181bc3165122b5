package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hermitdbg/hermit/detcore/ptrace"
)

const chaosUsage = `Usage: hermit chaos [flags] -- PROG [ARGS...]

Searches for a schedule that makes PROG fail: runs it under
'hermit run --chaos --seed S' for seeds 1, 2, 3, ... on parallel jobs,
stops at the first failing seed (the lowest, whatever --jobs is), prints
the seed and the 'hermit run' command that repeats the failure, and
records the failing run to a trace that 'hermit replay' opens at once.
A run fails when its exit status is not 0, unless --until, --stdout,
--stderr or --timeout say otherwise (any one given then suffices). Run
flags (--chaos-depth, --sched-heuristic, --timeslice, --epoch, ...) apply
to every run; --num-cpus is 4 unless given (run's default of 1 would
leave thread pools sized by it, such as Go's, one thread to interleave).
A run that hermit itself stops (a deadlock, say: status 125) counts as
failing too. hermit chaos exits 1 when it found a failure, 0 when no run
failed, 2 for bad flags and 125 if a run could not be made.

Flags:
`

// chaosGuestCPUs is how many CPUs hermit chaos's runs tell the guest it
// has unless --num-cpus says.
const chaosGuestCPUs = 4

// runOnlyFlags are hermit run's flags that hermit chaos refuses: it sets
// them itself.
var runOnlyFlags = []string{"seed", "seed-from", "chaos", "chaos-points", "summary", "schedule-log"}

// chaosOpts are hermit chaos's own flags.
type chaosOpts struct {
	runs, jobs int
	until      string
	stdout     string
	stderr     string
	timeout    time.Duration
	shard      string
	out        string
	noRecord   bool
	minimize   bool
	progress   time.Duration
}

func chaosMain(args []string) int {
	fs := flag.NewFlagSet("hermit chaos", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), chaosUsage)
		// Only the flags hermit chaos takes.
		shown := flag.NewFlagSet("", flag.ContinueOnError)
		shown.SetOutput(fs.Output())
		fs.VisitAll(func(fl *flag.Flag) {
			if !slices.Contains(runOnlyFlags, fl.Name) {
				shown.Var(fl.Value, fl.Name, fl.Usage)
			}
		})
		shown.PrintDefaults()
	}
	var f runFlags
	f.register(fs)
	var o chaosOpts
	fs.IntVar(&o.runs, "runs", 1000, "try at most `N` seeds")
	fs.IntVar(&o.jobs, "jobs", len(chaosCPUs()), "run `J` seeds at a time, each pinned to its own CPU (default: as many as the CPUs hermit may use)")
	fs.StringVar(&o.until, "until", "", "a run fails when its status is `exit!=N` or exit==N (default exit!=0 when no other condition is given)")
	fs.StringVar(&o.stdout, "stdout", "", "a run fails when its stdout matches `REGEX` (Go syntax)")
	fs.StringVar(&o.stderr, "stderr", "", "a run fails when its stderr matches `REGEX` (hermit's own lines included)")
	fs.DurationVar(&o.timeout, "timeout", 0, "a run fails when it is still running after `D` (a hang); it is then stopped")
	fs.StringVar(&o.shard, "shard", "", "search shard `K/N` of the seeds only (K, K+N, K+2N, ...), so that N machines search disjoint seeds")
	fs.StringVar(&o.out, "o", "", "write the failing run's trace to directory `DIR` (default: a new directory, as hermit record does)")
	fs.BoolVar(&o.noRecord, "no-record", false, "do not record the failing run")
	fs.DurationVar(&o.progress, "progress", 30*time.Second, "when stderr is not a terminal (a CI log), print a line of progress every `D` (0: never); a terminal gets one line, kept up to date")
	fs.BoolVar(&o.minimize, "minimize", false, "shrink the failing schedule to the fewest PCT change points that still fail, and name the two threads and events whose order makes the difference")
	if done, code := parseFlags(fs, args); done {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for _, name := range runOnlyFlags {
		if set[name] {
			fmt.Fprintf(os.Stderr, "hermit chaos: --%s is hermit run's; hermit chaos chooses the seeds and the scheduler itself\n", name)
			return 2
		}
	}
	f.ch.chaos = true // --sched-heuristic may choose random instead of pct
	cond, first, step, code := o.check(set)
	if code != 0 {
		return code
	}
	if _, code := f.check("chaos", fs.Args()); code != 0 {
		return code
	}
	c := &chaosSearch{opts: o, cond: cond, argv: fs.Args(), flags: passFlags(fs, set)}
	if !set["num-cpus"] {
		// More CPUs than run's one: runtimes that size their pools by it
		// (Go's GOMAXPROCS) then run threads the search can interleave.
		c.flags = append(c.flags, "--num-cpus="+strconv.Itoa(chaosGuestCPUs))
	}
	if !set["cpu"] {
		c.cpus = chaosCPUs()
	}
	stop := handleSignals()
	defer stop()
	return c.main(first, step)
}

// check validates hermit chaos's own flags, returning the failure
// condition and the seeds' start and step.
func (o *chaosOpts) check(set map[string]bool) (failCond, int, int, int) {
	var c failCond
	bad := func(format string, args ...any) (failCond, int, int, int) {
		fmt.Fprintf(os.Stderr, "hermit chaos: "+format+"\n", args...)
		return c, 0, 0, 2
	}
	if o.runs < 1 {
		return bad("--runs %d: want 1 or more", o.runs)
	}
	if o.jobs < 1 || o.jobs > 4*runtime.NumCPU() {
		return bad("--jobs %d: want 1 to %d", o.jobs, 4*runtime.NumCPU())
	}
	if o.progress < 0 {
		return bad("--progress %v: want a duration of 0 (never) or more", o.progress)
	}
	if o.timeout < 0 {
		return bad("--timeout %v: want a positive duration", o.timeout)
	}
	c.timeout = o.timeout
	var err error
	if o.until != "" {
		if c.exitOp, c.exitN, err = parseUntil(o.until); err != nil {
			return bad("%v", err)
		}
	}
	for _, re := range []struct {
		name, s string
		to      **regexp.Regexp
	}{{"stdout", o.stdout, &c.stdout}, {"stderr", o.stderr, &c.stderr}} {
		if re.s == "" {
			continue
		}
		if *re.to, err = regexp.Compile(re.s); err != nil {
			return bad("--%s %q: %v", re.name, re.s, err)
		}
	}
	if c.exitOp == "" && c.stdout == nil && c.stderr == nil && c.timeout == 0 {
		c.exitOp = "!="
	}
	first, step := 1, 1
	if o.shard != "" {
		if first, step, err = parseShard(o.shard); err != nil {
			return bad("%v", err)
		}
	}
	return c, first, step, 0
}

// passFlags returns the run flags given to hermit chaos, for its runs.
func passFlags(fs *flag.FlagSet, set map[string]bool) []string {
	var probe runFlags
	runSet := flag.NewFlagSet("", flag.ContinueOnError)
	probe.register(runSet)
	var out []string
	fs.Visit(func(fl *flag.Flag) {
		if runSet.Lookup(fl.Name) != nil {
			out = append(out, "--"+fl.Name+"="+fl.Value.String())
		}
	})
	return out
}

// shownCPU is cpu for a command line shown to the user: -1 for the first
// CPU, run's default when no other hermit is pinned there.
func shownCPU(cpu int) int {
	if cpu == ptrace.FirstCPU() {
		return -1
	}
	return cpu
}

// chaosCPUs lists the CPUs hermit may run on.
func chaosCPUs() []int {
	var cpus []int
	for i := 0; i < runtime.NumCPU(); i++ {
		if ptrace.MayRunOn(i) {
			cpus = append(cpus, i)
		}
	}
	if len(cpus) == 0 {
		cpus = []int{-1}
	}
	return cpus
}

// chaosSearch is one hermit chaos.
type chaosSearch struct {
	opts  chaosOpts
	cond  failCond
	argv  []string
	flags []string
	cpus  []int // the CPU of each worker, round robin; nil: as --cpu says
	// points, when set, are the change points of the minimized schedule.
	points string
}

// command is the hermit command line (after "hermit") that runs seed
// under cmd ("run" or "record") on cpu (-1: as the flags say). The
// workers name their CPU even when it is the first: the default would
// move a run off a CPU other hermits are pinned to (ptrace.FreeCPU).
func (c *chaosSearch) command(cmd string, seed uint64, cpu int, extra ...string) []string {
	args := append([]string{cmd}, extra...)
	args = append(args, c.flags...)
	if c.points != "" {
		args = append(args, "--chaos-points="+c.points)
	}
	if cpu >= 0 {
		args = append(args, "--cpu="+strconv.Itoa(cpu))
	}
	if !hasFlag(c.flags, "--sched-heuristic=") {
		args = append(args, "--chaos")
	}
	args = append(args, "--seed="+strconv.FormatUint(seed, 10), "--")
	return append(args, c.argv...)
}

func hasFlag(flags []string, prefix string) bool {
	for _, f := range flags {
		if strings.HasPrefix(f, prefix) {
			return true
		}
	}
	return false
}

// exec runs hermit with args, its output captured, stopping it (SIGTERM:
// hermit then kills its guest) when ctx ends or the timeout passes.
func (c *chaosSearch) exec(ctx context.Context, args []string) (chaosRun, error) {
	var r chaosRun
	self, err := os.Executable()
	if err != nil {
		return r, err
	}
	if c.opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, self, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err = cmd.Run()
	r.took = time.Since(start)
	r.stdout, r.stderr = stdout.Bytes(), stderr.Bytes()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			r.exit = 128 + int(st.Signal())
		}
	default:
		return r, err
	}
	r.timedOut = c.opts.timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded)
	return r, nil
}

func (c *chaosSearch) main(first, step int) int {
	tty := ptrace.StdioKind(os.Stderr) == "tty"
	start := time.Now()
	s := &searcher{
		runs: c.opts.runs,
		jobs: c.opts.jobs,
		seed: func(i int) uint64 { return uint64(first + i*step) },
		run: func(ctx context.Context, seed uint64, w int) (chaosRun, error) {
			cpu := -1
			if c.cpus != nil {
				cpu = c.cpus[w%len(c.cpus)]
			}
			r, err := c.exec(ctx, c.command("run", seed, cpu))
			r.seed, r.cpu = seed, cpu
			return r, err
		},
		failed: c.cond.failed,
	}
	progress := func(done, failing int) string {
		return fmt.Sprintf("hermit chaos: %d of %d runs, %d failing, %.1f runs/s", done, c.opts.runs, failing, rate(done, time.Since(start)))
	}
	switch {
	case tty:
		s.progress = func(done, failing int) { fmt.Fprintf(os.Stderr, "\r%s ", progress(done, failing)) }
	case c.opts.progress > 0:
		// A log gets a line now and then, not one per run.
		last := start
		s.progress = func(done, failing int) {
			if time.Since(last) >= c.opts.progress {
				last = time.Now()
				fmt.Fprintln(os.Stderr, progress(done, failing))
			}
		}
	}
	found, done, err := s.search()
	if tty {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
	took := time.Since(start)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit chaos: %v\n", err)
		return exitHermit
	}
	last := first + (c.opts.runs-1)*step
	if found == nil {
		fmt.Fprintf(os.Stderr, "hermit chaos: no failure in %s (seeds %s) in %v, %.1f runs/s\n",
			plural(done, "run"), seedRange(first, last, step), took.Round(time.Millisecond), rate(done, took))
		return 0
	}
	fmt.Fprintf(os.Stderr, "hermit chaos: seed %d fails (%s); %s in %v, %.1f runs/s\n",
		found.seed, c.cond.why(*found), plural(done, "run"), took.Round(time.Millisecond), rate(done, took))
	fmt.Fprintf(os.Stderr, "  repeat it:  %s\n", shellLine(c.command("run", found.seed, shownCPU(found.cpu))))
	if tail := tailLines(found.stderr, 5); tail != "" {
		fmt.Fprintf(os.Stderr, "  its stderr ended:\n%s", tail)
	}
	if c.opts.minimize {
		if err := c.minimize(found); err != nil {
			fmt.Fprintf(os.Stderr, "hermit chaos: --minimize: %v\n", err)
			return exitHermit
		}
	}
	if c.opts.noRecord {
		return 1
	}
	return c.record(found)
}

// record records the failing seed's run and says how to debug it.
func (c *chaosSearch) record(found *chaosRun) int {
	extra := []string{}
	if c.opts.out != "" {
		extra = append(extra, "-o", c.opts.out)
	}
	args := c.command("record", found.seed, found.cpu, extra...)
	fmt.Fprintf(os.Stderr, "  recording:  %s\n", shellLine(args))
	r, err := c.exec(context.Background(), args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit chaos: %v\n", err)
		return exitHermit
	}
	m := regexp.MustCompile(`(?m)^hermit: trace saved to (.+) \(\d+ events`).FindSubmatch(r.stderr)
	if m == nil {
		fmt.Fprintf(os.Stderr, "hermit chaos: the recording kept no trace: %s\n", tailLines(r.stderr, 3))
		return exitHermit
	}
	dir := string(m[1])
	if !c.cond.failed(r) {
		fmt.Fprintf(os.Stderr, "hermit chaos: the recording of seed %d did not fail (%s); its trace is %s\n", found.seed, exitWords(r.exit), dir)
		return exitHermit
	}
	fmt.Fprintf(os.Stderr, "  trace:      %s (%s)\n", dir, c.cond.why(r))
	fmt.Fprintf(os.Stderr, "  debug it:   hermit replay --gdb %s   (or --gdb-port N for lldb or Delve; without a flag, the REPL)\n", shellQuote(dir))
	return 1
}

func shellLine(args []string) string {
	q := []string{"hermit"}
	for _, a := range args {
		q = append(q, shellQuote(a))
	}
	return strings.Join(q, " ")
}

// tailLines returns the last n lines of b, indented, or "".
func tailLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ") + "\n"
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func seedRange(first, last, step int) string {
	if step == 1 {
		return fmt.Sprintf("%d to %d", first, last)
	}
	return fmt.Sprintf("%d to %d, step %d", first, last, step)
}
