package detcore_test

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/detcoretest"
)

// These tests pin the scheduling policy against the scripted fake tracer:
// which thread runs when, which futex waiter a wake picks, which blocked
// thread is retried first, and what the run reports. Threads are numbered
// as the fake numbers them: the root is 1, and each clone gets the next tid.

type step = detcoretest.Step

// Guest addresses and descriptors the scripts use.
const (
	wordA    = 0x1000 // futex words
	wordB    = 0x1010
	ctidBase = 0x1100 // clear-tid words: ctidBase + 4*tid
	unmapped = 0xdead0000
	tsIn     = 0x2000 // timespecs the guest passes in: tsIn + 16*i
	tsOut    = 0x3000 // timespecs the guest reads the clock into: tsOut + 16*tid
	buf      = 0x4000
	rfd      = 5 // a pipe's read end
	wfd      = 6 // and its write end
)

// quantum is the logical time of one turn in these tests.
const quantum = 1000

func yield() step { return detcoretest.Syscall(abi.SYS_SCHED_YIELD) }

func repeat(n int, s step) []step { return slices.Repeat([]step{s}, n) }

// exiting returns body followed by exit(0).
func exiting(body []step) []step { return slices.Concat(body, []step{detcoretest.Exit(0)}) }

// thread clones a thread that runs body, then exits with status 0.
func thread(body ...step) step {
	return detcoretest.Thread(exiting(body)...)
}

// joinable is thread, cloned as pthread_create does it: the kernel writes
// the new thread's tid at ctid(tid), and clears it when the thread exits.
// tid must be the tid the fake gives the thread.
func joinable(tid int, body ...step) step {
	const flags = detcoretest.ThreadFlags | abi.CLONE_CHILD_SETTID | abi.CLONE_CHILD_CLEARTID
	return detcoretest.Clone(flags, ctid(tid), exiting(body)...)
}

func ctid(tid int) uint64 { return ctidBase + 4*uint64(tid) }

// join is pthread_join's wait for thread tid to exit.
func join(tid int) step { return wait(ctid(tid), uint32(tid)) }

// newGuest returns a fake guest whose root runs root, with wordA and wordB
// at 0 and an empty pipe rfd, wfd.
func newGuest(root ...step) *detcoretest.Tracer {
	tr := detcoretest.New(root...)
	tr.SetWord(wordA, 0)
	tr.SetWord(wordB, 0)
	tr.Pipe(rfd, wfd)
	return tr
}

func futex(addr uint64, op int, val uint64, rest ...uint64) step {
	return detcoretest.Syscall(abi.SYS_FUTEX, append([]uint64{addr, uint64(op | abi.FUTEX_PRIVATE_FLAG), val}, rest...)...)
}

func wait(addr uint64, val uint32) step { return futex(addr, abi.FUTEX_WAIT, uint64(val)) }

// timedWait waits with the relative timeout stored at timespec ts.
func timedWait(addr uint64, val uint32, ts uint64) step {
	return futex(addr, abi.FUTEX_WAIT, uint64(val), ts)
}

func wake(addr uint64, n int) step { return futex(addr, abi.FUTEX_WAKE, uint64(n)) }

// wakeAll is FUTEX_WAKE with INT_MAX.
func wakeAll(addr uint64) step { return wake(addr, 1<<31-1) }

func cmpRequeue(addr uint64, nwake, nmove int, addr2 uint64, cmp uint32) step {
	return futex(addr, abi.FUTEX_CMP_REQUEUE, uint64(nwake), uint64(nmove), addr2, uint64(cmp))
}

// FUTEX_WAKE_OP operations and comparisons from <linux/futex.h>.
const (
	opSet = 0
	opAdd = 1
	cmpEq = 0
)

func wakeOp(addr uint64, n int, addr2 uint64, n2 int, op, oparg, cmp, cmparg uint32) step {
	enc := op<<28 | cmp<<24 | oparg<<12 | cmparg
	return futex(addr, abi.FUTEX_WAKE_OP, uint64(n), uint64(n2), addr2, uint64(enc))
}

func read(fd int) step  { return detcoretest.Syscall(abi.SYS_READ, uint64(fd), buf, 1) }
func write(fd int) step { return detcoretest.Syscall(abi.SYS_WRITE, uint64(fd), buf, 1) }

