package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/detcore"
)

// Minimization (hermit chaos --minimize): PCT's failing schedule is the
// seed's thread priorities and the change points the run reached.
// Dropping change points one at a time while the run still fails leaves
// a schedule in which each remaining point is needed. Comparing its
// schedule log with that of a passing run that differs from it least
// (one point fewer, or, with none left, hermit's default schedule)
// gives the first turn where the two runs chose different threads: the
// two events whose order decides.

var reachedRE = regexp.MustCompile(`(?m)^  change point reached: turn (\d+):`)

// minimize shrinks found's schedule and explains it; afterwards c.points
// holds the minimal change points, for the commands printed after.
func (c *chaosSearch) minimize(found *chaosRun) error {
	if hasFlag(c.flags, "--sched-heuristic=random") {
		return fmt.Errorf("minimizes PCT schedules (--chaos), not --sched-heuristic=random")
	}
	dir, err := os.MkdirTemp("", "hermit-chaos-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	logs := 0
	// try runs the failing seed with points (own: the seed's own), or
	// with hermit's default schedule (plain), logging its schedule.
	try := func(points []int64, own, plain bool) (chaosRun, string, error) {
		logs++
		log := filepath.Join(dir, strconv.Itoa(logs))
		save := c.points
		if !own {
			c.points = detcore.FormatPoints(points)
		}
		args := c.command("run", found.seed, found.cpu, "--summary", "--schedule-log="+log)
		c.points = save
		if plain {
			args = c.plainCommand(found.cpu, "--schedule-log="+log)
		}
		r, err := c.exec(context.Background(), args)
		return r, log, err
	}
	r, failLog, err := try(nil, true, false)
	if err != nil {
		return err
	}
	if !c.cond.failed(r) {
		return fmt.Errorf("seed %d did not fail again (%s)", found.seed, exitWords(r.exit))
	}
	var points []int64
	for _, m := range reachedRE.FindAllSubmatch(r.stderr, -1) {
		p, _ := strconv.ParseInt(string(m[1]), 10, 64)
		points = append(points, p)
	}
	// With unreached points dropped, try without each reached one.
	var passLog string
	for i := len(points) - 1; i >= 0; i-- {
		fewer := append(append([]int64{}, points[:i]...), points[i+1:]...)
		r, log, err := try(fewer, false, false)
		if err != nil {
			return err
		}
		if c.cond.failed(r) {
			points, failLog = fewer, ""
			continue
		}
		passLog = log
	}
	if failLog == "" {
		if _, failLog, err = try(points, false, false); err != nil {
			return err
		}
	}
	c.points = detcore.FormatPoints(points)
	fmt.Fprintf(os.Stderr, "  minimal:    %d change point(s): %s\n", len(points), shellLine(c.command("run", found.seed, shownCPU(found.cpu))))
	reference := "a run with one change point fewer, which passes"
	if len(points) == 0 || passLog == "" {
		pr, log, err := try(nil, false, true)
		if err != nil {
			return err
		}
		if c.cond.failed(pr) {
			fmt.Fprintf(os.Stderr, "  the race:   not named: hermit's default schedule fails too\n")
			return nil
		}
		passLog, reference = log, "hermit's default schedule, which passes"
	}
	why, err := explain(failLog, passLog)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "  the race:   %s (against %s)\n", why, reference)
	return nil
}

// plainCommand runs the program with the run flags but hermit's default
// scheduler.
func (c *chaosSearch) plainCommand(cpu int, extra ...string) []string {
	args := append([]string{"run"}, extra...)
	for _, f := range c.flags {
		if !strings.HasPrefix(f, "--sched-heuristic=") && !strings.HasPrefix(f, "--chaos-depth=") {
			args = append(args, f)
		}
	}
	if cpu >= 0 {
		args = append(args, "--cpu="+strconv.Itoa(cpu))
	}
	return append(append(args, "--"), c.argv...)
}

// turn is one line of a schedule log.
type turn struct {
	n           string
	vtid        string
	event, code string
}

func readTurns(path string) ([]turn, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ts []turn
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		// The fifth field, the result the digest takes, was added
		// later: logs of either kind compare.
		f := strings.SplitN(l, "\t", 5)
		if len(f) < 4 {
			return nil, fmt.Errorf("%s: bad schedule log line %q", path, l)
		}
		ts = append(ts, turn{f[0], f[1], f[2], f[3]})
	}
	return ts, nil
}

// explain names the first turn at which the failing and the passing
// runs' schedules chose different threads.
func explain(failLog, passLog string) (string, error) {
	fail, err := readTurns(failLog)
	if err != nil {
		return "", err
	}
	pass, err := readTurns(passLog)
	if err != nil {
		return "", err
	}
	for i := 0; i < len(fail) && i < len(pass); i++ {
		f, p := fail[i], pass[i]
		if f.vtid == p.vtid && f.event == p.event {
			continue
		}
		return fmt.Sprintf("at turn %s, thread %s's %s ran before thread %s's %s", f.n, f.vtid, describeTurn(f), p.vtid, describeTurn(p)), nil
	}
	return "", fmt.Errorf("the failing and the passing runs' schedules do not differ")
}

func describeTurn(t turn) string {
	switch t.event {
	case "start":
		return "first instruction (a new thread)"
	case "stop":
		return "stop at " + t.code
	}
	return t.event + " (" + t.code + ")"
}
