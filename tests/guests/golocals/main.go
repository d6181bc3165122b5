// golocals has a function whose locals a debugger prints: a pointer to a
// struct, a slice and an int, live across the write it makes (a
// breakpoint on the write stops in the runtime, below it).
package main

import (
	"fmt"
	"os"
)

type point struct {
	X, Y  int
	Label string
}

var counter = 7

//go:noinline
func area(p *point, scale int) int {
	nums := make([]int, 3, 3+scale)
	for i := range nums {
		nums[i] = 10 * (i + 1)
	}
	total := p.X * p.Y * scale
	fmt.Fprintln(os.Stdout, "inner", total+nums[2])
	return total + nums[1]*len(p.Label)
}

func main() {
	p := &point{5, 6, "corner"}
	fmt.Println("area", area(p, 2)+counter)
}
