package repl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/detcore/abi"

	"github.com/hermitdbg/hermit/repl/strace"
)

// Breakpoints. Event breakpoints (a syscall, a thread, an event number,
// the exit) are conditions on the recorded events, found by reading the
// trace: running to one is running to an event boundary. Code breakpoints
// (a function, an address) and watchpoints are the Session's, and signal
// breakpoints pick among the signal stops it makes.

type bpKind int

const (
	bpSyscall bpKind = iota
	bpSignal
	bpTid
	bpEvent
	bpExit
	bpAddr // also func
	bpWatch
	bpPending // a function not found yet (pending.go)
)

type breakpoint struct {
	id    int
	kind  bpKind
	nr    int    // bpSyscall
	sig   int    // bpSignal
	tid   int    // bpTid
	event uint64 // bpEvent
	addr  uint64 // bpAddr, bpWatch
	watch int    // bpWatch: the Session's id
	sym   string // bpPending, and the bpAddr it becomes
	desc  string
	// cond is the condition of a code breakpoint (conditions.go): it
	// stops only where cond holds; "" always. temp: tbreak's, deleted
	// once it has stopped.
	cond string
	temp bool
}

// matches says whether the event breakpoint b stops before ev.
func (b *breakpoint) matches(ev Event) bool {
	switch b.kind {
	case bpSyscall:
		return ev.Kind == EventSyscall && ev.Nr == b.nr
	case bpTid:
		return ev.Tid == b.tid
	case bpEvent:
		return ev.N == b.event
	case bpExit:
		return ev.Kind == EventSyscall && (ev.Nr == sysExit || ev.Nr == sysExitGroup)
	}
	return false
}

// exit and exit_group (<asm/unistd_64.h>).
const (
	sysExit      = 60
	sysExitGroup = 231
)

// matchEvent says whether any event breakpoint stops before ev.
func (r *REPL) matchEvent(ev Event) bool {
	for _, b := range r.bps {
		if b.matches(ev) {
			return true
		}
	}
	return false
}

// faults are the signals a stop always shows, as gdb does: a crash.
var faults = map[int]bool{4: true, 5: true, 6: true, 7: true, 8: true, 11: true, 31: true} // ILL TRAP ABRT BUS FPE SEGV SYS

// wanted says whether a stop is one to show: a signal only if it is a
// fault or a signal breakpoint names it.
func (r *REPL) wanted(st Stop) bool {
	if st.Kind != StopSignal {
		return true
	}
	if faults[st.Signal] {
		return true
	}
	for _, b := range r.bps {
		if b.kind == bpSignal && b.sig == st.Signal {
			return true
		}
	}
	return false
}

// breakKinds are the words break takes before its argument.
var breakKinds = map[string]bool{"syscall": true, "signal": true, "tid": true, "event": true, "func": true, "addr": true, "exit": true}

