// Command sleeper sleeps 1 ms and reads the time, argv[1] times: a Go
// program whose timers and clock reads hermit serves in virtual time.
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
	for i := 0; i < n; i++ {
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("%d sleeps took %v\n", n, time.Since(start).Round(time.Millisecond))
}