// sleep is nanosleep of the timespec at ts.
func sleep(ts uint64) step { return detcoretest.Syscall(abi.SYS_NANOSLEEP, ts, 0) }

// readClock reads CLOCK_MONOTONIC into tsOut + 16*slot.
func readClock(slot int) step {
	return detcoretest.Syscall(abi.SYS_CLOCK_GETTIME, abi.CLOCK_MONOTONIC, tsOut+16*uint64(slot))
}

// run runs the engine over tr to the end and checks that the fake saw
// every thread exit and every stop reported.
func run(t *testing.T, cfg detcore.Config, tr *detcoretest.Tracer) detcore.Result {
	t.Helper()
	if cfg.Quantum == 0 {
		cfg.Quantum = quantum
	}
	res, err := detcore.NewEngine(tr, cfg, tr.Root()).Run()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := tr.Finished(); err != nil {
		t.Fatalf("after Run: %v", err)
	}
	return res
}

var futexOps = map[int]string{
	abi.FUTEX_WAIT:        "wait",
	abi.FUTEX_WAKE:        "wake",
	abi.FUTEX_CMP_REQUEUE: "cmp_requeue",
	abi.FUTEX_WAKE_OP:     "wake_op",
}

// transcript lists the completed calls of the given syscalls, in order,
// as "tid name=ret"; futex calls are named by operation.
func transcript(tr *detcoretest.Tracer, nrs ...int) []string {
	var lines []string
	for _, c := range tr.Calls() {
		if !slices.Contains(nrs, c.Nr) {
			continue
		}
		name := abi.SyscallName(c.Nr)
		if c.Nr == abi.SYS_FUTEX {
			name = futexOps[int(c.Args[1])&^abi.FUTEX_PRIVATE_FLAG]
		}
		lines = append(lines, fmt.Sprintf("%d %s=%d", c.Tid, name, c.Ret))
	}
	return lines
}

// checkNoOutside fails t if the run waited for, or counted, the outside
// world.
func checkNoOutside(t *testing.T, res detcore.Result, tr *detcoretest.Tracer) {
	t.Helper()
	if res.Stats.Nondet != 0 || tr.IdlePolls() != 0 {
		t.Errorf("got %d nondeterministic points and %d idle polls, want none", res.Stats.Nondet, tr.IdlePolls())
	}
}

// callers returns the tids of the completed calls of syscall nr, in order.
func callers(tr *detcoretest.Tracer, nr int) []int {
	var tids []int
	for _, c := range tr.Calls() {
		if c.Nr == nr {
			tids = append(tids, c.Tid)
		}
	}
	return tids
}

// yielders returns a guest of len(ks) threads, where thread i+1 calls
// sched_yield ks[i] times: the root clones the others, yields, joins them
// and calls exit_group(0).
func yielders(ks ...int) *detcoretest.Tracer {
	var root []step
	for i, k := range ks[1:] {
		root = append(root, joinable(i+2, repeat(k, yield())...))
	}
	root = append(root, repeat(ks[0], yield())...)
	for i := range ks[1:] {
		root = append(root, join(i+2))
	}
	return newGuest(append(root, detcoretest.ExitGroup(0))...)
}

