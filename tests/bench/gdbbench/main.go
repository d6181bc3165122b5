// Command gdbbench measures hermit's GDB remote protocol stub against
// gdbserver, side by side in one run, with the same gdb driving both.
//
// One small C guest (guests/gdbguest.c, built here with cc -O1 -g) runs
// natively under `gdbserver 127.0.0.1:0 BIN` and, recorded once with
// `hermit record`, under `hermit replay --gdb-port 0 TRACE`. In each
// session `gdb -nx -batch` runs bench.py, which times, inside gdb's python:
//
//   - stepi rate: `stepi N` in the guest's busy loop, in steps per second
//     (goal: hermit at least half of gdbserver's rate);
//   - breakpoint round trip: continuing through N hits of a breakpoint with
//     an ignore count, which gdb counts itself, so every hit is a stop and a
//     resume through the stub (goal: hermit within 2× of gdbserver).
//
// Sessions alternate (gdbserver, hermit, gdbserver, ...) and the medians are
// printed in a markdown table. Before the timed runs, one session on each
// side goes through a counting proxy (proxy.go), which reports how many
// stops and packets each workload took; -log DIR keeps those transcripts.
//
// Usage (after `make build`): go run ./tests/bench/gdbbench [-hermit bin/hermit] [-runs 5]
//
// A missing gdb, gdbserver or cc is reported in one line and its part
// skipped (exit 0); so is a hermit whose stub does not listen. It exits 1 if
// a session of a working side failed; missed goals are reported, not failures.
package main

import (
	"embed"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hermitdbg/hermit/tests/internal/procrun"
)

//go:embed guests/*.c bench.py
var files embed.FS

// Goals from the issue.
const (
	goalStepRate  = 0.5 // hermit's stepi rate ≥ 0.5× gdbserver's
	goalRoundTrip = 2.0 // hermit's breakpoint round trip ≤ 2× gdbserver's
)

// config is the command line.
type config struct {
	hermit, gdb, gdbserver string
	runs, steps, hits      int
	timeout                time.Duration
	cpu                    string
	logDir                 string
}

func main() {
	var c config
	flag.StringVar(&c.hermit, "hermit", "bin/hermit", "the hermit binary to measure")
	flag.StringVar(&c.gdb, "gdb", "/usr/bin/gdb", "the gdb client (13 or later, with python)")
	flag.StringVar(&c.gdbserver, "gdbserver", "/usr/bin/gdbserver", "the gdbserver to compare with")
	flag.IntVar(&c.runs, "runs", 5, "sessions per side; medians are reported")
	flag.IntVar(&c.steps, "steps", 2000, "instructions to stepi through per session")
	flag.IntVar(&c.hits, "hits", 1000, "breakpoint round trips per session")
	flag.DurationVar(&c.timeout, "timeout", 2*time.Minute, "limit for a single command or session")
	flag.StringVar(&c.cpu, "cpu", "0", "run gdbserver and hermit (each with its guest) under `taskset -c CPU`, or none; gdb itself is not pinned")
	flag.StringVar(&c.logDir, "log", "", "write the RSP transcripts of the counting sessions into `DIR`")
	flag.Parse()
	if c.runs < 1 || c.steps < 1 || c.hits < 1 {
		fatalf("-runs, -steps and -hits must be at least 1")
	}
	code, err := run(os.Stdout, c)
	if err != nil {
		fatalf("%v", err)
	}
	os.Exit(code)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gdbbench: "+format+"\n", args...)
	os.Exit(1)
}

// side is one debug server being measured.
type side struct {
	name string
	// argv is the server's command; it prints an address matching addrRE
	// on stderr once listening (the port alone if addrRE has no host).
	argv   []string
	addrRE string
	// note is why the side is not measured; "" if it is.
	note   string
	counts *counts // from the counting session; nil if none
	steps  []time.Duration
	hits   []time.Duration
	err    error // the first failed timed session; none run after it
	warns  []string
}

