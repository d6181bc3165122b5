// Command goroutines is a guest: 8 goroutines take jobs from a channel in a
// select loop, send results back on another channel, and stop on a quit
// channel; a sync.WaitGroup waits for them. GOMAXPROCS is left at its default.
//
// It checks determinism of the Go runtime's threads: main prints which worker
// handled each job, in the order the results arrived. Natively that order
// and the pid vary between runs; under hermit the output is the same on every
// run.
package main

import (
	"fmt"
	"os"
	"sync"
)

const (
	workers = 8
	jobs    = 40
)

type result struct {
	job, worker, value int
}

// work burns a little CPU so that workers overlap.
func work(job int) int {
	v := job
	for i := 0; i < 20000; i++ {
		v = (v*1103515245 + 12345) & 0x7fffffff
	}
	return v
}

func main() {
	fmt.Printf("pid %d\n", os.Getpid())
	jobc := make(chan int)
	results := make(chan result)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case j := <-jobc:
					results <- result{job: j, worker: w, value: work(j)}
				case <-quit:
					return
				}
			}
		}()
	}
	go func() {
		for j := range jobs {
			jobc <- j
		}
	}()

	perWorker := make([]int, workers)
	sum := 0
	for i := range jobs {
		r := <-results
		fmt.Printf("result %d: job %d by worker %d\n", i, r.job, r.worker)
		perWorker[r.worker]++
		sum += r.value
	}
	close(quit)
	wg.Wait()
	fmt.Printf("jobs per worker %v, checksum %d\n", perWorker, sum)
}
