// Command runbench measures `hermit run` against native execution and
// against strace intercepting the same syscalls, side by side in one run.
//
// For each workload it times the whole command (wall clock) natively, under
// `hermit run --summary` and under
// `strace -f --seccomp-bpf -e trace=$(hermit run --list-intercepted) -o /dev/null`,
// interleaving the three so drift affects them alike, and prints the medians,
// the ratios to native and the targets in a markdown table. From the summary
// it reports intercepted syscalls and ptrace stops per run.
//
// In the same runs it times `hermit record` and `hermit replay --autopilot`
// of each workload (record.go) and prints them in a second table, as ratios
// to native and to `hermit run`, with the size of the trace per second of
// native run time.
//
// Usage (after `make build`): go run ./tests/bench/runbench [-hermit bin/hermit] [-runs 5] [-only REGEXP]
//
// It exits 1 if a native or hermit command failed; missed targets are
// reported, not treated as failures.
package main

import (
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hermitdbg/hermit/tests/internal/procrun"
)

//go:embed guests/*.c guests/sleeper/main.go guests/goclock/main.go
var guestSources embed.FS

// workload is one benchmarked command.
type workload struct {
	name   string
	argv   []string
	target float64 // the hermit/native ratio to stay under; 0 means none
	// baseline, if set, is the same program doing no work: "excl. startup"
	// subtracts its time instead of /bin/true's, leaving the marginal cost
	// of the work itself.
	baseline []string
	// flags are extra `hermit run` flags.
	flags []string
	// spins, when set, is how many fresh spin waits the workload makes:
	// the line after the table gives the cost of one spin detection.
	spins int
}

// only, when set, keeps the workloads whose names match it (-only).
var only *regexp.Regexp

// spinBudget and spinBudgetAgain are the engine's spin budgets
// (detcore/spin.go), to report: a thread's first, and that of a thread
// found spinning at its last examination.
const (
	spinBudget      = 20 * time.Millisecond
	spinBudgetAgain = 2 * time.Millisecond
)

// mode is one way of running a workload.
type mode int

const (
	native mode = iota
	hermit
	strace
	record
	replay
	nmodes
)

// measurement collects the runs of one workload in one mode.
type measurement struct {
	times []time.Duration
	err   error // the first failure; no further runs after it
}

// summary holds the figures parsed from `hermit run --summary`.
type summary struct {
	intercepted, stops, syscallStops int64
}

var summaryRE = regexp.MustCompile(`(?m)^hermit summary:\n(?:  .*\n)*?  syscalls intercepted: (\d+)\n  ptrace stops: (\d+)\n  syscall stops: (\d+)\n`)

func main() {
	hermitBin := flag.String("hermit", "bin/hermit", "the hermit binary to measure")
	runs := flag.Int("runs", 5, "runs per workload and mode; medians are reported")
	timeout := flag.Duration("timeout", 2*time.Minute, "limit for a single command")
	cpuTarget := flag.Duration("cpu", 500*time.Millisecond, "native duration of the CPU loop")
	onlyRE := flag.String("only", "", "measure only the workloads whose names match this `regexp` (and the startup row)")
	flag.Parse()
	if *onlyRE != "" {
		re, err := regexp.Compile(*onlyRE)
		if err != nil {
			fatalf("-only: %v", err)
		}
		only = re
	}
	if *runs < 1 {
		fatalf("-runs must be at least 1")
	}
	if err := run(os.Stdout, *hermitBin, *runs, *timeout, *cpuTarget); err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "runbench: "+format+"\n", args...)
	os.Exit(1)
}

