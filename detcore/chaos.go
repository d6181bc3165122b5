package detcore

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// Chaos scheduling: heuristics that explore other interleavings, driven
// only by the seed, so that a schedule that breaks a program repeats
// under run, record and replay.
//
// Random gives the turn to a uniformly random runnable thread at every
// scheduling point. PCT (probabilistic concurrency testing, Burckhardt et
// al., ASPLOS 2010) gives every thread a random priority when it is
// first seen and always runs the highest-priority runnable thread; at d-1
// change points (turns drawn from the seed) the thread that ran last
// drops below every other. A bug of depth d (d orderings that must all
// go one way) is then found in a run with probability about 1/(n·k^(d-1))
// for n threads and k turns. The turns are drawn log-uniformly up to
// pctHorizon rather than uniformly over a length hermit does not know
// in advance: short programs get their change points where they run.
//
// A thread also drops below the others when it yields, when it reads the
// clock pctPolls times in a row and does nothing else, when the watchdog
// preempts it, and when it has kept the CPU for a slice drawn from the
// seed (1 to 64 timeslices), so that a thread that polls for another
// cannot hold it off for long. And every PCTStarve turns, a runnable
// thread that has not run for as many rises above every other: threads
// that hand the turn to each other (each blocks briefly, so none keeps
// the CPU for a slice) would otherwise hold a lower one off for ever,
// and a program whose pair waits for that one, as Go's stop-the-world
// beside a signal ping-pong does, would never end.

// Heuristic names how the engine chooses the next thread.
type Heuristic string

const (
	// RoundRobin: the default, in creation order; a seed perturbs where
	// each round starts.
	RoundRobin Heuristic = "roundrobin"
	// Random: a uniformly random runnable thread at every point.
	Random Heuristic = "random"
	// PCT: random priorities with change points.
	PCT Heuristic = "pct"
)

// ParseHeuristic checks a --sched-heuristic value.
func ParseHeuristic(s string) (Heuristic, error) {
	switch h := Heuristic(s); h {
	case RoundRobin, Random, PCT:
		return h, nil
	}
	return "", fmt.Errorf("unknown scheduling heuristic %q (want roundrobin, random or pct)", s)
}

// pctHorizon bounds the turns at which change points are drawn.
const pctHorizon = 1 << 20

