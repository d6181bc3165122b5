package main

import (
	"context"
	"regexp"
	"sync/atomic"
	"testing"
	"time"
)

// TestSearcherLowestSeed: whatever the number of jobs and however long
// each run takes, the search reports the failing run of the lowest index
// and stops the runs after it.
func TestSearcherLowestSeed(t *testing.T) {
	fails := map[uint64]bool{21: true, 9: true, 30: true}
	for _, jobs := range []int{1, 2, 5} {
		var started atomic.Int64
		s := &searcher{
			runs: 40,
			jobs: jobs,
			seed: func(i int) uint64 { return uint64(3 + 2*i) }, // 3, 5, 7, 9, ...
			run: func(ctx context.Context, seed uint64, w int) (chaosRun, error) {
				started.Add(1)
				// Later seeds finish sooner, so that a later failure
				// can come first.
				select {
				case <-time.After(time.Duration(40-seed%40) * 100 * time.Microsecond):
				case <-ctx.Done():
				}
				r := chaosRun{seed: seed}
				if fails[seed] {
					r.exit = 1
				}
				return r, nil
			},
			failed: (&failCond{exitOp: "!="}).failed,
		}
		found, done, err := s.search()
		if err != nil || found == nil || found.seed != 9 {
			t.Fatalf("jobs %d: found %+v, %v; want seed 9", jobs, found, err)
		}
		if done < 4 || started.Load() > int64(4+jobs) {
			t.Errorf("jobs %d: %d runs done, %d started; want seeds 3 to 9 done and few more started", jobs, done, started.Load())
		}
	}
}

func TestSearcherNoFailure(t *testing.T) {
	s := &searcher{runs: 25, jobs: 3, seed: func(i int) uint64 { return uint64(i + 1) },
		run:    func(ctx context.Context, seed uint64, w int) (chaosRun, error) { return chaosRun{seed: seed}, nil },
		failed: (&failCond{exitOp: "!="}).failed,
	}
	var last int
	s.progress = func(done, failing int) { last = done }
	found, done, err := s.search()
	if found != nil || done != 25 || err != nil || last != 25 {
		t.Errorf("got %+v, %d runs, %v, progress at %d; want no failure after 25 runs", found, done, err, last)
	}
}

func TestFailCond(t *testing.T) {
	r := chaosRun{exit: 139, stdout: []byte("limit 0\n"), stderr: []byte("boom\n")}
	for _, c := range []struct {
		cond failCond
		want bool
	}{
		{failCond{exitOp: "!="}, true},
		{failCond{exitOp: "!=", exitN: 139}, false},
		{failCond{exitOp: "==", exitN: 139}, true},
		{failCond{stdout: regexp.MustCompile(`limit 0`)}, true},
		{failCond{stdout: regexp.MustCompile(`limit 4`)}, false},
		{failCond{stderr: regexp.MustCompile(`^boom`)}, true},
	} {
		if got := c.cond.failed(r); got != c.want {
			t.Errorf("%+v on exit 139: failed %v, want %v", c.cond, got, c.want)
		}
	}
	if w := (&failCond{exitOp: "!="}).why(r); w != "exit 139, killed by SIGSEGV" {
		t.Errorf("why: %q", w)
	}
	for _, bad := range []string{"exit>1", "exit!=", "exit==256", "status!=0"} {
		if _, _, err := parseUntil(bad); err == nil {
			t.Errorf("parseUntil(%q) accepted it", bad)
		}
	}
	for _, bad := range []string{"0/4", "5/4", "1", "a/b", "1/0"} {
		if _, _, err := parseShard(bad); err == nil {
			t.Errorf("parseShard(%q) accepted it", bad)
		}
	}
	if k, n, err := parseShard("2/8"); k != 2 || n != 8 || err != nil {
		t.Errorf("parseShard(2/8) = %d, %d, %v", k, n, err)
	}
}
