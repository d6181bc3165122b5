// Command hermit runs programs deterministically, records them and replays
// them under a debugger.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

const usage = `hermit: deterministic record/replay debugger for x86-64 Linux

Usage:
  hermit run [flags] -- PROG [ARGS...]      run PROG deterministically
  hermit record [-o DIR] [flags] -- PROG ARGS record PROG into a trace
  hermit replay [TRACE]                     step through a recording, forwards and backwards
  hermit replay --autopilot [TRACE]         replay a trace to the end
  hermit replay --gdb-port N [TRACE]        serve a replay to gdb, lldb or Delve
  hermit replay --gdb [TRACE] [-- GDB-ARGS] debug a replay in gdb
  hermit trace ls|info|dump|ps|rm [TRACE]   inspect traces
  hermit chaos [flags] -- PROG [ARGS...]    search seeds for a schedule that makes PROG fail
  hermit cache info|clean                   show or empty hermit's cache
  hermit rr-shim DIR                        let Delve (dlv replay) use hermit as rr
  hermit version

Run 'hermit COMMAND --help' for the flags of one command.
`

func main() {
	// GOMAXPROCS in the environment is meant for a Go guest, which
	// inherits it. hermit itself needs two Ps whatever it says: the
	// tracer thread holds one while it blocks in wait4, and the
	// watchdog must run beside it.
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	if filepath.Base(os.Args[0]) == "rr" {
		os.Exit(rrMain(os.Args[1:])) // a link named rr: Delve's rr backend
	}
	os.Exit(profiled(func() int { return hermitMain(os.Args[1:]) }))
}

// profiled runs f, writing a CPU profile of hermit itself to the file
// named by $HERMIT_CPUPROFILE, if set (for `go tool pprof`).
func profiled(f func() int) int {
	path := os.Getenv("HERMIT_CPUPROFILE")
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hermit: HERMIT_CPUPROFILE: %v\n", err)
		return f()
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		fmt.Fprintf(os.Stderr, "hermit: HERMIT_CPUPROFILE: %v\n", err)
		return f()
	}
	defer pprof.StopCPUProfile()
	return f()
}

func hermitMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return runMain(args[1:])
	case "trace":
		return traceMain(args[1:])
	case "record":
		return trimmed(recordMain(args[1:]))
	case "replay":
		return trimmed(replayMain(args[1:]))
	case "cache":
		return cacheMain(args[1:])
	case "chaos":
		return chaosMain(args[1:])
	case "rr-shim":
		return rrShimMain(args[1:])
	case "version", "--version":
		fmt.Println("hermit", version)
		return 0
	case "help", "-h", "--help":
		fmt.Print(usage)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "hermit: unknown command %q\n%s", args[0], usage)
		return 2
	}
}

// version is the hermit version recorded in traces.
const version = "0.1.0-dev"
