// Command replbench times the interactive debugger's long moves over a
// recording of about 100k events: `goto` to its last event, and one
// `reverse-step` from there, which replays from the start (a command line
// this short ends before the automatic checkpoints are made: see revbench
// for going back with them), beside the plain replay of the same trace
// (`--autopilot`) for scale. Each is timed as a whole `hermit replay`
// command, less the same command doing nothing (`--ex quit`), over the
// median of several runs.
//
// Usage (after `make build`): go run ./tests/bench/replbench [-hermit bin/hermit] [-events 100000] [-runs 5]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/hermitdbg/hermit/tests/bench/internal/cguest"
)

const guest = `#include <sched.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	long n = atol(argv[1]);
	for (long i = 0; i < n; i++)
		sched_yield();
	return 0;
}
`

func main() {
	hermit := flag.String("hermit", "bin/hermit", "the hermit binary")
	events := flag.Int("events", 100000, "about how many events the recording has")
	runs := flag.Int("runs", 5, "runs of each command; the median is shown")
	flag.Parse()
	if err := run(*hermit, *events, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "replbench:", err)
		os.Exit(1)
	}
}

func run(hermit string, events, runs int) error {
	work, bin, ok, err := cguest.Build("replbench", guest)
	if !ok {
		return err
	}
	defer os.RemoveAll(work)
	tr := filepath.Join(work, "trace")
	env := append(os.Environ(), "HERMIT_CACHE_DIR="+filepath.Join(work, "cache"), "HERMIT_TRACE_DIR="+work)
	if out, err := command(env, hermit, "record", "-o", tr, "--", bin, strconv.Itoa(events)).CombinedOutput(); err != nil {
		return fmt.Errorf("hermit record: %v\n%s", err, out)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"nothing (subtracted)", []string{"replay", "--ex", "quit", tr}},
		{"replay --autopilot", []string{"replay", "--autopilot", tr}},
		{"goto end", []string{"replay", "--ex", "goto end", tr}},
		{"goto end, reverse-step", []string{"replay", "--ex", "goto end", "--ex", "reverse-step", tr}},
	}
	times := make([][]time.Duration, len(cases))
	for range runs {
		for i, c := range cases {
			start := time.Now()
			if out, err := command(env, hermit, c.args...).CombinedOutput(); err != nil {
				return fmt.Errorf("hermit %v: %v\n%s", c.args, err, out)
			}
			times[i] = append(times[i], time.Since(start))
		}
	}
	med := make([]time.Duration, len(cases))
	for i := range times {
		slices.Sort(times[i])
		med[i] = times[i][len(times[i])/2]
	}
	fmt.Printf("\n### REPL over a recording of %d sched_yield calls (median of %d)\n\n", events, runs)
	fmt.Println("| operation | time | × replay --autopilot |")
	fmt.Println("|---|---|---|")
	base, auto := med[0], med[1]-med[0]
	fmt.Printf("| replay --autopilot | %v | 1.00× |\n", round(auto))
	gotoEnd := med[2] - base
	fmt.Printf("| goto the last event | %v | %.2f× |\n", round(gotoEnd), ratio(gotoEnd, auto))
	rs := med[3] - med[2]
	fmt.Printf("| one reverse-step from there (replays from the start) | %v | %.2f× |\n", round(rs), ratio(rs, auto))
	fmt.Printf("\n(starting the REPL and quitting, subtracted above: %v)\n", round(base))
	return nil
}

func command(env []string, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Env = env
	return c
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}
