// Command revbench times going backwards at the end of a long recording
// (about a million events): one reverse-stepi, and a reverse-continue to a
// breakpoint hit 1,000 events before, without checkpoints (a replay from
// the start) and with the automatic ones (made in the background while the
// user reads: the bench waits for them first, and shows how long that
// took), beside the recording's own replay (`hermit replay --autopilot`),
// and the guest memory the kept runs hold. Each move runs on the replay
// package's Timeline, as `hermit replay --gdb-port` and the REPL do.
//
// Usage (after `make build`): go run ./tests/bench/revbench [-hermit bin/hermit] [-events 1000000]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/replay"
	"github.com/hermitdbg/hermit/tests/bench/internal/cguest"
)

// The guest yields n times and calls mark once, 1,000 yields before the
// end: the breakpoint reverse-continue goes back to.
const guest = `#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
volatile long marked;
__attribute__((noinline)) void mark(long i) { marked = i; }
int main(int argc, char **argv) {
	long n = atol(argv[1]);
	char line[64];
	int len = snprintf(line, sizeof line, "mark %p\n", (void *)mark);
	write(1, line, len);
	for (long i = 0; i < n; i++) {
		if (i == n - 1000)
			mark(i);
		sched_yield();
	}
	return 0;
}
`

func main() {
	hermit := flag.String("hermit", "bin/hermit", "the hermit binary")
	events := flag.Int("events", 1000000, "about how many events the recording has")
	flag.Parse()
	if err := run(*hermit, *events); err != nil {
		fmt.Fprintln(os.Stderr, "revbench:", err)
		os.Exit(1)
	}
}

func run(hermit string, events int) error {
	if os.Geteuid() != 0 {
		fmt.Println("revbench: skipped: replays need root (ptrace, pid and mount namespaces)")
		return nil
	}
	work, bin, ok, err := cguest.Build("revbench", guest)
	if !ok {
		return err
	}
	defer os.RemoveAll(work)
	tr := filepath.Join(work, "trace")
	cache := filepath.Join(work, "cache")
	os.Setenv("HERMIT_CACHE_DIR", cache)
	env := append(os.Environ(), "HERMIT_TRACE_DIR="+work)
	out, err := command(env, hermit, "record", "-o", tr, "--", bin, strconv.Itoa(events)).Output()
	if err != nil {
		return fmt.Errorf("hermit record: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`mark (0x[0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("the guest did not print mark's address: %q", out)
	}
	markAddr, _ := strconv.ParseUint(string(m[1][2:]), 16, 64)

	start := time.Now()
	if out, err := command(env, hermit, "replay", "--autopilot", tr).CombinedOutput(); err != nil {
		return fmt.Errorf("hermit replay --autopilot: %v\n%s", err, out)
	}
	replayTime := time.Since(start)

	rec, err := replay.Open(tr)
	if err != nil {
		return err
	}
	defer rec.Close()
	fmt.Printf("revbench: a recording of %d events; its replay (--autopilot) takes %v\n\n", rec.Events, replayTime.Round(time.Millisecond))
	fmt.Printf("%-56s %10s %12s\n", "at the end of the recording", "time", "of replay")
	row := func(name string, d time.Duration) {
		fmt.Printf("%-56s %10v %11.1f%%\n", name, d.Round(time.Millisecond), 100*d.Seconds()/replayTime.Seconds())
	}
	for _, auto := range []bool{false, true} {
		if err := moves(rec, markAddr, auto, row); err != nil {
			return err
		}
	}
	return nil
}

// moves times the moves on a Timeline, with or without automatic
// checkpoints.
func moves(rec *replay.Recording, mark uint64, auto bool, row func(string, time.Duration)) error {
	how := "without checkpoints"
	if auto {
		how = "with checkpoints"
	}
	s, err := replay.NewSessionWith(rec.Starter(replay.Options{CPU: ptrace.FirstCPU()}), replay.SessionOptions{})
	if err != nil {
		return err
	}
	tl := replay.NewTimeline(s, replay.TimelineOptions{NoAuto: !auto})
	defer tl.Close()
	last := rec.Events - 3 // before exit_group and the end
	begin := time.Now()
	st, err := tl.RunToEvent(last)
	if err != nil {
		return fmt.Errorf("goto %d: %w", last, err)
	}
	if !auto {
		row("goto the last event", time.Since(begin))
	}
	settle := func() {
		if auto {
			begin := time.Now()
			tl.Settle()
			row("  (checkpoints made in the background)", time.Since(begin))
		}
	}
	settle()
	ths := s.Threads()
	if st.Reason == replay.ReasonExited || len(ths) == 0 {
		return fmt.Errorf("goto %d: the replay ended", last)
	}
	begin = time.Now()
	if _, err := tl.ReverseStep(ths[0].Tid); err != nil {
		return fmt.Errorf("reverse-stepi: %w", err)
	}
	row("reverse-stepi, "+how, time.Since(begin))
	if _, err := tl.RunToEvent(last); err != nil {
		return err
	}
	settle()
	if err := s.SetBreakpoint(mark); err != nil {
		return err
	}
	begin = time.Now()
	back, err := tl.ReverseContinue()
	if err != nil && !errors.Is(err, replay.ErrHistoryStart) {
		return fmt.Errorf("reverse-continue: %w", err)
	}
	d := time.Since(begin)
	if back.Reason != replay.ReasonBreakpoint || back.Addr != mark {
		return fmt.Errorf("reverse-continue stopped at %v, not at the breakpoint at %#x", back, mark)
	}
	row(fmt.Sprintf("reverse-continue %d events back, %s", last-back.Event, how), d)
	if auto {
		_, kept := tl.Checkpoints()
		var rss int64
		for _, c := range kept {
			rss += c.RSS
		}
		fmt.Printf("%-56s %10s\n", fmt.Sprintf("memory of the %d runs kept", len(kept)), fmt.Sprintf("%.1f MiB", float64(rss)/(1<<20)))
	}
	return nil
}

func command(env []string, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Env = env
	return c
}