func TestRunOrder(t *testing.T) {
	tests := []struct {
		name string
		n, k int
		// want is every Resume, in order. The root's clones do not
		// switch: the engine resumes the parent at each clone event.
		// Then come k rounds of yields, a round in which the children
		// reach exit while the root blocks in its first join, a round of
		// exits, and the root's joins and exit_group.
		want []int
	}{
		{"one thread", 1, 2, []int{1, 1, 1, 1}},
		{
			"three threads",
			3, 2,
			[]int{1, 1, 1, 2, 3, 1, 2, 3, 1, 2, 3, 2, 3, 1, 1, 1},
		},
		{
			"four threads",
			4, 1,
			[]int{1, 1, 1, 1, 2, 3, 4, 1, 2, 3, 4, 2, 3, 4, 1, 1, 1, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := yielders(slices.Repeat([]int{tc.k}, tc.n)...)
			res := run(t, detcore.Config{}, tr)
			if got := tr.ResumedTids(); !slices.Equal(got, tc.want) {
				t.Errorf("resumes: got %v, want %v", got, tc.want)
			}
			// Every Resume of this guest is a continue: a counting one
			// (count.go) while other threads wait to run, a plain one
			// for a thread that runs alone.
			counted := 0
			for _, r := range tr.Resumes() {
				if r.Mode == detcore.ResumeCount {
					counted++
				}
				if (r.Mode != detcore.ResumeCont && r.Mode != detcore.ResumeCount) || r.Sig != 0 {
					t.Errorf("got resume %+v, want a continue", r)
				}
			}
			if tc.n == 1 && counted != 0 {
				t.Errorf("%d counting resumes of a thread that runs alone, want 0", counted)
			}
			if tc.n > 1 && counted == 0 {
				t.Errorf("no counting resume while %d threads take turns", tc.n)
			}
			if res.ExitCode != 0 || res.Signal != 0 {
				t.Errorf("got exit %d signal %d, want 0 0", res.ExitCode, res.Signal)
			}
			// Each round of yields runs the threads in creation order.
			var want []int
			for range tc.k {
				for tid := 1; tid <= tc.n; tid++ {
					want = append(want, tid)
				}
			}
			if got := callers(tr, abi.SYS_SCHED_YIELD); !slices.Equal(got, want) {
				t.Errorf("yields: got %v, want %v", got, want)
			}
		})
	}
}

// seededRun is one run of yielders(3, 3, 3, 3) and what it showed.
type seededRun struct {
	resumes  []int
	yields   []int
	res      detcore.Result
	atRandom [][16]byte
}

func runSeeded(t *testing.T, seed uint64) seededRun {
	t.Helper()
	tr := yielders(3, 3, 3, 3)
	res := run(t, detcore.Config{Seed: seed}, tr)
	return seededRun{tr.ResumedTids(), callers(tr, abi.SYS_SCHED_YIELD), res, tr.AtRandom()}
}

func TestSeedRepeats(t *testing.T) {
	plain := runSeeded(t, 0)
	changed := 0
	for _, seed := range []uint64{0, 1, 2, 3, 0x5eed} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			a, b := runSeeded(t, seed), runSeeded(t, seed)
			if !slices.Equal(a.resumes, b.resumes) {
				t.Errorf("same seed, different resumes:\n%v\n%v", a.resumes, b.resumes)
			}
			if !reflect.DeepEqual(a.res, b.res) {
				t.Errorf("same seed, different results:\n%+v\n%+v", a.res, b.res)
			}
			if !slices.Equal(a.atRandom, b.atRandom) || len(a.atRandom) != 1 {
				t.Errorf("same seed: got AT_RANDOM %x and %x, want one, twice the same", a.atRandom, b.atRandom)
			}
			// A seed only reorders: every thread still yields 3 times.
			count := map[int]int{}
			for _, tid := range a.yields {
				count[tid]++
			}
			if want := map[int]int{1: 3, 2: 3, 3: 3, 4: 3}; !reflect.DeepEqual(count, want) {
				t.Errorf("yields per thread: got %v, want %v", count, want)
			}
			same := slices.Equal(a.resumes, plain.resumes)
			if sameDigest := a.res.Stats.Digest == plain.res.Stats.Digest; same != sameDigest {
				t.Errorf("same schedule as seed 0: %v, same digest: %v", same, sameDigest)
			}
			if seed != 0 && a.atRandom[0] == plain.atRandom[0] {
				t.Errorf("seed %d: AT_RANDOM %x, same as seed 0", seed, a.atRandom[0])
			}
			if !same {
				changed++
			}
		})
	}
	if changed == 0 {
		t.Errorf("no seed changed the schedule of seed 0: %v", plain.resumes)
	}
}

