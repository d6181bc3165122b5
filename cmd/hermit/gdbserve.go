package main

import (
	"fmt"
	"os"
)

// serveConfig says how to serve a replay to a remote debugger.
type serveConfig struct {
	// trace is the TRACE argument ("" for the latest recording).
	trace string
	// host and port are where to listen (port 0: any free port).
	host string
	port int
	// keepListening accepts a new connection after a debugger detaches,
	// continuing from where it stopped.
	keepListening bool
	// onProcess selects the debugged process by guest pid or command
	// name ("" for the first process).
	onProcess string
	// gotoEvent, when hasGoto, is the event to replay to before serving.
	gotoEvent uint64
	hasGoto   bool
	// cpu pins the replay (cpuFlag's result).
	cpu int
	// announce tells the user (or Delve) where to attach, once listening:
	// addr is host:port, exe the debugged program's file on this machine
	// (inside the rebuilt root, so it exists even when the original is
	// gone). nil prints the gdb and lldb commands to stderr.
	announce func(addr, exe string)
	// ready, when set, is called once listening, before the first
	// connection is accepted, with the address (for --gdb: start gdb).
	ready func(addr, exe string)
	// log, when set, receives each RSP packet (--debug=rsp).
	log func(line string)
}

// serveGDB replays cfg.trace under the GDB remote protocol and returns
// hermit's exit status: the recorded program's status if the debugger ran
// it to its end, 0 if it detached or killed it first.
func serveGDB(cfg serveConfig) int {
	fmt.Fprintln(os.Stderr, "hermit replay: --gdb-port is not implemented yet")
	return 2
}