func run(w io.Writer, hermitBin string, runs int, timeout, cpuTarget time.Duration) error {
	hermitBin, err := filepath.Abs(hermitBin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(hermitBin); err != nil {
		return fmt.Errorf("%w (build it with `make build`)", err)
	}
	dir, err := os.MkdirTemp("", "runbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// hermit's cache and traces of its own, for every mode: the user's
	// are left alone, and their state (a large cache's trimming walk, a
	// second in one measured run) is no part of the measurement.
	os.Setenv("HERMIT_CACHE_DIR", filepath.Join(dir, "cache"))
	os.Setenv("HERMIT_TRACE_DIR", filepath.Join(dir, "traces"))
	bins, err := buildGuests(dir, timeout)
	if err != nil {
		return err
	}
	// The test suite's futex handoff guest (tests/guests/handoff.c), from
	// the checkout runbench runs in.
	if bins["futex_pingpong"], err = buildRepoGuest(dir, "handoff.c", timeout); err != nil {
		return err
	}
	iters, err := calibrate(bins["cpu_loop"], cpuTarget, timeout)
	if err != nil {
		return fmt.Errorf("calibrate CPU loop: %w", err)
	}
	straceArgs, straceNote := straceCommand(hermitBin, timeout)
	rec, recNote := newRecording(hermitBin, dir, timeout)

	workloads := []workload{
		{name: "startup (/bin/true)", argv: []string{"/bin/true"}},
		{name: "CPU loop, no syscalls", argv: []string{bins["cpu_loop"], strconv.FormatInt(iters, 10)}, target: 1.05,
			baseline: []string{bins["cpu_loop"], "0"}},
		{name: "200k getppid (filtered through)", argv: []string{bins["getppid"], "200000"}, target: 1.2,
			baseline: []string{bins["getppid"], "0"}},
		{name: "200k getppid, --no-trap-rdtsc", argv: []string{bins["getppid"], "200000"}, target: 1.2,
			baseline: []string{bins["getppid"], "0"}, flags: []string{"--no-trap-rdtsc"}},
		{name: "fork/exec: sh loop of 200 /bin/true", argv: []string{"/bin/sh", "-c", "for i in $(seq 200); do /bin/true; done"}},
		{name: "fork/exec loop, --no-trap-rdtsc", argv: []string{"/bin/sh", "-c", "for i in $(seq 200); do /bin/true; done"},
			flags: []string{"--no-trap-rdtsc"}},
		{name: "futex ping-pong, 2 threads, 20k round trips", argv: []string{bins["futex_pingpong"], "20000"}},
		{name: "1M clock_gettime through the vDSO", argv: []string{bins["clock_loop"], "1000000"},
			baseline: []string{bins["clock_loop"], "0"}},
		{name: "CPU loop beside a sleeping thread (spin checks)", argv: []string{bins["cpu_beside"], strconv.FormatInt(iters, 10)}, target: 1.05,
			baseline: []string{bins["cpu_beside"], "0"}},
		{name: "20 spin waits on a flag another thread sets", argv: []string{bins["spin_waits"], "20"},
			baseline: []string{bins["spin_waits"], "0"}, spins: 20},
		{name: "20 spin waits, --no-spin-traps (each after its budget; same schedule)", argv: []string{bins["spin_waits"], "20"},
			baseline: []string{bins["spin_waits"], "0"}, spins: 20, flags: []string{"--no-spin-traps"}},
		{name: "I/O: 50k file writes + 50k pipe round trips", argv: []string{bins["io_loop"], "50000", filepath.Join(dir, "io_loop.out")},
			baseline: []string{bins["io_loop"], "0", filepath.Join(dir, "io_loop.out")}},
	}
	if sleeper, err := buildGo(dir, "sleeper", timeout); err == nil {
		workloads = append(workloads, workload{name: "Go: 200 × (sleep 1 ms, read time)", argv: []string{sleeper, "200"},
			baseline: []string{sleeper, "0"}})
	} else {
		fmt.Fprintln(w, "the Go sleeper guest did not build: its workload is left out:", err)
	}
	if goclock, err := buildGo(dir, "goclock", timeout); err == nil {
		workloads = append(workloads, workload{name: "Go: 1M time.Since (the clock page)", argv: []string{goclock, "1000000"},
			baseline: []string{goclock, "0"}, target: 2})
	} else {
		fmt.Fprintln(w, "the Go clock guest did not build: its workload is left out:", err)
	}
	// The system python3, not a version manager's shim script that would
	// add its own process tree to the measurement.
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		py, err = exec.LookPath("python3")
	}
	if err == nil {
		workloads = append(workloads, workload{name: "python3 -c 'import json'", argv: []string{py, "-c", "import json"}})
	} else {
		fmt.Fprintln(w, "python3 not found: its workload is left out")
	}
	real, missing := realWorkloads(dir, timeout)
	workloads = append(workloads, real...)
	for _, m := range missing {
		fmt.Fprintln(w, m)
	}
	if only != nil {
		// The startup row stays: the others' "excl. startup" needs it.
		workloads = slices.DeleteFunc(workloads, func(wl workload) bool { return wl.name != workloads[0].name && !only.MatchString(wl.name) })
	}

	fmt.Fprintf(w, "# hermit run benchmarks\n\n%s, %d CPUs, kernel %s, %s; hermit %s\n",
		time.Now().Format("2006-01-02 15:04"), runtime.NumCPU(), kernelRelease(), runtime.Version(), hermitBin)
	fmt.Fprintf(w, "Wall time of the whole command, median of %d runs (more, up to %d, for a workload whose native runs are short: as many as make a second of native time). \"excl. startup\" subtracts, in each mode, the time of the same program doing no work (or of /bin/true), leaving the marginal cost of the work itself; targets are checked on it. strace: %s\n\n", runs, maxRounds, straceNote)
	fmt.Fprintln(w, "| workload | native | hermit | hermit ×native | excl. startup | target | strace | strace ×native | strace excl. startup | intercepted syscalls | ptrace stops (all) | syscall stops per intercepted syscall (target ≤ 1) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	var failed []string
	var startup [nmodes]measurement
	var recRows, notes []string
	for i, wl := range workloads {
		ms, sums, sizes := measure(wl, hermitBin, straceArgs, rec, runs, timeout)
		base := startup
		if i == 0 {
			startup = ms
		}
		if wl.baseline != nil {
			bw := wl
			bw.argv = wl.baseline
			base, _, _ = measure(bw, hermitBin, straceArgs, nil, runs, timeout)
		}
		fmt.Fprintln(w, row(wl, ms, base, sums, straceArgs != nil))
		if n := spinNote(wl, ms, base); n != "" {
			notes = append(notes, n)
		}
		recRows = append(recRows, recordRow(wl, ms, sizes))
		for m, mm := range ms {
			if mm.err != nil && mode(m) != strace {
				failed = append(failed, fmt.Sprintf("%s (%s): %v", wl.name, mode(m), mm.err))
			}
		}
	}
	for _, n := range notes {
		fmt.Fprintln(w)
		fmt.Fprintln(w, n)
	}
	printRecordTable(w, rec, recNote, recRows)
	if len(failed) > 0 {
		fmt.Fprintln(w)
		for _, f := range failed {
			fmt.Fprintln(w, "failed:", f)
		}
		return errors.New("some commands failed")
	}
	return nil
}

func (m mode) String() string {
	return [...]string{"native", "hermit", "strace", "hermit record", "hermit replay"}[m]
}

// buildGuests compiles the embedded guest sources into dir and returns the
// binaries by name.
func buildGuests(dir string, timeout time.Duration) (map[string]string, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return nil, fmt.Errorf("cc is needed to build the bench guests: %w", err)
	}
	entries, err := guestSources.ReadDir("guests")
	if err != nil {
		return nil, err
	}
	bins := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		src, err := guestSources.ReadFile("guests/" + e.Name())
		if err != nil {
			return nil, err
		}
		srcPath := filepath.Join(dir, e.Name())
		if err := os.WriteFile(srcPath, src, 0o644); err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(e.Name(), ".c")
		out := filepath.Join(dir, name)
		res, err := procrun.Run(exec.Command(cc, "-O1", "-g", "-pthread", "-Wall", "-Werror", "-o", out, srcPath), timeout)
		if err == nil && res.Exit != 0 {
			err = fmt.Errorf("exit %d: %s", res.Exit, res.Stderr)
		}
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", e.Name(), err)
		}
		bins[name] = out
	}
	return bins, nil
}

