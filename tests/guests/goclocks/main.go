// Command goclocks is a guest for hermit's clock page: goroutines read
// time.Now (the wall and the monotonic clock, which Go reads through the
// vDSO) in loops, across a sleep and timers, and the program execs itself;
// no clock may go back, between goroutines, across the sleep, or from
// this program to the one it runs. It prints what it saw and "goclocks:
// ok", the same bytes on every run under hermit.
package main

import (
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

const rounds = 20000

var (
	mu       sync.Mutex
	lastWall int64
	lastMono time.Time
	sum      = fnv.New64a()
	reads    int
)

// read reads the clock and checks it against the last read of any
// goroutine.
func read() time.Time {
	mu.Lock()
	defer mu.Unlock()
	now := time.Now()
	wall := now.UnixNano()
	if wall < lastWall || (!lastMono.IsZero() && now.Before(lastMono)) {
		fail("the clock went back: %v after wall %d, mono %v", now, lastWall, lastMono)
	}
	lastWall, lastMono = wall, now
	fmt.Fprint(sum, wall)
	reads++
	return now
}

func fail(format string, args ...any) {
	fmt.Printf("FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "exec" {
		before, _ := strconv.ParseInt(os.Args[2], 10, 64)
		if now := read().UnixNano(); now < before {
			fail("the exec'd program reads the wall clock at %d, before its parent's %d", now, before)
		}
		for i := 0; i < rounds/4; i++ {
			read()
		}
		fmt.Printf("exec'd program: %d reads, checksum %016x\n", reads, sum.Sum64())
		return
	}
	start := read()
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				read()
			}
		}()
	}
	wg.Wait()
	fmt.Printf("3 goroutines: %d reads, checksum %016x\n", reads, sum.Sum64())

	before := read()
	time.Sleep(50 * time.Millisecond)
	if d := read().Sub(before); d < 50*time.Millisecond {
		fail("a 50 ms sleep took %v", d)
	}
	timer := time.NewTimer(20 * time.Millisecond)
	ticks := 0
	for done := false; !done; {
		select {
		case <-timer.C:
			done = true
		default:
			read()
			ticks++
		}
	}
	fmt.Printf("polled the clock until a 20 ms timer fired: %d reads\n", ticks)

	cmd := exec.Command("/proc/self/exe", "exec", strconv.FormatInt(read().UnixNano(), 10))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fail("exec: %v", err)
	}
	end := read()
	fmt.Printf("from %s to %s (%v), %d reads, checksum %016x\n", start.UTC().Format(time.RFC3339Nano), end.UTC().Format(time.RFC3339Nano), end.Sub(start).Round(time.Millisecond), reads, sum.Sum64())
	fmt.Println("goclocks: ok")
}
