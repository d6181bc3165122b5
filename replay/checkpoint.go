package replay

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Checkpoints. rr forks the replaying processes at a stop; hermit cannot
// do that without changing what the guest sees (a forked process has new
// pids, and shares open file descriptions, pipes and the replay root's
// files with the original). A checkpoint is a whole run set aside instead,
// paused at a stop: its own processes, namespaces and engine, exactly as a
// fresh run that got there would be. Going back from position P costs a
// replay from the nearest run set aside at or before P; the run that was
// current is set aside in its turn, so moving back and forth between two
// places costs only the distance between them. A checkpoint's run is used
// up when the replay goes on from it (its position is kept: going back to
// it replays from the next run before it). The number of runs kept is
// bounded (TimelineOptions.Max); the least recently used automatic one
// goes first. Their memory is the guests' own (CheckpointInfo.RSS).

// TimelineOptions configure a Timeline.
type TimelineOptions struct {
	// Max is how many runs may be set aside at once (0: DefaultCheckpoints).
	Max int
	// NoAuto: no automatic checkpoints (autockpt.go).
	NoAuto bool
	// Progress, when set, receives a line now and then while a reverse
	// command steps through a long stretch (count.go).
	Progress func(string)
}

// DefaultCheckpoints is the number of runs a Timeline keeps set aside.
const DefaultCheckpoints = 8

// CheckpointInfo describes a checkpoint the user made.
type CheckpointInfo struct {
	ID int
	// Event is the number of events consumed there; Where describes the
	// stop.
	Event uint64
	Where string
	// Ready: a run is set aside there (else going there replays from the
	// nearest earlier one). RSS is its guest processes' resident memory,
	// in bytes.
	Ready bool
	RSS   int64
}

// ckpt is a position with, when ready, a run paused there.
type ckpt struct {
	id   int // > 0: made by the user; 0: automatic (a run set aside)
	pos  position
	run  *parked
	used uint64
}

type pool struct {
	b      builder
	max    int
	list   []*ckpt
	nextID int
	clock  uint64
}

func (p *pool) init(o TimelineOptions) {
	p.max, p.b.off = o.Max, o.NoAuto
	if p.max <= 0 {
		p.max = DefaultCheckpoints
	}
	p.nextID = 1
}

// take makes the current run the nearest run that reaches q: a run set
// aside, or a fresh one. The run that was current is set aside.
func (p *pool) take(t *Timeline, q *position) error {
	var best *ckpt
	for _, c := range p.list {
		if c.run != nil && c.pos.reaches(q) && (best == nil || best.pos.before(&c.pos)) {
			best = c
		}
	}
	if cur := t.s.detachRun(); cur != nil {
		if t.pos.inexact || t.noRun {
			_ = killParked(cur)
		} else {
			p.stash(t.pos, cur, best)
		}
	}
	t.noRun = false
	if best == nil {
		if err := t.s.launchRun(); err != nil {
			return err
		}
		t.pos = position{final: t.s.LastStop()}
		return nil
	}
	run := best.run
	best.run = nil
	if best.id == 0 {
		p.list = slices.DeleteFunc(p.list, func(c *ckpt) bool { return c == best })
	}
	t.pos = best.pos
	t.pos.moves = slices.Clone(best.pos.moves)
	return t.s.attachRun(run)
}

// stash sets run, at pos, aside, keeping keep (about to be taken).
func (p *pool) stash(pos position, run *parked, keep *ckpt) {
	p.clock++
	p.list = append(p.list, &ckpt{pos: pos, run: run, used: p.clock})
	p.evict(keep)
}

// evict kills the least recently used runs beyond the bound, automatic
// ones first.
func (p *pool) evict(keep *ckpt) {
	for {
		var victim *ckpt
		n := 0
		for _, c := range p.list {
			if c.run == nil {
				continue
			}
			n++
			if c == keep {
				continue
			}
			if victim == nil || betterVictim(c, victim) {
				victim = c
			}
		}
		if n <= p.max || victim == nil {
			return
		}
		_ = killParked(victim.run)
		victim.run = nil
		if victim.id == 0 {
			p.list = slices.DeleteFunc(p.list, func(c *ckpt) bool { return c == victim })
		}
	}
}

