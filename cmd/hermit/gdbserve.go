package main

import (
	"errors"
	"fmt"
	"github.com/hermitdbg/hermit/detcore/ptrace"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hermitdbg/hermit/gdbstub"
	"github.com/hermitdbg/hermit/replay"
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
	// here says gdb may read the program and its libraries from this
	// machine (Recording.FilesHere).
	// The connection it makes is served; its return ends the serving
	// (killing the replay) with the status it returns, unless negative.
	ready func(addr, exe string, here bool) int
	// log, when set, receives each RSP packet (--debug=rsp).
	log func(line string)
}

// serveGDB replays cfg.trace under the GDB remote protocol and returns
// hermit's exit status: the recorded program's status if the debugger ran
// it to its end, 0 if it detached or killed it first.
func serveGDB(cfg serveConfig) int {
	fail := replayFail
	rec, err := openRecording(cfg.trace)
	if err != nil {
		return fail("%v", err)
	}
	defer rec.Close()
	proc, note, err := targetProcess(rec, cfg.onProcess)
	if err != nil {
		return fail("--onprocess %s: %v", cfg.onProcess, err)
	}
	if note != "" {
		fmt.Fprintf(os.Stderr, "hermit: %s\n", note)
	}
	s, err := newSession(rec, cfg.cpu)
	if err != nil {
		return fail("%v", err)
	}
	defer s.Close()
	t, err := replay.NewGDBTarget(rec, s, proc)
	if err != nil {
		return fail("%v", err)
	}
	defer t.Close()
	t.SetProgress(reverseProgress())
	if cfg.hasGoto {
		st, err := t.Goto(cfg.gotoEvent)
		if err != nil {
			return fail("--goto %d: %v", cfg.gotoEvent, err)
		}
		if st.Kind == gdbstub.StopExited || st.Kind == gdbstub.StopKilled {
			return fail("--goto %d: the recording has only %d events", cfg.gotoEvent, t.When())
		}
		if w := t.When(); w != cfg.gotoEvent {
			fmt.Fprintf(os.Stderr, "hermit: event %d is not one a replay stops at; starting at event %d, the next that is\n", cfg.gotoEvent, w)
		}
	}
	exe, _ := t.ExecFile()
	local, err := rec.LocalPath(exe)
	if err != nil {
		local = exe
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.host, strconv.Itoa(cfg.port)))
	if err != nil {
		return fail("%v", err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	// A signal that tells hermit to stop (a CI job's timeout) ends the
	// replay whatever the debugger is doing: no connection is taken any
	// more, the one served is closed (which interrupts a command that
	// runs), and gdb, if hermit started it, gets the signal too.
	var (
		stoppedBy atomic.Int32
		connMu    sync.Mutex
		served    net.Conn
	)
	stop := onStopSignal(cfg.ready != nil, func(sig syscall.Signal) {
		stoppedBy.Store(int32(sig))
		ln.Close()
		connMu.Lock()
		if served != nil {
			served.Close()
		}
		connMu.Unlock()
		signalDebugger(sig)
	})
	defer stop()
	stopped := func() (int, bool) {
		sig := stoppedBy.Load()
		if sig == 0 {
			return 0, false
		}
		return sayStopped(sig, t.When(), rec.Events), true
	}
	here := rec.FilesHere(exe)
	if cfg.announce != nil {
		cfg.announce(addr, local)
	} else {
		announceGDB(addr, local, strings.TrimSuffix(local, exe), here)
	}

	refused := map[string]bool{}
	opts := gdbstub.Options{Log: cfg.log, Refused: func(err error) {
		// The client shows only an error code: say why here, once.
		why := err.Error()
		if errors.Is(err, ptrace.ErrDebugRegsDead) {
			why += "; in gdb, `set can-use-hw-watchpoints 0` watches by single-stepping the current thread instead (writes by other threads go unseen)"
		}
		if !refused[why] {
			refused[why] = true
			fmt.Fprintf(os.Stderr, "hermit: %s\n", why)
		}
	}}
	var readyDone chan int
	if cfg.ready != nil {
		readyDone = make(chan int, 1)
		go func() {
			readyDone <- cfg.ready(addr, local, here)
			ln.Close() // the debugger is gone: serve no more
		}()
	}
	conns, free, acceptErr := acceptOneAtATime(ln)
	gone := false                   // the debugger went away without detaching or killing
	last := gdbstub.EndDisconnected // how the last connection ended
	for {
		conn, ok := <-conns
		if !ok {
			if readyDone != nil {
				break
			}
			if code, ok := stopped(); ok {
				return code
			}
			if err := *acceptErr; !errors.Is(err, net.ErrClosed) {
				return fail("%v", err)
			}
			fmt.Fprintln(os.Stderr, "hermit replay: stopped before a debugger ended the replay")
			return exitHermit
		}
		connMu.Lock()
		served = conn
		if stoppedBy.Load() != 0 {
			conn.Close()
		}
		connMu.Unlock()
		end, err := gdbstub.Serve(conn, t, opts)
		connMu.Lock()
		served = nil
		connMu.Unlock()
		if code, ok := stopped(); ok {
			waitDebugger(readyDone)
			return code
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "hermit replay: the debugger's connection: %v\n", err)
		}
		free <- struct{}{} // the next connection may be served
		if cfg.keepListening && (end == gdbstub.EndDetached || (end == gdbstub.EndDisconnected || end == gdbstub.EndKilled) && !ended(t)) {
			how := "detached"
			switch end {
			case gdbstub.EndDisconnected:
				how = "went away without detaching"
			case gdbstub.EndKilled:
				// lldb kills as it quits: the replay is kept for the
				// next debugger, as --keep-listening promises.
				how = "quit (it asked to kill the process; the replay is kept)"
			}
			fmt.Fprintf(os.Stderr, "hermit: the debugger %s at event %d; listening again on %s\n", how, t.When(), addr)
			continue
		}
		gone, last = end == gdbstub.EndDisconnected, end
		break
	}
	if code, ok := stopped(); ok {
		// A gdb hermit started has the signal too: it is not waited
		// for long.
		waitDebugger(readyDone)
		return code
	}
	if readyDone != nil {
		if code := <-readyDone; code >= 0 {
			return code
		}
	}
	if err := t.Failure(); err != nil {
		// The debugger was told the process ended; here is why.
		fmt.Fprintf(os.Stderr, "hermit: %v\n", err)
		return exitHermit
	}
	switch st := t.LastStop(); st.Kind {
	case gdbstub.StopExited:
		return st.ExitCode
	case gdbstub.StopKilled:
		return 128 + st.Signal
	}
	switch last {
	case gdbstub.EndDetached:
		// Before the end: the replay goes no further.
		fmt.Fprintf(os.Stderr, "hermit: the debugger detached at event %d; the replay ends there (--keep-listening waits for another)\n", t.When())
	case gdbstub.EndKilled:
		fmt.Fprintf(os.Stderr, "hermit: the debugger killed the replay at event %d\n", t.When())
	}
	if gone {
		// Before the program's end (a client that ends with it, as gdb
		// -batch does, closes the connection too: that came above).
		fmt.Fprintf(os.Stderr, "hermit replay: the debugger went away at event %d without detaching (--keep-listening waits for another)\n", t.When())
		return exitHermit
	}
	return 0
}

