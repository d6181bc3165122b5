// Command goracy is a guest for hermit chaos: two goroutines add to a map
// entry without a lock, each reading the entry, logging the step to
// /dev/null (a syscall, where another goroutine may run), then writing the
// entry back. When each goroutine's additions run without the other's in
// between, as in hermit's default schedule, it prints "hits 20, ok";
// otherwise updates are lost and it exits 1 with "lost updates".
package main

import (
	"fmt"
	"os"
	"sync"
)

const iters = 10

func main() {
	log, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	hits := map[string]int{}
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < iters; i++ {
				v := hits["page"]
				if _, err := log.Write([]byte("hit\n")); err != nil {
					panic(err)
				}
				hits["page"] = v + 1
			}
		}()
	}
	wg.Wait()
	if n := hits["page"]; n != 2*iters {
		fmt.Fprintf(os.Stderr, "lost updates: hits %d, want %d\n", n, 2*iters)
		os.Exit(1)
	}
	fmt.Printf("hits %d, ok\n", hits["page"])
}