func (r *REPL) cmdBreak(args []string) error {
	if i := slices.Index(args, "if"); i >= 0 {
		return r.condBreak(args[:i], strings.Join(args[i+1:], " "))
	}
	if len(args) == 1 && args[0] == "exit" {
		return r.addBreak(&breakpoint{kind: bpExit, desc: "exit and exit_group"})
	}
	if len(args) == 1 && !breakKinds[args[0]] {
		// As in gdb: break SYMBOL, break *ADDR.
		if a, ok := strings.CutPrefix(args[0], "*"); ok {
			args = []string{"addr", a}
		} else if file, line, ok := strings.Cut(args[0], ":"); ok && file != "" && isNumber(line) {
			// A symbol has no colon: this is gdb's FILE:LINE.
			return r.lineBreak(args[0], file, line)
		} else {
			args = []string{"func", args[0]}
		}
	}
	if err := wantArgs("break", args, 2, 2); err != nil {
		return err
	}
	what, arg := args[0], args[1]
	switch what {
	case "syscall":
		nr, ok := strace.SyscallNumber(arg)
		if !ok {
			return fmt.Errorf("break syscall: no syscall named %q", arg)
		}
		switch nr {
		case abi.SYS_CLONE, abi.SYS_CLONE3, abi.SYS_FORK, abi.SYS_VFORK:
			return fmt.Errorf("break syscall %s: the recording has the threads and processes it made, not the calls (\"events\" lists them); \"break tid T\" stops at a new thread's events", arg)
		case abi.SYS_EXECVE, abi.SYS_EXECVEAT:
			return fmt.Errorf("break syscall %s: the recording has the programs it started, not the calls (\"events\" lists them); \"break event N\" stops at one", arg)
		}
		return r.addBreak(&breakpoint{kind: bpSyscall, nr: nr, desc: "syscall " + arg})
	case "signal":
		sig, ok := signalNumber(arg)
		if !ok {
			return fmt.Errorf("break signal: no signal named %q", arg)
		}
		return r.addBreak(&breakpoint{kind: bpSignal, sig: sig, desc: "signal " + strace.Signal(sig)})
	case "tid":
		tid, err := strconv.Atoi(arg)
		if err != nil || tid < 1 {
			return fmt.Errorf("break tid: %q is not a thread id", arg)
		}
		return r.addBreak(&breakpoint{kind: bpTid, tid: tid, desc: "events of thread " + arg})
	case "event":
		n, err := strconv.ParseUint(arg, 10, 64)
		if err != nil || n >= r.s.Len() {
			return fmt.Errorf("break event: %q is not an event of the recording (0 to %d)", arg, r.s.Len()-1)
		}
		return r.addBreak(&breakpoint{kind: bpEvent, event: n, desc: "event " + arg})
	case "func", "addr":
		addr, desc, err := r.codeAddr(what, arg)
		if what == "func" && notFound(err) {
			return r.pendingBreak(arg)
		}
		if err != nil {
			return err
		}
		if err := r.s.SetBreakpoint(addr); err != nil {
			return fmt.Errorf("break %s %s: %w", what, arg, err)
		}
		return r.addBreak(&breakpoint{kind: bpAddr, addr: addr, desc: desc})
	}
	return fmt.Errorf("break: %q: want syscall, signal, tid, event, func, addr or exit", what)
}

// lineBreak sets a breakpoint at each function's code for a line of a
// source file, as gdb's break FILE:LINE.
func (r *REPL) lineBreak(spec, file, line string) error {
	n, err := strconv.Atoi(line)
	if err != nil || n < 1 {
		return fmt.Errorf("break %s: %q is not a line number", spec, line)
	}
	sp, err := r.symbols()
	if err != nil {
		return fmt.Errorf("break %s: %w", spec, err)
	}
	locs, err := sp.LineAddrs(file, n)
	if err != nil {
		return fmt.Errorf("break %s: %w", spec, err)
	}
	for _, l := range locs {
		if err := r.s.SetBreakpoint(l.Addr); err != nil {
			return fmt.Errorf("break %s: %w", spec, err)
		}
		if err := r.addBreak(&breakpoint{kind: bpAddr, addr: l.Addr, desc: fmt.Sprintf("%s, address %#x%s", spec, l.Addr, r.describePC(l.Addr))}); err != nil {
			return err
		}
	}
	return nil
}

// codeAddr resolves a break func or addr argument.
func (r *REPL) codeAddr(what, arg string) (uint64, string, error) {
	if what == "addr" {
		addr, err := r.evalAddr(arg)
		if err != nil {
			return 0, "", fmt.Errorf("break addr: %w", err)
		}
		return addr, fmt.Sprintf("address %#x%s", addr, r.describePC(addr)), nil
	}
	sym, err := r.lookupSymbol(arg)
	if err != nil {
		return 0, "", fmt.Errorf("break func: %w", err)
	}
	addr := r.afterPrologue(sym.addr)
	return addr, fmt.Sprintf("function %s at %#x%s", arg, addr, r.describePC(addr)), nil
}

func (r *REPL) addBreak(b *breakpoint) error {
	if r.temp {
		b.temp, b.desc = true, "temporary, "+b.desc
	}
	b.id = r.nextBp
	r.nextBp++
	r.bps = append(r.bps, b)
	r.printf("breakpoint %d: %s\n", b.id, b.desc)
	return nil
}