func TestStats(t *testing.T) {
	s := run(t, detcore.Config{}, yielders(2, 2, 2)).Stats
	tests := []struct {
		name      string
		got, want int64
	}{
		{"threads", int64(s.Threads), 3},
		{"processes", int64(s.Processes), 1},
		// 6 yields, 2 joins, 2 exits, 1 exit_group.
		{"syscalls", s.Syscalls, 11},
		// 11 seccomp stops, 2 clone events, 2 first stops of children.
		{"stops", s.Stops, 15},
		// Every Resume but the 2 at clone events (see TestRunOrder).
		{"turns", s.Turns, 14},
		{"nondeterministic points", s.Nondet, 0},
		{"preemptions", s.Preemptions, 0},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	want := map[int]int64{abi.SYS_SCHED_YIELD: 6, abi.SYS_FUTEX: 2, abi.SYS_EXIT: 2, abi.SYS_EXIT_GROUP: 1}
	if !maps.Equal(s.BySyscall, want) {
		t.Errorf("by syscall: got %v, want %v", s.BySyscall, want)
	}
}

func TestDigest(t *testing.T) {
	// TestSeedRepeats checks seeded schedules.
	tests := []struct {
		name string
		// a and b are the guests to compare: yields per thread.
		a, b     []int
		wantSame bool
	}{
		{"same guest", []int{2, 2, 2}, []int{2, 2, 2}, true},
		{"a thread yields once more", []int{2, 2, 2}, []int{2, 2, 3}, false},
		// The same syscalls, but made by other threads.
		{"two threads swap their work", []int{2, 1, 3}, []int{2, 3, 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := yielders(tc.a...), yielders(tc.b...)
			da := run(t, detcore.Config{}, a).Stats.Digest
			db := run(t, detcore.Config{}, b).Stats.Digest
			if da == 0 {
				t.Errorf("digest is 0")
			}
			if same := da == db; same != tc.wantSame {
				t.Errorf("digests %#x and %#x: got same %v, want %v", da, db, same, tc.wantSame)
			}
			if tc.wantSame && !slices.Equal(a.ResumedTids(), b.ResumedTids()) {
				t.Errorf("same digest, different schedules:\n%v\n%v", a.ResumedTids(), b.ResumedTids())
			}
		})
	}
}

func TestFutex(t *testing.T) {
	tests := []struct {
		name string
		// children run as threads 2, 3, ...; then the root runs root and
		// exit_group(0).
		children [][]step
		root     []step
		// want is the transcript of completed futex calls.
		want []string
		// wantB is wordB at the end.
		wantB uint32
	}{
		{
			// The waiters queue in order 4, 3, 2 (thread 2 yields twice
			// first, thread 3 once); wakes take them oldest first.
			name:     "wake one at a time is FIFO",
			children: [][]step{{yield(), yield(), wait(wordA, 0)}, {yield(), wait(wordA, 0)}, {wait(wordA, 0)}},
			root:     []step{yield(), yield(), yield(), wake(wordA, 1), yield(), wake(wordA, 1), yield(), wake(wordA, 1), wake(wordA, 1)},
			want:     []string{"4 wait=0", "1 wake=1", "3 wait=0", "1 wake=1", "2 wait=0", "1 wake=1", "1 wake=0"},
		},
		{
			name:     "wake returns how many it woke",
			children: [][]step{{wait(wordA, 0)}, {wait(wordA, 0)}, {wait(wordA, 0)}},
			root:     []step{yield(), wake(wordA, 2), yield(), wakeAll(wordA), wakeAll(wordA)},
			want:     []string{"2 wait=0", "3 wait=0", "1 wake=2", "4 wait=0", "1 wake=1", "1 wake=0"},
		},
		{
			name: "wait checks the word",
			root: []step{detcoretest.Store(wordA, 1), wait(wordA, 0), wait(unmapped, 0)},
			want: []string{fmt.Sprintf("1 wait=%d", -abi.EAGAIN), fmt.Sprintf("1 wait=%d", -abi.EFAULT)},
		},
		{
			// The kernel clears the tid word and wakes it at exit.
			name: "join",
			root: []step{joinable(2, yield(), yield()), join(2), join(2)},
			want: []string{"1 wait=0", fmt.Sprintf("1 wait=%d", -abi.EAGAIN)},
		},
		{
			name:     "wake before the timeout",
			children: [][]step{{timedWait(wordA, 0, tsIn)}},
			root:     []step{yield(), wake(wordA, 1)},
			want:     []string{"2 wait=0", "1 wake=1"},
		},
		{
			// A mismatched word fails; then thread 2 is woken, thread 3
			// moves to wordB, and thread 4 stays on wordA.
			name:     "cmp_requeue",
			children: [][]step{{wait(wordA, 0)}, {wait(wordA, 0)}, {wait(wordA, 0)}},
			root: []step{yield(), cmpRequeue(wordA, 1, 1, wordB, 7), cmpRequeue(wordA, 1, 1, wordB, 0),
				yield(), wakeAll(wordA), yield(), wakeAll(wordB)},
			want: []string{fmt.Sprintf("1 cmp_requeue=%d", -abi.EAGAIN), "2 wait=0", "1 cmp_requeue=2",
				"4 wait=0", "1 wake=1", "3 wait=0", "1 wake=1"},
		},
		{
			// *wordB += 1; its old value 0 == 0, so wordB's waiter wakes too.
			name:     "wake_op comparison holds",
			children: [][]step{{wait(wordA, 0)}, {wait(wordB, 0)}},
			root:     []step{yield(), wakeOp(wordA, 1, wordB, 1, opAdd, 1, cmpEq, 0)},
			want:     []string{"2 wait=0", "3 wait=0", "1 wake_op=2"},
			wantB:    1,
		},
		{
			// *wordB = 5; its old value 0 != 3, so only wordA's waiter wakes.
			name:     "wake_op comparison fails",
			children: [][]step{{wait(wordA, 0)}, {wait(wordB, 0)}},
			root:     []step{yield(), wakeOp(wordA, 1, wordB, 1, opSet, 5, cmpEq, 3), wake(wordB, 1)},
			want:     []string{"2 wait=0", "1 wake_op=1", "3 wait=0", "1 wake=1"},
			wantB:    5,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var root []step
			for _, c := range tc.children {
				root = append(root, thread(c...))
			}
			tr := newGuest(slices.Concat(root, tc.root, []step{detcoretest.ExitGroup(0)})...)
			tr.SetTimespec(tsIn, time.Second)
			run(t, detcore.Config{}, tr)
			if got := transcript(tr, abi.SYS_FUTEX); !slices.Equal(got, tc.want) {
				t.Errorf("got %q,\nwant %q", got, tc.want)
			}
			if got := tr.Word(wordB); got != tc.wantB {
				t.Errorf("got wordB %d, want %d", got, tc.wantB)
			}
		})
	}
}

