// gospin: one goroutine spins in `for !done.Load() {}`, without calls or
// syscalls, while another does some work and then sets done. With
// GOMAXPROCS=1 the setter runs only once the runtime preempts the spinner
// (sysmon's SIGURG after 10 ms of its clock); with more Ps it runs beside
// it. Under hermit, both must finish and repeat exactly.
package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

func main() {
	var done atomic.Bool
	var sum atomic.Int64
	go func() {
		s := int64(0)
		for i := int64(0); i < 1000; i++ {
			s += i * i
		}
		sum.Store(s)
		done.Store(true)
	}()
	for !done.Load() {
	}
	fmt.Printf("gospin: GOMAXPROCS %d, sum %d\n", runtime.GOMAXPROCS(0), sum.Load())
}