func run(w io.Writer, c config) (int, error) {
	gdbVersion, ok := toolVersion(c.gdb)
	if !ok {
		fmt.Fprintf(w, "gdbbench: skipped: gdb not found at %s (install gdb 13 or later with python, e.g. `apt-get install gdb`)\n", c.gdb)
		return 0, nil
	}
	if res, err := procrun.Run(exec.Command(c.gdb, "-nx", "-batch", "-ex", "python print('py' + 'thon ok')"), c.timeout); err != nil || !strings.Contains(string(res.Stdout), "python ok") {
		fmt.Fprintf(w, "gdbbench: skipped: %s has no python support (install a gdb built with python, e.g. Debian's gdb package)\n", c.gdb)
		return 0, nil
	}
	if _, err := exec.LookPath("cc"); err != nil {
		fmt.Fprintln(w, "gdbbench: skipped: cc not found; it builds the guest (install gcc, e.g. `apt-get install gcc`)")
		return 0, nil
	}
	dir, err := os.MkdirTemp("", "gdbbench-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	bin, script, err := prepare(dir, c.timeout)
	if err != nil {
		return 1, err
	}
	taskset, pinNote := pinning(c.cpu)
	if c.logDir != "" {
		if err := os.MkdirAll(c.logDir, 0o755); err != nil {
			return 1, err
		}
	}

	gs := &side{name: "gdbserver", addrRE: `Listening on port (\d+)`}
	serverVersion, ok := toolVersion(c.gdbserver)
	if ok {
		gs.argv = append(slices.Clone(taskset), c.gdbserver, "127.0.0.1:0", bin, fmt.Sprint(c.hits+10))
	} else {
		gs.note = fmt.Sprintf("gdbserver not found at %s (install gdbserver 13 or later, e.g. `apt-get install gdbserver`)", c.gdbserver)
	}
	hm := &side{name: "hermit", addrRE: `listening for a debugger on (\S+:\d+)`}
	hermitBin, err := filepath.Abs(c.hermit)
	if err == nil {
		_, err = os.Stat(hermitBin)
	}
	if err != nil {
		hm.note = fmt.Sprintf("%v (build it with `make build`)", err)
	} else {
		trace := filepath.Join(dir, "trace")
		hm.note = recordGuest(hermitBin, trace, bin, c.hits+10, c.timeout)
		hm.argv = append(slices.Clone(taskset), hermitBin, "replay", "--gdb-port", "0", trace)
	}
	sides := []*side{gs, hm}

	// The counting sessions, which also tell whether a side works at all.
	for _, s := range sides {
		if s.note != "" {
			continue
		}
		logPath := ""
		if c.logDir != "" {
			logPath = filepath.Join(c.logDir, s.name+".rsp.log")
		}
		r := session(s, c, bin, script, true, logPath)
		s.warns = append(s.warns, r.warns...)
		switch {
		case r.notListening:
			s.note = "its stub did not listen: " + r.err.Error()
		case r.err != nil:
			s.err = fmt.Errorf("counting session: %w", r.err)
		default:
			s.counts = r.counts
		}
	}
	for _, s := range sides {
		if s.note != "" {
			fmt.Fprintf(w, "gdbbench: %s part skipped: %s\n", s.name, s.note)
		}
	}
	for range c.runs {
		for _, s := range sides {
			if s.note != "" || s.err != nil {
				continue
			}
			r := session(s, c, bin, script, false, "")
			s.warns = append(s.warns, r.warns...)
			if r.err != nil {
				s.err = r.err
				continue
			}
			s.steps = append(s.steps, r.steps)
			s.hits = append(s.hits, r.hits)
		}
	}

	fmt.Fprintf(w, "# gdb remote protocol: hermit replay vs gdbserver\n\n%s, %d CPUs, kernel %s, %s\n",
		time.Now().Format("2006-01-02 15:04"), runtime.NumCPU(), kernelRelease(), runtime.Version())
	fmt.Fprintf(w, "client: %s (`%s -nx -batch`); gdbserver: %s; hermit: %s (`hermit replay --gdb-port 0 TRACE` of `hermit record -- BIN`)\n",
		gdbVersion, c.gdb, orNA(serverVersion, gs.note), hermitBin)
	fmt.Fprintf(w, "Guest: tests/bench/gdbbench/guests/gdbguest.c (cc -O1 -g). Timed inside gdb's python around the command only; median of %d sessions per side, alternating. %s\n\n", c.runs, pinNote)
	printTable(w, c, gs, hm)
	code := 0
	for _, s := range sides {
		if s.err != nil {
			if code == 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "failed: %s: %v\n", s.name, s.err)
			code = 1
		}
	}
	return code, nil
}

// prepare builds the guest into dir and writes the gdb script there.
func prepare(dir string, timeout time.Duration) (bin, script string, err error) {
	src, err := files.ReadFile("guests/gdbguest.c")
	if err != nil {
		return "", "", err
	}
	srcPath := filepath.Join(dir, "gdbguest.c")
	bin = filepath.Join(dir, "gdbguest")
	script = filepath.Join(dir, "bench.py")
	if err := os.WriteFile(srcPath, src, 0o644); err != nil {
		return "", "", err
	}
	py, err := files.ReadFile("bench.py")
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(script, py, 0o644); err != nil {
		return "", "", err
	}
	res, err := procrun.Run(exec.Command("cc", "-O1", "-g", "-Wall", "-Werror", "-o", bin, srcPath), timeout)
	if err == nil && res.Exit != 0 {
		err = fmt.Errorf("exit %d: %s", res.Exit, res.Stderr)
	}
	if err != nil {
		return "", "", fmt.Errorf("compile gdbguest.c: %w", err)
	}
	return bin, script, nil
}

// recordGuest records one run of the guest into trace; it returns why that
// failed, or "".
func recordGuest(hermitBin, trace, bin string, calls int, timeout time.Duration) string {
	res, err := procrun.Run(exec.Command(hermitBin, "record", "-o", trace, "--", bin, fmt.Sprint(calls)), timeout)
	switch {
	case err != nil:
		return "`hermit record` failed: " + err.Error()
	case res.Exit != 0:
		return fmt.Sprintf("`hermit record` exited %d: %s", res.Exit, firstLine(res.Stderr))
	}
	return ""
}

// pinning returns the argv prefix that pins a server, and says so.
func pinning(cpu string) ([]string, string) {
	if cpu == "none" || cpu == "" {
		return nil, "Not pinned (hermit still pins itself and its guest to the CPU it starts on)."
	}
	ts, err := exec.LookPath("taskset")
	if err != nil {
		return nil, "Not pinned: taskset not found (hermit still pins itself and its guest to the CPU it starts on)."
	}
	return []string{ts, "-c", cpu}, fmt.Sprintf("Each server runs with its guest under `taskset -c %s` (hermit pins both to the CPU it starts on anyway); gdb is not pinned.", cpu)
}

func toolVersion(path string) (string, bool) {
	p, err := exec.LookPath(path)
	if err != nil {
		return "", false
	}
	res, err := procrun.Run(exec.Command(p, "--version"), 30*time.Second)
	if err != nil || res.Exit != 0 {
		return "", false
	}
	return firstLine(res.Stdout), true
}

func orNA(s, note string) string {
	if note != "" {
		return "n/a"
	}
	return s
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
