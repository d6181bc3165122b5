package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// chaosRun is the outcome of one seed's run.
type chaosRun struct {
	seed           uint64
	cpu            int // the CPU it was pinned to, or -1
	exit           int
	stdout, stderr []byte
	timedOut       bool
	took           time.Duration
}

// failCond says which runs count as failing: any condition given holds.
type failCond struct {
	exitOp  string // "!=" or "==", "" for no exit condition
	exitN   int
	stdout  *regexp.Regexp
	stderr  *regexp.Regexp
	timeout time.Duration
}

// parseUntil reads an --until condition: exit!=N or exit==N.
func parseUntil(s string) (op string, n int, err error) {
	for _, op := range []string{"!=", "=="} {
		if v, ok := strings.CutPrefix(s, "exit"+op); ok {
			n, err := strconv.Atoi(v)
			if err == nil && n >= 0 && n < 256 {
				return op, n, nil
			}
		}
	}
	return "", 0, fmt.Errorf("--until %q: want exit!=N or exit==N, N a status from 0 to 255", s)
}

func (c *failCond) failed(r chaosRun) bool {
	switch {
	case r.timedOut:
		return true
	case c.exitOp == "!=" && r.exit != c.exitN, c.exitOp == "==" && r.exit == c.exitN:
		return true
	case c.stdout != nil && c.stdout.Match(r.stdout):
		return true
	}
	return c.stderr != nil && c.stderr.Match(r.stderr)
}

// why says why failing run r counts as a failure.
func (c *failCond) why(r chaosRun) string {
	switch {
	case r.timedOut:
		return fmt.Sprintf("still running after --timeout %v", c.timeout)
	case c.exitOp == "!=" && r.exit != c.exitN, c.exitOp == "==" && r.exit == c.exitN:
		return exitWords(r.exit)
	case c.stdout != nil && c.stdout.Match(r.stdout):
		return fmt.Sprintf("stdout matched %q: %q", c.stdout, c.stdout.Find(r.stdout))
	}
	return fmt.Sprintf("stderr matched %q: %q", c.stderr, c.stderr.Find(r.stderr))
}

// exitWords describes an exit status as hermit reports it.
func exitWords(code int) string {
	if code > 128 && code < 128+65 {
		return fmt.Sprintf("exit %d, killed by %s", code, signalName(int32(code-128)))
	}
	return fmt.Sprintf("exit %d", code)
}

// searcher runs seeds on parallel workers until one fails. The result is
// the failing run with the lowest index, whatever the number of workers:
// once a run fails, runs of later indices stop, and earlier ones finish.
type searcher struct {
	runs int
	jobs int
	seed func(i int) uint64
	// run runs seed on worker w; it stops early when ctx is done.
	run    func(ctx context.Context, seed uint64, w int) (chaosRun, error)
	failed func(chaosRun) bool
	// progress, if set, is told after every finished run.
	progress func(done, failing int)
}

// search returns the first failing run (nil if none) and how many runs
// finished.
func (s *searcher) search() (*chaosRun, int, error) {
	var (
		mu      sync.Mutex
		next    int
		found   = s.runs // the lowest failing index so far
		first   *chaosRun
		done    int
		failing int
		runErr  error
		cancels = map[int]context.CancelFunc{}
		wg      sync.WaitGroup
	)
	for w := 0; w < s.jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				if i >= found || runErr != nil {
					mu.Unlock()
					return
				}
				next++
				ctx, cancel := context.WithCancel(context.Background())
				cancels[i] = cancel
				mu.Unlock()

				r, err := s.run(ctx, s.seed(i), w)

				mu.Lock()
				stopped := ctx.Err() != nil
				cancel()
				delete(cancels, i)
				switch {
				case stopped:
					// A lower index failed first.
				case err != nil:
					if runErr == nil {
						runErr = err
					}
				default:
					done++
					if s.failed(r) {
						failing++
						if i < found {
							found, first = i, &r
							for j, c := range cancels {
								if j > i {
									c()
								}
							}
						}
					}
					if s.progress != nil {
						s.progress(done, failing)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first, done, runErr
}

// parseShard reads --shard K/N (1 <= K <= N).
func parseShard(s string) (k, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 1 || k > n {
		return 0, 0, fmt.Errorf("--shard %q: want K/N with 1 <= K <= N, such as 2/8", s)
	}
	return k, n, nil
}

// plural spells n with its noun: "1 run", "2 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
