package main

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hermitdbg/hermit/detcore"
)

// chaosFlags are run's and record's flags for the chaos schedulers
// (detcore/chaos.go).
type chaosFlags struct {
	chaos     bool
	heuristic string
	depth     int
	points    string
	seedFrom  string
	turnLog   string
	// Decoded by check:
	heur detcore.Heuristic
	pts  []int64
}

func (c *chaosFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.chaos, "chaos", false, "explore other interleavings: PCT, random thread priorities with --chaos-depth - 1 change points, all drawn from --seed (the same seed gives the same schedule under run, record and replay)")
	fs.StringVar(&c.heuristic, "sched-heuristic", "", "how the next thread is chosen: `roundrobin` (the default), random (a uniformly random runnable thread at every scheduling point) or pct (as --chaos)")
	fs.IntVar(&c.depth, "chaos-depth", 3, "PCT's bug depth `D`: the schedule has D-1 change points, 1 to 32")
	fs.StringVar(&c.points, "chaos-points", "", "PCT's change points as scheduler turns, `T1,T2,...` or none, instead of those drawn from the seed")
	fs.StringVar(&c.seedFrom, "seed-from", "", "`SystemRandom`: pick the seed at random and print it")
	fs.StringVar(&c.turnLog, "schedule-log", "", "write every scheduler turn to `FILE`: turn, thread, the syscall it stopped at, its code and the result the schedule digest takes, tab-separated (what hermit chaos --minimize compares)")
}

// check decodes the chaos flags of cmd, picking the seed if asked; it
// returns an error for the user.
func (c *chaosFlags) check(cmd string, seed *uint64, stderr io.Writer) error {
	switch c.seedFrom {
	case "":
	case "SystemRandom":
		if *seed != 0 {
			return fmt.Errorf("hermit %s: --seed and --seed-from=SystemRandom both choose the seed; give one", cmd)
		}
		var b [8]byte
		for *seed == 0 {
			if _, err := rand.Read(b[:]); err != nil {
				return fmt.Errorf("hermit %s: --seed-from=SystemRandom: %v", cmd, err)
			}
			*seed = binary.LittleEndian.Uint64(b[:]) >> 1
		}
		fmt.Fprintf(stderr, "hermit: seed %d (--seed %d repeats this run)\n", *seed, *seed)
	default:
		return fmt.Errorf("hermit %s: --seed-from %q: the only source is SystemRandom", cmd, c.seedFrom)
	}
	c.heur = detcore.RoundRobin
	if c.heuristic != "" {
		h, err := detcore.ParseHeuristic(c.heuristic)
		if err != nil {
			return fmt.Errorf("hermit %s: --sched-heuristic: %v", cmd, err)
		}
		c.heur = h
	}
	if c.chaos {
		switch {
		case c.heuristic == "":
			c.heur = detcore.PCT
		case c.heur == detcore.RoundRobin:
			return fmt.Errorf("hermit %s: --chaos explores schedules; --sched-heuristic=roundrobin does not (want pct or random)", cmd)
		}
	}
	if c.depth < 1 || c.depth > 32 {
		return fmt.Errorf("hermit %s: --chaos-depth %d: want 1 to 32", cmd, c.depth)
	}
	if c.heur != detcore.PCT {
		if c.points != "" {
			return fmt.Errorf("hermit %s: --chaos-points needs --chaos or --sched-heuristic=pct", cmd)
		}
		return nil
	}
	if c.points == "" {
		c.pts = detcore.ChangePoints(*seed, c.depth)
		return nil
	}
	pts, err := detcore.ParsePoints(c.points)
	if err != nil {
		return fmt.Errorf("hermit %s: --chaos-points: %v", cmd, err)
	}
	c.pts = pts
	return nil
}

// apply sets the engine's chaos configuration; the returned function
// ends it (closing the schedule log).
func (c *chaosFlags) apply(cfg *detcore.Config) (func() error, error) {
	if c.heur != detcore.RoundRobin {
		cfg.Heuristic, cfg.ChaosPoints = c.heur, c.pts
	}
	if c.turnLog == "" {
		return func() error { return nil }, nil
	}
	f, err := os.OpenFile(c.turnLog, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--schedule-log: %v", err)
	}
	w := bufio.NewWriter(f)
	cfg.TurnLog = w
	return func() error {
		err := w.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

// summary is the chaos line of --summary, or "".
func (c *chaosFlags) summary(seed uint64, res detcore.Result) string {
	switch c.heur {
	case detcore.Random:
		return fmt.Sprintf("  scheduler: random, seed %d\n", seed)
	case detcore.PCT:
		var reached []string
		for _, ch := range res.Changes {
			reached = append(reached, "  change point reached: "+ch.String()+"\n")
		}
		return fmt.Sprintf("  scheduler: pct, seed %d, change points %s (%d reached)\n%s",
			seed, detcore.FormatPoints(c.pts), len(res.Changes), strings.Join(reached, ""))
	}
	return ""
}