// clockAt returns what CLOCK_MONOTONIC reads at logical time d.
func clockAt(d time.Duration) time.Duration {
	return time.Duration(detcore.MonotonicStart) + d
}

func TestTimedWaitTimesOut(t *testing.T) {
	// Thread 2 waits for ever: every thread is blocked.
	tr := newGuest(thread(wait(wordB, 0)), timedWait(wordA, 0, tsIn), readClock(1), detcoretest.ExitGroup(0))
	tr.SetTimespec(tsIn, 5*time.Millisecond)
	res := run(t, detcore.Config{}, tr)
	want := []string{fmt.Sprintf("1 wait=%d", -abi.ETIMEDOUT)}
	if got := transcript(tr, abi.SYS_FUTEX); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// The wait starts in turn 1 (1 quantum), the clock jumps to its
	// deadline, and the turn that wakes the thread costs one quantum more.
	if got, want := tr.Timespec(tsOut+16), clockAt(5*time.Millisecond+2*quantum); got != want {
		t.Errorf("clock after the timeout: got %v, want %v", got, want)
	}
	checkNoOutside(t, res, tr)
}

func TestSleepersWakeInDeadlineOrder(t *testing.T) {
	durs := []time.Duration{40, 30, 10, 20} // ms, for threads 1, 2, 3, 4
	var root []step
	for i := 1; i < len(durs); i++ {
		root = append(root, thread(sleep(tsIn+16*uint64(i)), readClock(i+1)))
	}
	root = append(root, sleep(tsIn), readClock(1), detcoretest.ExitGroup(0))
	tr := newGuest(root...)
	for i, d := range durs {
		tr.SetTimespec(tsIn+16*uint64(i), d*time.Millisecond)
	}
	res := run(t, detcore.Config{}, tr)
	want := []string{"3 nanosleep=0", "4 nanosleep=0", "2 nanosleep=0", "1 nanosleep=0"}
	if got := transcript(tr, abi.SYS_NANOSLEEP); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// Each thread wakes at its deadline, give or take a few turns: the
	// clock jumps rather than waits.
	for i, d := range durs {
		lo := clockAt(d * time.Millisecond)
		if got := tr.Timespec(tsOut + 16*uint64(i+1)); got < lo || got >= lo+20*quantum {
			t.Errorf("thread %d woke at %v, want %v + less than 20 turns", i+1, got, lo)
		}
	}
	checkNoOutside(t, res, tr)
}