// ended reports whether the replay t serves has reached its end.
func ended(t *replay.GDBTarget) bool {
	k := t.LastStop().Kind
	return k == gdbstub.StopExited || k == gdbstub.StopKilled
}

// acceptOneAtATime accepts connections on ln and hands them over one at
// a time: while one is served, another is refused at once (closed, with
// a line on stderr) rather than left waiting unanswered. The server sends
// on free when it is done with a connection. The channel of connections
// closes when ln does; *err says why.
func acceptOneAtATime(ln net.Listener) (<-chan net.Conn, chan<- struct{}, *error) {
	conns := make(chan net.Conn)
	free := make(chan struct{}, 1)
	var err error
	go func() {
		defer close(conns)
		busy := false
		for {
			c, aerr := ln.Accept()
			if aerr != nil {
				err = aerr
				return
			}
			select {
			case <-free:
				busy = false
			default:
			}
			if busy {
				fmt.Fprintf(os.Stderr, "hermit: refused a debugger from %s: one is attached already\n", c.RemoteAddr())
				go func() {
					gdbstub.Refuse(c, "hermit: another debugger is attached to this replay; one at a time", 5*time.Second)
					c.Close()
				}()
				continue
			}
			busy = true
			conns <- c
		}
	}()
	return conns, free, &err
}

