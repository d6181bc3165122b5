// gocount: with GOMAXPROCS=1, the main goroutine counts in a loop without
// calls until another goroutine sets a flag; that one runs only once the
// runtime preempts the counter (sysmon's SIGURG, after the counter has
// run for 10 ms of its clock). Without a PMU, hermit cannot tell how long
// the counter computed: only its watchdog ends the loop, and the time
// the counter ran must move the clock, or sysmon never sees 10 ms go by.
package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

var flag atomic.Bool

func main() {
	runtime.GOMAXPROCS(1)
	go func() { flag.Store(true) }()
	n := 0
	for !flag.Load() {
		n++
	}
	fmt.Println("gocount: the other goroutine ran while main counted:", n > 0)
}