func TestBlockedReadRetryOrder(t *testing.T) {
	// Threads 2 and 4 read the empty pipe at once; thread 3 yields first.
	readers := []step{thread(read(rfd)), thread(yield(), read(rfd)), thread(read(rfd))}
	tests := []struct {
		name string
		root []step
		// feed is how many bytes the outside world writes at each idle
		// poll (none past its end).
		feed []int
		// want is the order in which reads complete.
		want     []int
		wantIdle int
	}{
		{
			// The root reads too, and thread 3 blocks last: each byte
			// goes to the next blocked reader after the one that ran
			// last, 4 (after 3), 1, 2, 3, then 1 again.
			name:     "one byte at a time from outside",
			root:     []step{read(rfd), read(rfd)},
			feed:     []int{1, 1, 1, 1, 1},
			want:     []int{4, 1, 2, 3, 1},
			wantIdle: 5,
		},
		{
			name:     "all bytes at once from outside",
			root:     []step{read(rfd), read(rfd)},
			feed:     []int{5},
			want:     []int{4, 1, 2, 3, 1},
			wantIdle: 1,
		},
		{
			// The root writes one byte per turn; blocked readers are
			// retried at every turn, in creation order.
			name:     "writer thread",
			root:     []step{yield(), write(wfd), yield(), write(wfd), yield(), write(wfd), yield(), yield()},
			want:     []int{2, 3, 4},
			wantIdle: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newGuest(slices.Concat(readers, tc.root, []step{detcoretest.ExitGroup(0)})...)
			polls := 0
			tr.Idle = func() {
				if polls < len(tc.feed) {
					tr.Feed(rfd, tc.feed[polls])
				}
				polls++
			}
			res := run(t, detcore.Config{}, tr)
			if got := callers(tr, abi.SYS_READ); !slices.Equal(got, tc.want) {
				t.Errorf("reads: got %v, want %v", got, tc.want)
			}
			if tr.IdlePolls() != tc.wantIdle || res.Stats.Nondet != int64(tc.wantIdle) {
				t.Errorf("got %d idle polls and %d nondeterministic points, want %d of each",
					tr.IdlePolls(), res.Stats.Nondet, tc.wantIdle)
			}
			for _, c := range tr.Calls() {
				if c.Nr == abi.SYS_READ && (c.Emulated || c.Ret != 1) {
					t.Errorf("got read %+v, want it run by the kernel, returning 1", c)
				}
			}
		})
	}
}

func TestExit(t *testing.T) {
	tests := []struct {
		name string
		root []step
		// parked are threads whose blocking calls must never return.
		parked            []int
		wantCode, wantSig int
		wantThreads       int
	}{
		{
			name:     "exit",
			root:     []step{detcoretest.Exit(5)},
			wantCode: 5, wantThreads: 1,
		},
		{
			name: "exit_group while threads are parked",
			root: []step{thread(wait(wordA, 0)), thread(read(rfd)), thread(sleep(tsIn)), yield(),
				detcoretest.ExitGroup(42)},
			parked:   []int{2, 3, 4},
			wantCode: 42, wantThreads: 4,
		},
		{
			name:     "exit_group from a thread while the others are parked",
			root:     []step{thread(yield(), detcoretest.ExitGroup(9)), thread(read(rfd)), wait(wordA, 0)},
			parked:   []int{1, 3},
			wantCode: 9, wantThreads: 3,
		},
		{
			name:     "leader killed by a signal",
			root:     []step{thread(wait(wordA, 0)), yield(), detcoretest.Signal(abi.SIGSEGV)},
			parked:   []int{2},
			wantCode: 128 + abi.SIGSEGV, wantSig: abi.SIGSEGV, wantThreads: 2,
		},
		{
			name: "thread killed by a signal",
			root: []step{thread(yield(), detcoretest.Signal(abi.SIGTERM)), yield(), yield(), yield(),
				detcoretest.ExitGroup(0)},
			wantCode: 128 + abi.SIGTERM, wantSig: abi.SIGTERM, wantThreads: 2,
		},
		{
			name:     "thread killed by a signal while the leader is parked",
			root:     []step{thread(yield(), detcoretest.Signal(abi.SIGTERM)), wait(wordA, 0)},
			parked:   []int{1},
			wantCode: 128 + abi.SIGTERM, wantSig: abi.SIGTERM, wantThreads: 2,
		},
		{
			// The process's status is its leader's, reported once its
			// last thread is gone.
			name:     "leader exits before its thread",
			root:     []step{thread(yield(), yield(), detcoretest.Exit(7)), detcoretest.Exit(3)},
			wantCode: 3, wantThreads: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newGuest(tc.root...)
			tr.SetTimespec(tsIn, time.Hour)
			res := run(t, detcore.Config{}, tr)
			if res.ExitCode != tc.wantCode || res.Signal != tc.wantSig {
				t.Errorf("got exit code %d signal %d, want %d %d", res.ExitCode, res.Signal, tc.wantCode, tc.wantSig)
			}
			if res.Stats.Threads != tc.wantThreads {
				t.Errorf("got %d threads, want %d", res.Stats.Threads, tc.wantThreads)
			}
			for _, c := range tr.Calls() {
				if slices.Contains(tc.parked, c.Tid) && slices.Contains(blocking, c.Nr) {
					t.Errorf("parked thread %d completed %s = %d", c.Tid, abi.SyscallName(c.Nr), c.Ret)
				}
			}
			// Every exit is a deterministic event: the engine never
			// waits for the outside world to learn of one.
			checkNoOutside(t, res, tr)
		})
	}
}