// buildRepoGuest compiles tests/guests/NAME of the checkout runbench runs
// in (make bench runs it from the top) into dir.
func buildRepoGuest(dir, name string, timeout time.Duration) (string, error) {
	guests, err := filepath.Abs(filepath.Join("tests", "guests"))
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, strings.TrimSuffix(name, ".c"))
	res, err := procrun.Run(exec.Command("cc", "-O1", "-g", "-pthread", "-Wall", "-I", guests, "-o", out, filepath.Join(guests, name)), timeout)
	if err == nil && res.Exit != 0 {
		err = fmt.Errorf("exit %d: %s", res.Exit, res.Stderr)
	}
	if err != nil {
		return "", fmt.Errorf("compile %s (run runbench from the top of the checkout): %w", name, err)
	}
	return out, nil
}

// buildGo builds the Go guest in guests/NAME (embedded sources) into dir.
func buildGo(dir, name string, timeout time.Duration) (string, error) {
	src, err := guestSources.ReadFile("guests/" + name + "/main.go")
	if err != nil {
		return "", err
	}
	pkg := filepath.Join(dir, name+"-src")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(pkg, "main.go"), src, 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, "main.go")
	cmd.Dir = pkg
	cmd.Env = append(os.Environ(), "GO111MODULE=off")
	res, err := procrun.Run(cmd, timeout)
	if err == nil && res.Exit != 0 {
		err = fmt.Errorf("exit %d: %s", res.Exit, res.Stderr)
	}
	return out, err
}

