// Command gorand is a guest: it prints the values a Go program gets from
// its environment that natively change on every run: time.Now (wall and
// monotonic readings), the auto-seeded global functions of math/rand/v2,
// crypto/rand bytes, the iteration order of a map (randomized per range
// loop), and the order in which racing goroutines take a mutex.
//
// Natively every one of those lines varies between runs; under hermit the
// output is the same on every run.
package main

import (
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"
)

const (
	mapKeys    = 20
	racers     = 6
	racerSteps = 20
)

func main() {
	fmt.Printf("pid: %d\n", os.Getpid())
	now := time.Now()
	fmt.Printf("time.Now: %s\n", now)
	fmt.Printf("time.Now unix nano: %d\n", now.UnixNano())

	fmt.Printf("rand.Int64: %d\n", rand.Int64())
	fmt.Printf("rand.IntN(1000): %d\n", rand.IntN(1000))
	fmt.Printf("rand.Float64: %v\n", rand.Float64())
	fmt.Printf("rand.Perm(10): %v\n", rand.Perm(10))

	b := make([]byte, 16)
	if _, err := crand.Read(b); err != nil {
		fmt.Fprintln(os.Stderr, "crypto/rand:", err)
		os.Exit(1)
	}
	fmt.Printf("crypto/rand: %s\n", hex.EncodeToString(b))

	m := make(map[string]int, mapKeys)
	for i := range mapKeys {
		m[fmt.Sprintf("k%02d", i)] = i
	}
	for pass := range 2 {
		keys := make([]string, 0, mapKeys)
		for k := range m {
			keys = append(keys, k)
		}
		fmt.Printf("map order %d: %s\n", pass+1, strings.Join(keys, " "))
	}

	fmt.Printf("goroutine race: %s\n", race())
	fmt.Printf("time.Since start: %s\n", time.Since(now))
}

// race starts racers goroutines that, once all are released together, each
// append their id racerSteps times to a shared slice under a mutex, burning a
// little CPU between appends, and returns the order of the appends.
func race() string {
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	start := make(chan struct{})
	for id := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			v := id
			for range racerSteps {
				for i := 0; i < 2000; i++ {
					v = (v*1103515245 + 12345) & 0x7fffffff
				}
				mu.Lock()
				order = append(order, fmt.Sprint(id))
				mu.Unlock()
			}
			_ = v
		}()
	}
	close(start)
	wg.Wait()
	return strings.Join(order, "")
}
