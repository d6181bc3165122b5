package main

import (
	"fmt"
	"os"
)

func runMain(args []string) int {
	fmt.Fprintln(os.Stderr, "hermit run: not implemented yet")
	return 2
}