// announceGDB prints where the stub listens and how to attach to it: lldb
// on the program's copy in the replay's root (the recording's, not the
// host's), which also serves the libraries; gdb reads them over the
// connection, or from this machine where it holds the same files (here).
func announceGDB(addr, exe, root string, here bool) {
	fmt.Fprintf(os.Stderr, "hermit: listening for a debugger on %s\n", addr)
	fmt.Fprintf(os.Stderr, "  gdb%s -ex 'target extended-remote %s'\n", gdbSysroot(here), addr)
	paths := ""
	if root != "" && root != exe {
		paths = fmt.Sprintf(" -o %s", shellQuote("target modules search-paths add / "+root+"/"))
	}
	fmt.Fprintf(os.Stderr, "  lldb %s%s -o 'gdb-remote %s'\n", shellQuote(exe), paths, addr)
	if !ptrace.DebugRegsTrigger() {
		fmt.Fprintln(os.Stderr, "hermit: this machine's debug registers never trigger, so hardware watchpoints and breakpoints cannot be set here; in gdb, `set can-use-hw-watchpoints 0` watches by single-stepping the current thread instead (writes by other threads go unseen)")
	}
}

// onStopSignal calls stop, once, when hermit is told to stop (SIGINT,
// SIGTERM, SIGHUP). With ignoreInt, SIGINT is left to the debugger hermit
// started (which shares the terminal, and sends ^C over the protocol).
func onStopSignal(ignoreInt bool, stop func(syscall.Signal)) func() {
	c := make(chan os.Signal, 4)
	sigs := []os.Signal{syscall.SIGTERM, syscall.SIGHUP}
	if ignoreInt {
		signal.Ignore(syscall.SIGINT)
	} else {
		sigs = append(sigs, syscall.SIGINT)
	}
	signal.Notify(c, sigs...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-c:
			stop(s.(syscall.Signal))
		case <-done:
		}
	}()
	return func() { signal.Stop(c); close(done) }
}

// debugger is the gdb that hermit replay --gdb started, while it runs.
var debugger atomic.Pointer[os.Process]

// signalDebugger passes sig on to the gdb hermit started, if any.
func signalDebugger(sig syscall.Signal) {
	if p := debugger.Load(); p != nil {
		_ = p.Signal(sig)
	}
}

// waitDebugger waits a little for the gdb hermit started, told to stop,
// to end (done, if not nil, says it did), then kills it.
func waitDebugger(done <-chan int) {
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		if p := debugger.Load(); p != nil {
			_ = p.Kill()
		}
		<-done
	}
}

// targetProcess finds the process --onprocess names; by default the
// first process, from its last exec on: a program started through env or
// a wrapper script (pyenv's python3) is debugged as itself. note names
// the programs the process exec'd before that one, which the debugger
// does not see, if any.
func targetProcess(rec *replay.Recording, sel string) (tp replay.TargetProcess, note string, err error) {
	var p replay.ProcessInfo
	if sel == "" {
		ps, err := rec.Processes()
		if err != nil || len(ps) == 0 || ps[0].ExecEvent == 0 {
			return replay.TargetProcess{}, "", nil // from the very start
		}
		p = ps[0]
	} else if p, err = rec.FindProcess(sel); err != nil {
		return replay.TargetProcess{}, "", err
	}
	if len(p.Before) > 0 {
		note = fmt.Sprintf("process %d ran %s before it exec'd %s at event %d; the debugger sees it from there on",
			p.Vpid, strings.Join(p.Before, ", then "), p.Name(), p.ExecEvent)
	}
	return replay.TargetProcess{Vpid: p.Vpid, Event: p.ExecEvent, Exe: p.ExecPath, Exited: p.Exited, Status: p.ExitStatus}, note, nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '.' || c == '-' || c == '_' || c == '+' || c == ':' || c == '=') {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// reverseProgress returns what shows a long reverse command's progress:
// a line on stderr at most once a second, when stderr is a terminal
// (nil otherwise: logs get nothing).
func reverseProgress() func(string) {
	if ptrace.StdioKind(os.Stderr) != "tty" {
		return nil
	}
	var last time.Time
	return func(msg string) {
		if time.Since(last) >= time.Second {
			last = time.Now()
			fmt.Fprintf(os.Stderr, "hermit: %s (^C stops)\n", msg)
		}
	}
}

// gdbSysroot is the option that has gdb read the program's files from this
// machine when it holds the recording's (Recording.FilesHere): faster than
// over the connection, and gdb then loads their auto-load scripts (the
// C++ library's pretty printers), which it never does for a file it reads
// from the target.
func gdbSysroot(here bool) string {
	if here {
		return " -ex " + shellQuote(sysrootHere)
	}
	return ""
}

// sysrootHere is the gdb command that has it read files from this machine.
const sysrootHere = "set sysroot /"
