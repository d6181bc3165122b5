// Command gochan is a guest for the Delve test: main starts workers, each
// running work, which take numbers from one channel and send back their
// squares on another; main adds them up. Numbers are sent only once every
// worker is inside work, so a debugger that stops at the fourth entry to
// work sees all four there. The output is the same whatever the
// interleaving, and the exit status is 3, for the test to see it pass
// through the debugger.
package main

import (
	"fmt"
	"os"
	"sync"
)

const (
	workers = 4
	jobs    = 10
)

// started counts the workers inside work.
var started sync.WaitGroup

// work squares the numbers from in until in is closed.
func work(id int, in <-chan int, out chan<- int) {
	started.Done()
	total := 0
	for n := range in {
		square := n * n
		out <- square // the Delve test breaks here
		total += square
	}
	if total > jobs*jobs*jobs {
		fmt.Printf("worker %d squared more than there was\n", id)
	}
}

// lines is three lines of one instruction each when built without
// optimizations (dlv debug): Delve's next from a breakpoint on one steps
// onto the next one's breakpoint and must stop there.
//
//go:noinline
func lines(x int) int {
	a := 1 // the Delve test breaks here
	b := 2
	c := 3
	return a + b + c + x
}

func main() {
	if lines(0) != 6 {
		panic("lines")
	}
	in := make(chan int)
	out := make(chan int)
	started.Add(workers)
	for id := range workers {
		go work(id, in, out)
	}
	started.Wait()
	go func() {
		for n := 1; n <= jobs; n++ {
			in <- n
		}
		close(in)
	}()
	sum := 0
	for range jobs {
		sum += <-out
	}
	fmt.Printf("sum of the squares of 1..%d: %d\n", jobs, sum)
	os.Exit(3)
}
