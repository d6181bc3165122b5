// gostw: one goroutine stops the world in a loop (runtime.ReadMemStats)
// while the main goroutine, having yielded to it, waits for its turn on
// the only P. The main goroutine runs again only once sysmon preempts the
// looping one, and sysmon gets the scheduler's lock only between two of
// the loop's stops of the world: natively the two threads run side by
// side; under hermit, a waker that took the lock back before the woken
// thread ran would starve sysmon for ever (a livelock, with no deadlock
// to report).
package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

func main() {
	runtime.GOMAXPROCS(1)
	var stops atomic.Int64
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			stops.Add(1)
		}
	}()
	yields := 0
	for stops.Load() < 100 {
		runtime.Gosched()
		yields++
	}
	fmt.Println("gostw: the main goroutine saw 100 stops of the world:", yields > 0)
}
