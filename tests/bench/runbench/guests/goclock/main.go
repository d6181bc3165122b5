// Command goclock calls time.Since argv[1] times: a Go program that reads
// the clock constantly, as servers, test binaries and the Go toolchain do.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	n, err := strconv.Atoi(os.Args[1])
	if err != nil {
		os.Exit(2)
	}
	start := time.Now()
	var sum time.Duration
	for i := 0; i < n; i++ {
		sum += time.Since(start)
	}
	fmt.Println(n, sum >= 0)
}
