// Command gotimers is a guest: goroutines driven by the Go runtime's timers.
// Four goroutines each tick on their own time.Ticker period, a time.AfterFunc
// callback and a time.Timer that is reset race them, and select with
// time.After times out a channel nobody sends on. Each event is logged, in
// arrival order, with the time elapsed since the start rounded to the
// millisecond.
//
// Natively the order of events with close deadlines and the elapsed times
// vary between runs; under hermit (virtual time) the output is the same on
// every run, and a replay must reproduce it.
package main

import (
	"fmt"
	"os"
	"sync"
	"time"
)

const ticks = 5

func main() {
	start := time.Now()
	var mu sync.Mutex
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		ms := time.Since(start).Round(time.Millisecond)
		fmt.Printf("%6v ", ms)
		fmt.Printf(format+"\n", args...)
	}
	fmt.Printf("pid %d\n", os.Getpid())

	var wg sync.WaitGroup
	for g, period := range []time.Duration{3, 5, 7, 11} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk := time.NewTicker(period * time.Millisecond)
			defer tk.Stop()
			for i := range ticks {
				<-tk.C
				logf("ticker %d (%v) tick %d", g, period*time.Millisecond, i)
			}
		}()
	}

	fired := make(chan struct{})
	time.AfterFunc(13*time.Millisecond, func() {
		logf("AfterFunc fired")
		close(fired)
	})

	wg.Add(1)
	go func() {
		defer wg.Done()
		tm := time.NewTimer(20 * time.Millisecond)
		for i := range 3 {
			<-tm.C
			logf("timer fired %d", i)
			tm.Reset(time.Duration(4+i) * time.Millisecond)
		}
	}()

	never := make(chan int)
	select {
	case <-never:
		logf("impossible")
	case <-time.After(9 * time.Millisecond):
		logf("select timed out")
	}
	<-fired
	wg.Wait()
	logf("done")
}