// calibrate returns the CPU loop iteration count that takes about target natively.
func calibrate(bin string, target, timeout time.Duration) (int64, error) {
	const probe = 50_000_000
	best := time.Duration(1<<63 - 1)
	for range 3 {
		d, _, err := timeOne([]string{bin, strconv.Itoa(probe)}, timeout)
		if err != nil {
			return 0, err
		}
		best = min(best, d)
	}
	return int64(float64(probe) * target.Seconds() / best.Seconds()), nil
}

// straceCommand returns the strace argv prefix, or nil and the reason why
// strace cannot be measured.
func straceCommand(hermitBin string, timeout time.Duration) ([]string, string) {
	path, err := exec.LookPath("strace")
	if err != nil {
		return nil, "n/a (strace not found)"
	}
	res, err := procrun.Run(exec.Command(hermitBin, "run", "--list-intercepted"), timeout)
	list := strings.TrimSpace(string(res.Stdout))
	if err != nil || res.Exit != 0 || list == "" {
		return nil, fmt.Sprintf("n/a (`hermit run --list-intercepted` failed: exit %d %s)", res.Exit, strings.TrimSpace(string(res.Stderr)))
	}
	// A "?" before a name makes strace ignore it if it does not know it
	// (an older strace lacks newer syscalls such as futex_wake).
	names := strings.Split(list, ",")
	for i, n := range names {
		names[i] = "?" + n
	}
	return []string{path, "-f", "--seccomp-bpf", "-e", "trace=" + strings.Join(names, ","), "-o", "/dev/null"},
		fmt.Sprintf("`strace -f --seccomp-bpf -e trace=LIST -o /dev/null`, LIST = the %d syscalls of `hermit run --list-intercepted`, each prefixed with ? so that names this strace does not know are ignored", len(names))
}

