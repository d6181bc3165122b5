// Command goprog is a fixture for repl/debuginfo tests. Its function c,
// called through main -> a -> b -> c, writes its registers, a copy of its
// stack, the runtime.Callers oracle and /proc/self/maps to os.Args[1].
package main

import (
	"encoding/binary"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// getregs returns its caller's PC (after the call), SP and BP.
func getregs() (pc, sp, bp uintptr)

// Counter and Name are globals the tests look up.
var (
	Counter = 7
	Name    = "gopher"
)

//go:noinline
func c(out string) int {
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		panic(err)
	}
	buf := make([]byte, 128<<10)
	pc, sp, bp := getregs()
	n, _ := mem.ReadAt(buf, int64(sp))
	pcs := make([]uintptr, 64)
	k := runtime.Callers(1, pcs)
	var names []string
	frames := runtime.CallersFrames(pcs[:k])
	for {
		f, more := frames.Next()
		names = append(names, f.Function)
		if !more {
			break
		}
	}
	maps, _ := os.ReadFile("/proc/self/maps")
	var hdr [32]byte
	binary.LittleEndian.PutUint64(hdr[0:], uint64(pc))
	binary.LittleEndian.PutUint64(hdr[8:], uint64(sp))
	binary.LittleEndian.PutUint64(hdr[16:], uint64(bp))
	binary.LittleEndian.PutUint64(hdr[24:], uint64(n))
	oracle := strings.Join(names, "\n")
	var lens [16]byte
	binary.LittleEndian.PutUint64(lens[0:], uint64(len(oracle)))
	binary.LittleEndian.PutUint64(lens[8:], uint64(len(maps)))
	data := append(append(append(append(hdr[:], buf[:n]...), lens[:]...), oracle...), maps...)
	if err := os.WriteFile(out, data, 0o644); err != nil {
		panic(err)
	}
	return Counter
}

//go:noinline
func b(out string) int { return c(out) + 1 }

//go:noinline
func a(out string) int { return b(out) * 2 }

// grow deepens the stack once so that it does not move while c copies it.
//
//go:noinline
func grow(n int) byte {
	var pad [8 << 10]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		return pad[0]
	}
	return grow(n-1) + pad[n%len(pad)]
}

func main() {
	debug.SetGCPercent(-1)
	grow(32)
	os.Exit(a(os.Args[1]) & 0)
}