// ChangePoints returns the d-1 change-point turns PCT uses for seed,
// ascending.
func ChangePoints(seed uint64, depth int) []int64 {
	var ps []int64
	x := splitmix64(seed ^ 0x5ca1ab1e)
	for i := 1; i < depth; i++ {
		x = splitmix64(x)
		u := float64(x>>11) / float64(1<<53)
		ps = append(ps, int64(math.Exp(u*math.Log(pctHorizon))))
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// FormatPoints writes change points as --chaos-points takes them.
func FormatPoints(ps []int64) string {
	if len(ps) == 0 {
		return "none"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.FormatInt(p, 10)
	}
	return strings.Join(s, ",")
}

// ParsePoints reads a --chaos-points value: turns separated by commas,
// or "none".
func ParsePoints(s string) ([]int64, error) {
	if s == "none" || s == "" {
		return []int64{}, nil
	}
	var ps []int64
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.ParseInt(f, 10, 64)
		if err != nil || p < 1 {
			return nil, fmt.Errorf("change point %q: want a turn number of 1 or more", f)
		}
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps, nil
}

// Change is a PCT change point that the run reached.
type Change struct {
	Turn int64
	// Vtid is the thread that dropped, Nr the syscall it was stopped at
	// (-1: none), Where its code ("main+0x16 in prog", or an address).
	Vtid  int
	Nr    int
	Where string
}

func (c Change) String() string {
	what := "a stop"
	if c.Nr >= 0 {
		what = abi.SyscallName(c.Nr)
	}
	return fmt.Sprintf("turn %d: thread %d at %s (%s)", c.Turn, c.Vtid, what, c.Where)
}

// chaosState is the engine's chaos scheduling state.
type chaosState struct {
	// where caches the names of code addresses, for TurnLog.
	where map[[3]uint64]string
	next  int    // the next of cfg.ChaosPoints to reach
	floor uint64 // the priority the next dropped thread gets
	top   uint64 // the priority the next starved thread gets
	slice int    // the turns the running thread may keep, in PCT
	polls int    // the clock reads in a row of the running thread
	rng   uint64
}

const pctTop = 1 << 62 // priorities drawn at creation are above it

// PCTStarve is how many turns a runnable thread may go without one under
// PCT before it rises above the others, by default (Config.PCTStarve).
const PCTStarve = 1024

func (c *chaosState) draw() uint64 {
	c.rng = splitmix64(c.rng)
	return c.rng
}

// pickChaos picks the next thread under the Random or PCT heuristic.
func (e *Engine) pickChaos(ts []*thread) *thread {
	c := &e.chaos
	if c.rng == 0 {
		c.rng = splitmix64(e.cfg.Seed ^ 0xc4a05)
		c.floor = pctTop - 1
		c.top = 1 << 63 // above pctTop + any draw>>2
		c.slice = e.pctSlice()
	}
	if e.cfg.Heuristic == Random {
		var can []*thread
		for _, t := range ts {
			if e.runnable(t) {
				can = append(can, t)
			}
		}
		if len(can) == 0 {
			return nil
		}
		return e.chosen(can[c.draw()%uint64(len(can))])
	}
	turn := e.result.Stats.Turns + 1
	if l := e.last; l != nil && e.threads[l.tid] == l {
		ps := e.cfg.ChaosPoints
		switch {
		case c.next < len(ps) && turn >= ps[c.next]:
			for c.next < len(ps) && turn >= ps[c.next] {
				c.next++
			}
			e.drop(l)
			e.result.Changes = append(e.result.Changes, e.change(l, turn))
		case l.nr == abi.SYS_SCHED_YIELD || e.streak >= c.slice || e.polling(l):
			e.drop(l)
		}
	}
	for _, t := range ts {
		if t.prio == 0 {
			t.prio = pctTop + splitmix64(e.cfg.Seed^uint64(t.seq)*0x9e3779b97f4a7c15)>>2
			t.ranAt = turn // it waits from its first sight
		}
	}
	if n := e.pctStarve(); n > 0 && turn%n == 0 {
		e.raiseStarved(ts, turn, n)
	}
	byPrio := append([]*thread(nil), ts...)
	sort.Slice(byPrio, func(i, j int) bool { return byPrio[i].prio > byPrio[j].prio })
	for _, t := range byPrio {
		if e.runnable(t) {
			return e.chosen(t)
		}
	}
	return nil
}

// pctPolls is how many clock reads in a row, and nothing else, make a
// thread a poller that drops below the others: it waits for time to pass
// or for another thread (Go's runtime busy-waits so, reading the clock
// between spins), and under strict priorities it would hold the others
// off for its whole slice.
const pctPolls = 4

// polling counts t's clock reads in a row, saying whether t polls.
func (e *Engine) polling(t *thread) bool {
	c := &e.chaos
	switch t.nr {
	case abi.SYS_CLOCK_GETTIME, abi.SYS_GETTIMEOFDAY, abi.SYS_TIME:
		c.polls++
	default:
		c.polls = 0
	}
	return c.polls >= pctPolls
}

// pctStarve returns the starvation guard's period, 0 for none.
func (e *Engine) pctStarve() int64 {
	switch n := e.cfg.PCTStarve; {
	case n == 0:
		return PCTStarve
	case n < 0:
		return 0
	default:
		return n
	}
}

// raiseStarved puts the threads of ts that have waited n turns or more
// and can run now above every other, the longest-waiting highest.
func (e *Engine) raiseStarved(ts []*thread, turn, n int64) {
	var old []*thread
	for _, t := range ts {
		if turn-t.ranAt >= n {
			old = append(old, t)
		}
	}
	sort.SliceStable(old, func(i, j int) bool { return old[i].ranAt > old[j].ranAt })
	for _, t := range old {
		if e.runnable(t) {
			t.prio = e.chaos.top
			e.chaos.top++
		}
	}
}

// chosen accounts for a chaos pick of t.
func (e *Engine) chosen(t *thread) *thread {
	t.ranAt = e.result.Stats.Turns + 1
	if t == e.last {
		e.streak++
	} else {
		e.streak = 1
	}
	return e.picked(t)
}

// drop puts t below every other thread (PCT) and starts a new slice.
func (e *Engine) drop(t *thread) {
	c := &e.chaos
	t.prio = c.floor
	c.floor--
	c.slice = e.pctSlice()
	c.polls = 0
	e.streak = 0
}

// pctSlice draws how many turns in a row a PCT thread may keep.
func (e *Engine) pctSlice() int {
	return max(e.cfg.Timeslice, 1) * int(1+e.chaos.draw()%64)
}

// endTurn ends t's turn: the watchdog preempted it.
func (e *Engine) endTurn(t *thread) {
	e.streak = e.cfg.Timeslice
	if e.cfg.Heuristic == PCT && e.chaos.rng != 0 {
		e.drop(t)
	}
}

// change describes the change point that dropped t.
func (e *Engine) change(t *thread, turn int64) Change {
	c := Change{Turn: turn, Vtid: t.vtid, Nr: -1, Where: fmt.Sprintf("%#x", t.regs.Rip)}
	if t.atSyscall {
		c.Nr = t.nr
	}
	if st, ok := e.t.(SpinTracer); ok {
		if s := st.Symbolize(t.tid, t.regs.Rip); s != "" {
			c.Where = s
		}
	}
	return c
}

// logTurn writes t's turn to the TurnLog: "TURN VTID EVENT WHERE", tab
// separated; EVENT is the syscall t stopped at, or "start" for a new
// thread, "stop" for another stop.
func (e *Engine) logTurn(t *thread) {
	ev, ip := "stop", t.regs.Rip
	switch {
	case t.state == tsNew || !t.started:
		ev = "start"
	case t.atSyscall:
		ev = abi.SyscallName(t.nr)
	default:
		// An event stop (a clone's, say): t.regs are older.
		var r abi.Regs
		if e.t.GetRegs(t.tid, &r) == nil {
			ip = r.Rip
			if int64(r.OrigRax) >= 0 {
				ev = abi.SyscallName(int(r.OrigRax)) + " (returning)"
			}
		}
	}
	where := "?"
	if ev != "start" {
		c := &e.chaos
		if c.where == nil {
			c.where = map[[3]uint64]string{}
		}
		key := [3]uint64{uint64(t.proc.vpid), uint64(e.execs), ip} // an exec changes the code
		w, ok := c.where[key]
		if !ok {
			w = fmt.Sprintf("%#x", ip)
			if st, can := e.t.(SpinTracer); can {
				if s := st.Symbolize(t.tid, ip); s != "" {
					w = s
				}
			}
			c.where[key] = w
		}
		where = w
	}
	fmt.Fprintf(e.cfg.TurnLog, "%d\t%d\t%s\t%s\t%d\n", e.result.Stats.Turns, t.vtid, ev, where, t.ret)
}
