// Command gowrites is a guest: it writes one byte at a time, os.Args[1]
// times, to a file of its own, then prints the file's size. Go's runtime
// keeps a thread (sysmon) asleep beside it nearly all the time, so under
// hermit a deadline is pending at every one of those writes.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

func main() {
	n, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: gowrites N")
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "gowrites")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	f, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		panic(err)
	}
	b := []byte{'x'}
	for i := 0; i < n; i++ {
		if _, err := f.Write(b); err != nil {
			panic(err)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		panic(err)
	}
	f.Close()
	fmt.Printf("gowrites: %d bytes\n", fi.Size())
}
