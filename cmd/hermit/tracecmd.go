package main

import (
	"fmt"
	"os"
)

func traceMain(args []string) int {
	fmt.Fprintln(os.Stderr, "hermit trace: not implemented yet")
	return 2
}