func (r *REPL) cmdWatch(args []string) error {
	if err := wantArgs("watch", args, 1, 2); err != nil {
		return err
	}
	addr, size, err := r.evalLocation(args[0])
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	if len(args) == 2 {
		if size, err = strconv.Atoi(args[1]); err != nil {
			return fmt.Errorf("watch: %q is not a length", args[1])
		}
	}
	switch {
	case size == 0 || size > 8:
		size = 8
	case size != 1 && size != 2 && size != 4 && size != 8:
		return fmt.Errorf("watch: length %d: the debug registers watch 1, 2, 4 or 8 bytes", size)
	}
	id, err := r.s.SetWatchpoint(addr, size)
	if err != nil {
		return fmt.Errorf("watch %s: %w", args[0], err)
	}
	return r.addBreak(&breakpoint{kind: bpWatch, addr: addr, watch: id, desc: fmt.Sprintf("watchpoint on writes to %d bytes at %#x (%s)", size, addr, args[0])})
}

func (r *REPL) cmdDelete(args []string) error {
	if len(args) == 2 && args[0] == "checkpoint" {
		return r.deleteCheckpoint(args[1])
	}
	if err := wantArgs("delete", args, 0, 1); err != nil {
		return err
	}
	if len(args) == 0 {
		for _, b := range r.bps {
			r.unset(b)
		}
		r.bps = nil
		return nil
	}
	b, err := r.breakpointByID("delete", args[0])
	if err != nil {
		return err
	}
	r.unset(b)
	r.bps = slices.DeleteFunc(r.bps, func(o *breakpoint) bool { return o == b })
	return nil
}

// breakpointByID finds the breakpoint numbered arg, for command name.
func (r *REPL) breakpointByID(name, arg string) (*breakpoint, error) {
	id, err := strconv.Atoi(arg)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not a breakpoint number", name, arg)
	}
	for _, b := range r.bps {
		if b.id == id {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%s: no breakpoint %d (\"info breakpoints\" lists them)", name, id)
}

// unset removes what the Session holds for b.
func (r *REPL) unset(b *breakpoint) {
	switch b.kind {
	case bpAddr:
		for _, o := range r.bps {
			if o != b && o.kind == bpAddr && o.addr == b.addr {
				return // another breakpoint still wants it
			}
		}
		_ = r.s.ClearBreakpoint(b.addr)
	case bpWatch:
		_ = r.s.ClearWatchpoint(b.watch)
	}
}

func (r *REPL) infoBreakpoints() error {
	if len(r.bps) == 0 {
		r.printf("no breakpoints\n")
		return nil
	}
	for _, b := range r.bps {
		r.printf("%-3d %s%s\n", b.id, b.desc, condSuffix(b.cond))
	}
	return nil
}

func (r *REPL) completeBreak(args []string) []string {
	switch {
	case len(args) == 0:
		// break SYMBOL, as in gdb, besides the keywords.
		return append([]string{"syscall", "signal", "tid", "event", "func", "addr", "exit"}, r.symbolNames()...)
	case len(args) == 1 && args[0] == "syscall":
		return strace.SyscallNames()
	case len(args) == 1 && args[0] == "signal":
		return signalNames()
	case len(args) == 1 && args[0] == "func":
		return r.symbolNames()
	}
	return nil
}

// signalNumber parses SIGSEGV, SEGV or 11.
func signalNumber(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil && n > 0 && n < 65 {
		return n, true
	}
	up := strings.ToUpper(s)
	if !strings.HasPrefix(up, "SIG") {
		up = "SIG" + up
	}
	for n := 1; n < 65; n++ {
		if strace.Signal(n) == up {
			return n, true
		}
	}
	return 0, false
}

func signalNames() []string {
	var out []string
	for n := 1; n < 32; n++ {
		out = append(out, strace.Signal(n))
	}
	return out
}

// errEnded says a forward command cannot run.
var errEnded = errors.New("the recording has ended; goto, reverse-step or reverse-continue go back")

// isNumber reports whether s is a decimal number.
func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