// measure runs wl runs times in each mode, interleaved, and returns the
// measurements, the summaries of the hermit runs and the sizes of the
// traces recorded. A nil rec leaves out record and replay.
func measure(wl workload, hermitBin string, straceArgs []string, rec *recording, runs int, timeout time.Duration) ([nmodes]measurement, []summary, []traceSize) {
	var ms [nmodes]measurement
	var sums []summary
	var sizes []traceSize
	argvs := [nmodes][]string{
		native: wl.argv,
		hermit: append(append(append([]string{hermitBin, "run", "--summary"}, wl.flags...), "--"), wl.argv...),
	}
	if straceArgs != nil {
		argvs[strace] = append(slices.Clone(straceArgs), wl.argv...)
	}
	for i := 0; i < runs; i++ {
		if i == 1 {
			runs = roundsFor(ms[native].times, runs)
		}
		if rec != nil {
			argvs[record], argvs[replay] = rec.commands(wl)
		}
		for m := range nmodes {
			if argvs[m] == nil || ms[m].err != nil || m == replay && ms[record].err != nil {
				continue
			}
			d, res, err := timeOne(argvs[m], timeout)
			if err != nil {
				ms[m].err = err
				continue
			}
			ms[m].times = append(ms[m].times, d)
			if m == record {
				sizes = append(sizes, rec.size())
			}
			if m == hermit {
				s, err := parseSummary(res.Stderr)
				if err != nil {
					ms[m].err = err
					continue
				}
				sums = append(sums, s)
			}
		}
		rec.clean()
	}
	return ms, sums, sizes
}

// Short workloads get more rounds than -runs: on a VM whose timings move
// by a third from one run to the next, the median of 5 runs of a 20 ms
// program decided a target either way. A row runs until its native runs
// add up to about minNative, in at most maxRounds rounds.
const (
	minNative = time.Second
	maxRounds = 21
)

// roundsFor returns the rounds for a workload whose first native run took
// first[0] (none: runs).
func roundsFor(first []time.Duration, runs int) int {
	if len(first) == 0 || first[0] <= 0 || runs >= maxRounds {
		return runs
	}
	return max(runs, min(maxRounds, int((minNative+first[0]-1)/first[0])))
}

// timeOne runs argv once; a non-zero exit is an error.
func timeOne(argv []string, timeout time.Duration) (time.Duration, procrun.Result, error) {
	res, err := procrun.Run(exec.Command(argv[0], argv[1:]...), timeout)
	if err == nil && res.Exit != 0 {
		err = fmt.Errorf("exit %d: %s", res.Exit, firstLine(res.Stderr))
	}
	return res.Duration, res, err
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}

func parseSummary(stderr []byte) (summary, error) {
	m := summaryRE.FindSubmatch(stderr)
	if m == nil {
		return summary{}, fmt.Errorf("no summary block on stderr: %s", firstLine(stderr))
	}
	var s summary
	s.intercepted, _ = strconv.ParseInt(string(m[1]), 10, 64)
	s.stops, _ = strconv.ParseInt(string(m[2]), 10, 64)
	s.syscallStops, _ = strconv.ParseInt(string(m[3]), 10, 64)
	return s, nil
}

// row formats one table row.
func row(wl workload, ms, startup [nmodes]measurement, sums []summary, haveStrace bool) string {
	nat, natOK := median(ms[native])
	nat0, ok0 := median(startup[native])
	cells := []string{wl.name, timeCell(ms[native])}
	for _, m := range []mode{hermit, strace} {
		ratio := "–"
		d, ok := median(ms[m])
		if ok && natOK {
			ratio = fmt.Sprintf("%.2f×", d.Seconds()/nat.Seconds())
		}
		switch {
		case m == strace && !haveStrace:
			cells = append(cells, "n/a", "n/a", "n/a")
			continue
		default:
			cells = append(cells, timeCell(ms[m]), ratio)
		}
		// Startup excluded on each side alike: strace's own start (a few
		// ms) is in its raw ratio as hermit's is in hermit's.
		m0, ok0m := median(startup[m])
		excl, exclOK := "–", ok && natOK && ok0 && ok0m && nat > nat0
		if exclOK {
			excl = fmt.Sprintf("%.2f×", (d-m0).Seconds()/(nat-nat0).Seconds())
		}
		cells = append(cells, excl)
		if m == hermit {
			cells = append(cells, targetCell(wl.target, d-m0, nat-nat0, exclOK))
		}
	}
	return "| " + strings.Join(append(cells, summaryCells(sums)...), " | ") + " |"
}