// blocking lists the calls TestExit parks threads in.
var blocking = []int{abi.SYS_FUTEX, abi.SYS_READ, abi.SYS_NANOSLEEP}

// TestStaleReadyRead: two threads read a pipe that holds one byte, and
// each stop hands the turn on. The reader that runs second was found
// ready at its stop, but the byte is gone: its read is made again and
// waits in the engine for the root's second byte, rather than in the
// kernel (where the fake, like a real guest, would hang).
func TestStaleReadyRead(t *testing.T) {
	root := []step{write(wfd), thread(read(rfd)), thread(read(rfd)), yield(), yield(), yield(), yield(), write(wfd), yield(), yield(), detcoretest.ExitGroup(0)}
	tr := newGuest(root...)
	res := run(t, detcore.Config{Timeslice: 1}, tr)
	reads := 0
	for _, c := range tr.Calls() {
		if c.Nr == abi.SYS_READ {
			reads++
			if c.Emulated || c.Ret != 1 {
				t.Errorf("got read %+v, want it run by the kernel, returning 1", c)
			}
		}
	}
	if reads != 2 || res.Stats.ReadyRetries == 0 {
		t.Errorf("got %d reads and %d calls made again, want 2 and some", reads, res.Stats.ReadyRetries)
	}
}

// TestFutexUnsupported: the priority-inheritance operations, which hermit
// does not emulate, fail with ENOSYS and a warning naming them; a number that
// is no operation at all fails with ENOSYS as in the kernel, with no
// warning blaming priority inheritance.
func TestFutexUnsupported(t *testing.T) {
	for _, c := range []struct {
		name string
		op   int
		warn string
	}{
		{"lock_pi", abi.FUTEX_LOCK_PI, "futex operation 6 (priority inheritance) is not supported"},
		// glibc's probe: failing it too makes glibc refuse PI mutexes
		// (ENOTSUP); the kernel ran it, glibc took PI for supported, and
		// every failed lock for the lock acquired.
		{"unlock_pi", abi.FUTEX_UNLOCK_PI, "futex operation 7 (priority inheritance) is not supported"},
		{"trylock_pi", abi.FUTEX_TRYLOCK_PI, "futex operation 8 (priority inheritance) is not supported"},
		{"no operation", 112, ""},
		{"FUTEX_FD", abi.FUTEX_FD, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := newGuest(futex(wordA, c.op, 0), detcoretest.ExitGroup(0))
			var warns []string
			run(t, detcore.Config{Warn: func(msg string) { warns = append(warns, msg) }}, tr)
			calls := tr.Calls()
			if len(calls) == 0 || calls[0].Nr != abi.SYS_FUTEX || calls[0].Ret != -abi.ENOSYS {
				t.Fatalf("calls %+v, want the futex failed with ENOSYS", calls)
			}
			got := strings.Join(warns, "\n")
			if c.warn == "" && got != "" || c.warn != "" && !strings.Contains(got, c.warn) {
				t.Errorf("warnings %q, want %q", got, c.warn)
			}
		})
	}
}