// betterVictim says whether c should go before v: automatic runs before
// the user's, then the least recently used.
func betterVictim(c, v *ckpt) bool {
	if (c.id == 0) != (v.id == 0) {
		return c.id == 0
	}
	return c.used < v.used
}

func (p *pool) find(id int) *ckpt {
	for _, c := range p.list {
		if c.id == id && id > 0 {
			return c
		}
	}
	return nil
}

func (p *pool) close() {
	for _, c := range p.list {
		if c.run != nil {
			_ = killParked(c.run)
			c.run = nil
		}
	}
	p.list = nil
}

// Checkpoint makes a checkpoint where the replay is and returns its id.
// The current run is set aside there, and another is brought to the same
// place, from the nearest earlier run: that costs a replay of the
// distance.
func (t *Timeline) Checkpoint() (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.settle(); err != nil {
		return 0, err
	}
	switch {
	case t.pos.end:
		return 0, ErrExited
	case t.pos.inexact:
		return 0, errInexactCheckpoint
	}
	here := t.pos
	here.moves = slices.Clone(t.pos.moves)
	run := t.s.detachRun()
	if run == nil {
		return 0, ErrClosed
	}
	c := &ckpt{id: t.pool.nextID, pos: here}
	t.pool.nextID++
	t.pool.list = append(t.pool.list, c)
	t.noRun = true
	err := t.seek(here)
	t.pool.clock++
	c.run, c.used = run, t.pool.clock
	t.pool.evict(nil)
	if err != nil {
		return c.id, fmt.Errorf("checkpoint %d is made, but the replay could not come back to it: %w", c.id, err)
	}
	return c.id, nil
}

// RestartCheckpoint goes to checkpoint id.
func (t *Timeline) RestartCheckpoint(id int) (Stop, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.pool.find(id)
	if c == nil {
		return t.pos.final, fmt.Errorf("no checkpoint %d", id)
	}
	err := t.seek(c.pos)
	return t.pos.final, err
}

// DeleteCheckpoint removes checkpoint id.
func (t *Timeline) DeleteCheckpoint(id int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.pool.find(id)
	if c == nil {
		return fmt.Errorf("no checkpoint %d", id)
	}
	if c.run != nil {
		_ = killParked(c.run)
	}
	t.pool.list = slices.DeleteFunc(t.pool.list, func(o *ckpt) bool { return o == c })
	return nil
}

// Checkpoints lists the user's checkpoints, and Auto the runs set aside
// automatically, with their memory.
func (t *Timeline) Checkpoints() (mine []CheckpointInfo, auto []CheckpointInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.pool.list {
		ci := CheckpointInfo{ID: c.id, Event: c.pos.event(), Where: where(c.pos.final), Ready: c.run != nil}
		if c.run != nil {
			ci.RSS = c.run.rss()
		}
		if c.id > 0 {
			mine = append(mine, ci)
		} else {
			auto = append(auto, ci)
		}
	}
	slices.SortFunc(mine, func(a, b CheckpointInfo) int { return a.ID - b.ID })
	return mine, auto
}

// where describes a stop without the run's host tids.
func where(st Stop) string {
	switch st.Reason {
	case ReasonBreakpoint:
		return fmt.Sprintf("at the breakpoint at %#x", st.Addr)
	case ReasonWatchpoint:
		return fmt.Sprintf("after an access to %#x", st.Addr)
	case ReasonSignal:
		return fmt.Sprintf("before signal %d", st.Sig)
	case ReasonStart:
		return "at the start"
	case ReasonEvent:
		return "at the event"
	}
	return "after a step"
}

// rss sums the resident memory of the run's guest processes.
func (p *parked) rss() int64 {
	var pids []int
	c := sessCmd{done: make(chan error, 1), do: func() error {
		for _, th := range p.r.l.list() {
			if !slices.Contains(pids, th.Pid) {
				pids = append(pids, th.Pid)
			}
		}
		return nil
	}}
	p.r.cmds <- c
	<-c.done
	var sum int64
	for _, pid := range pids {
		sum += vmRSS(pid)
	}
	return sum
}

// vmRSS reads a process's VmRSS, in bytes (0 if unknown).
func vmRSS(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