// spinNote gives the cost of one spin detection from a workload of fresh
// spin waits: hermit's marginal time (its time less that of the program
// doing none), less the native time, per wait, and that less the budget.
func spinNote(wl workload, ms, base [nmodes]measurement) string {
	if wl.spins == 0 {
		return ""
	}
	h, ok1 := median(ms[hermit])
	hb, ok2 := median(base[hermit])
	n, ok3 := median(ms[native])
	nb, ok4 := median(base[native])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return "spin detection: not measured (a run failed)"
	}
	per := ((h - hb) - (n - nb)) / time.Duration(wl.spins)
	// The first wait takes the budget; the others are found at the spin
	// trap of the loop, as the thread arrives.
	budget := spinBudget / time.Duration(wl.spins)
	how := fmt.Sprintf("the first wait's budget spread over the %d (a spinner runs %v before it is first examined; later spins at that loop are found at its spin trap as the thread arrives)", wl.spins, spinBudget)
	rest := "the stop at the trap, the examination, the switch, and the look after its wake that tells it has left the loop"
	if slices.Contains(wl.flags, "--no-spin-traps") {
		// The others (the same thread, found spinning before) take the
		// shorter budget.
		budget = (spinBudget + time.Duration(wl.spins-1)*spinBudgetAgain) / time.Duration(wl.spins)
		how = fmt.Sprintf("the budget (a spinner runs %v before it is first examined, %v once it has been found spinning; its CPU time counted from its resume once found spinning, from the watchdog's first look, every 2 ms, before)", spinBudget, spinBudgetAgain)
		rest = "the look's lag, the examination, stepping to the loop's head, the switch, and the look after its wake that tells it has left the loop"
	}
	return fmt.Sprintf("spin detection (%s): %.1f ms per spin wait, of which %.1f ms %s and %.1f ms the rest: %s",
		wl.name, float64(per.Microseconds())/1000, float64(budget.Microseconds())/1000, how, float64((per-budget).Microseconds())/1000, rest)
}

func median(m measurement) (time.Duration, bool) {
	if m.err != nil || len(m.times) == 0 {
		return 0, false
	}
	s := slices.Clone(m.times)
	slices.Sort(s)
	return s[len(s)/2], true
}

func timeCell(m measurement) string {
	if m.err != nil {
		return "error: " + strings.ReplaceAll(m.err.Error(), "|", "/")
	}
	d, _ := median(m)
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

func targetCell(target float64, d, nat time.Duration, ok bool) string {
	switch {
	case target == 0:
		return "–"
	case !ok:
		return fmt.Sprintf("≤ %.2f×", target)
	case d.Seconds()/nat.Seconds() <= target:
		return fmt.Sprintf("≤ %.2f× met", target)
	default:
		return fmt.Sprintf("≤ %.2f× **missed**", target)
	}
}

// summaryCells formats the intercepted syscalls and stops; figures that
// vary between runs are shown as a range.
func summaryCells(sums []summary) []string {
	if len(sums) == 0 {
		return []string{"–", "–", "–"}
	}
	var in, st, ss []int64
	for _, s := range sums {
		in = append(in, s.intercepted)
		st = append(st, s.stops)
		ss = append(ss, s.syscallStops)
	}
	ratio := "–"
	if in[0] > 0 {
		r := float64(ss[0]) / float64(in[0])
		verdict := "met"
		if r > 1 {
			verdict = "**missed**"
		}
		ratio = fmt.Sprintf("%.4f %s", r, verdict)
	}
	return []string{spread(in), spread(st), ratio}
}

func spread(v []int64) string {
	lo, hi := slices.Min(v), slices.Max(v)
	if lo == hi {
		return strconv.FormatInt(lo, 10)
	}
	return fmt.Sprintf("%d–%d (varies)", lo, hi)
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
