// gokill: a context timeout kills a sleeping child (SIGKILL), then four
// goroutines run shell commands at once and their output is printed.
package main

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"time"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := exec.CommandContext(ctx, "sleep", "5").Run()
	fmt.Println("sleep:", err)
	var wg sync.WaitGroup
	out := make([]string, 4)
	for i := range out {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			b, _ := exec.Command("sh", "-c", fmt.Sprintf("echo job %d; date +%%N", i)).Output()
			out[i] = string(b)
		}(i)
	}
	wg.Wait()
	fmt.Print(out[0], out[1], out[2], out[3])
}
