// Package cguest builds the small C programs the benchmarks record.
package cguest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build compiles the C source src (cc -O1) into a new temporary work
// directory, which it returns with the binary's path; the caller removes
// it. Without a C compiler it prints that bench is skipped and returns
// ok false.
func Build(bench, src string) (work, bin string, ok bool, err error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		fmt.Printf("%s: skipped: no C compiler (apt-get install gcc)\n", bench)
		return "", "", false, nil
	}
	work, err = os.MkdirTemp("", bench+"-")
	if err != nil {
		return "", "", false, err
	}
	c, bin := filepath.Join(work, "guest.c"), filepath.Join(work, "guest")
	if err := os.WriteFile(c, []byte(src), 0o600); err != nil {
		os.RemoveAll(work)
		return "", "", false, err
	}
	if out, err := exec.Command(cc, "-O1", "-o", bin, c).CombinedOutput(); err != nil {
		os.RemoveAll(work)
		return "", "", false, fmt.Errorf("cc: %v\n%s", err, out)
	}
	return work, bin, true, nil
}
