package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/gdbstub"
)

// GDBTarget shows one process of a Session's runs to a remote debugger
// (gdbstub.Target). Threads and the process are named by the ids the guest
// saw, which every run repeats; the host tids the Session uses change from
// run to run and never reach the debugger. Stops in other processes of
// the recording (a breakpoint hit in a forked child, its signals) are
// stepped over: the debugger sees only its own process.
type GDBTarget struct {
	s *Session
	// tl runs s forwards and backwards.
	tl  *Timeline
	rec *Recording
	// vpid is the debugged process; start the event at which a run has
	// it live with its program (0: from the start).
	vpid  int
	start uint64
	exe   string
	proc  TargetProcess
	last  gdbstub.Stop
	// watches maps each watchpoint and Z1 breakpoint the debugger set
	// to its Session id (a debug register).
	watches map[gdbWatch]int
	// intr is an Interrupt that came between two legs of a Continue.
	intr atomic.Bool
	// failure is why the last run ended early: the trace is damaged or
	// the replay diverged (the debugger saw the end of the process).
	failure error
	// where names the checkpoints the debugger described (Delve).
	where map[int]string
	// catch is what gdb's catch syscall asked for (gdbcatch.go).
	catch syscallCatch
	// end is where forward commands stop for gdb before the process
	// ends (gdbend.go).
	end endStop
}

// Failure returns why the replay ended before the recording did (a
// damaged trace, a divergence), or nil.
func (t *GDBTarget) Failure() error { return t.failure }

// ended notes how a run that reached its end ended.
func (t *GDBTarget) ended(st Stop, err error) {
	if st.Reason == ReasonExited {
		t.failure = err
	}
}

type gdbWatch struct {
	kind gdbstub.BreakKind
	addr uint64
	size int
}

var _ gdbstub.Target = (*GDBTarget)(nil)

// TargetProcess selects the process a GDBTarget debugs.
type TargetProcess struct {
	// Vpid is the process's guest pid; 0 is the recording's first process.
	Vpid int
	// Event is where a run has it live with its program (its last exec).
	Event uint64
	// Exe is its program's path as the guest named it; "" for the
	// recorded program.
	Exe string
	// Exited says the recording has the process end, with wait status
	// Status; the debugger is told that status at the end of the replay
	// (otherwise, the run's).
	Exited bool
	Status int
}

// NewGDBTarget debugs process p of s, a Session of rec's runs: it replays
// to p.Event first.
func NewGDBTarget(rec *Recording, s *Session, p TargetProcess) (*GDBTarget, error) {
	t := &GDBTarget{s: s, tl: NewTimeline(s, TimelineOptions{}), rec: rec, vpid: p.Vpid, start: p.Event, exe: p.Exe, proc: p, watches: map[gdbWatch]int{}, catch: syscallCatch{entry: -1}}
	s.StopAtSignals(true)
	if t.exe == "" {
		t.exe = rec.Settings.Path
	}
	if t.vpid == 0 {
		ts := s.Threads()
		if len(ts) == 0 {
			return nil, errors.New("the recording has no thread")
		}
		t.vpid = ts[0].Vpid
	}
	s.Focus(t.vpid)
	st, err := t.begin()
	if err != nil {
		return nil, err
	}
	if st.Kind == gdbstub.StopExited || st.Kind == gdbstub.StopKilled {
		return nil, fmt.Errorf("the recording ends before event %d", p.Event)
	}
	if len(t.threads()) == 0 {
		return nil, fmt.Errorf("process %d is not alive at event %d", t.vpid, p.Event)
	}
	return t, nil
}

// threads returns the debugged process's live threads.
func (t *GDBTarget) threads() []detcore.ThreadInfo {
	return slices.DeleteFunc(t.s.Threads(), func(th detcore.ThreadInfo) bool { return th.Vpid != t.vpid })
}

// thread finds the live thread the guest calls vtid.
func (t *GDBTarget) thread(vtid int) (detcore.ThreadInfo, error) {
	for _, th := range t.threads() {
		if th.Vtid == vtid {
			return th, nil
		}
	}
	return detcore.ThreadInfo{}, fmt.Errorf("no thread %d in process %d", vtid, t.vpid)
}

// any returns a live thread of the process, for what is per process.
func (t *GDBTarget) any() (detcore.ThreadInfo, error) {
	ts := t.threads()
	if len(ts) == 0 {
		return detcore.ThreadInfo{}, fmt.Errorf("process %d has no live thread", t.vpid)
	}
	return ts[0], nil
}

// Pid implements gdbstub.Target.Pid.
func (t *GDBTarget) Pid() int { return t.vpid }

// Threads implements gdbstub.Target.Threads.
func (t *GDBTarget) Threads() ([]gdbstub.Thread, error) {
	var out []gdbstub.Thread
	for _, th := range t.threads() {
		out = append(out, gdbstub.Thread{ID: th.Vtid, Name: ThreadName(th)})
	}
	return out, nil
}

// Registers implements gdbstub.Target.Registers.
func (t *GDBTarget) Registers(vtid int) (*gdbstub.Registers, error) {
	th, err := t.thread(vtid)
	if err != nil {
		return nil, err
	}
	r, err := t.s.Regs(th.Tid)
	if err != nil {
		return nil, err
	}
	g := gdbRegisters(&r)
	if xs, err := t.s.XState(th.Tid); err == nil && len(xs) >= len(g.FXSave) {
		copy(g.FXSave[:], xs)
		g.HaveFP = true
		g.HaveAVX = ymmHigh(xs, &g.YMMHigh)
	}
	return g, nil
}

// The XSAVE area's layout (Intel SDM vol. 1, 13.4; the kernel gives
// ptrace the standard, uncompacted form).
const (
	xsaveXCR0    = 464 // XCR0, which ptrace puts in FXSAVE's software bytes (gdb reads it there)
	xsaveBV      = 512 // XSTATE_BV: the components not in their initial state
	xsaveYMMHigh = 576 // the AVX component: ymm0–15's upper halves
	xfeatureAVX  = 1 << 2
)

// ymmHigh copies the upper halves of ymm0–15 from XSAVE area xs into hi
// and tells whether the CPU has them. A component in its initial state
// is zero, whatever the area holds.
func ymmHigh(xs []byte, hi *[16][16]byte) bool {
	if len(xs) < xsaveYMMHigh+16*16 || binary.LittleEndian.Uint64(xs[xsaveXCR0:])&xfeatureAVX == 0 {
		return false
	}
	*hi = [16][16]byte{}
	if binary.LittleEndian.Uint64(xs[xsaveBV:])&xfeatureAVX != 0 {
		for i := range hi {
			copy(hi[i][:], xs[xsaveYMMHigh+16*i:])
		}
	}
	return true
}

// gdbRegisters converts the kernel's register layout.
func gdbRegisters(r *abi.Regs) *gdbstub.Registers {
	return &gdbstub.Registers{
		Rax: r.Rax, Rbx: r.Rbx, Rcx: r.Rcx, Rdx: r.Rdx, Rsi: r.Rsi, Rdi: r.Rdi, Rbp: r.Rbp, Rsp: r.Rsp,
		R8: r.R8, R9: r.R9, R10: r.R10, R11: r.R11, R12: r.R12, R13: r.R13, R14: r.R14, R15: r.R15,
		Rip: r.Rip, Eflags: r.Eflags,
		Cs: r.Cs, Ss: r.Ss, Ds: r.Ds, Es: r.Es, Fs: r.Fs, Gs: r.Gs,
		FsBase: r.FsBase, GsBase: r.GsBase, OrigRax: r.OrigRax,
	}
}

// ReadMemory implements gdbstub.Target.ReadMemory.
func (t *GDBTarget) ReadMemory(addr uint64, b []byte) (int, error) {
	th, err := t.any()
	if err != nil {
		return 0, err
	}
	return t.s.ReadMem(th.Tid, addr, b)
}

// SetBreakpoint implements gdbstub.Target.SetBreakpoint.
func (t *GDBTarget) SetBreakpoint(kind gdbstub.BreakKind, addr uint64, size int) error {
	wk := WatchReadWrite
	switch kind {
	case gdbstub.BreakSoftware:
		return t.s.SetBreakpoint(addr)
	case gdbstub.BreakHardware:
		wk, size = WatchExec, 1
	case gdbstub.WatchWrite:
		wk = WatchWrite
	}
	if size != 1 && size != 2 && size != 4 && size != 8 || addr%uint64(size) != 0 {
		return gdbstub.ErrUnsupported
	}
	id, err := t.s.SetWatchpoint(addr, size, wk)
	if err != nil {
		return err
	}
	t.watches[gdbWatch{kind, addr, size}] = id
	return nil
}

// ClearBreakpoint implements gdbstub.Target.ClearBreakpoint.
func (t *GDBTarget) ClearBreakpoint(kind gdbstub.BreakKind, addr uint64, size int) error {
	switch kind {
	case gdbstub.BreakSoftware:
		return t.s.ClearBreakpoint(addr)
	case gdbstub.BreakHardware:
		size = 1
	}
	k := gdbWatch{kind, addr, size}
	id, ok := t.watches[k]
	if !ok {
		return fmt.Errorf("no watchpoint at %#x", addr)
	}
	delete(t.watches, k)
	for _, other := range t.watches {
		if other == id {
			return nil // Z3 and Z4 of one range share a slot
		}
	}
	return t.s.ClearWatchpoint(id)
}

// Continue implements gdbstub.Target.Continue.
func (t *GDBTarget) Continue() (gdbstub.Stop, error) {
	if g, ok := t.hitWhereStepped(); ok {
		return g, nil
	}
	if t.catch.on {
		return t.continueCatching()
	}
	for {
		end, toEnd := t.endEvent()
		st, err := t.continueTo(end, toEnd)
		if err != nil && st.Reason != ReasonExited {
			return t.last, err
		}
		t.ended(st, err)
		if toEnd && st.Reason == ReasonEvent && st.Event == end {
			return t.atEnd(end), nil
		}
		if g, ours := t.convert(st); ours || t.intr.Swap(false) {
			return t.stopped(g), nil
		}
	}
}

// hitWhereStepped reports the hit of a breakpoint where a step left the
// thread, as the continue that follows it: a live target executes the
// int3 at once (rr does the same). gdb and lldb step over a breakpoint
// they stand on before they continue; Delve's next steps off its
// breakpoint onto the next line's and continues, to stop there (the
// Session, which counts a thread a step left at a breakpoint as seen
// there, ran on to the line after).
func (t *GDBTarget) hitWhereStepped() (gdbstub.Stop, bool) {
	if t.last.Kind != gdbstub.StopStep {
		return gdbstub.Stop{}, false
	}
	th, err := t.thread(t.last.Tid)
	if err != nil {
		return gdbstub.Stop{}, false
	}
	r, err := t.s.Regs(th.Tid)
	if err != nil || !t.s.breakpointAt(r.Rip) {
		return gdbstub.Stop{}, false
	}
	return t.stopped(gdbstub.Stop{Kind: gdbstub.StopBreakpoint, Tid: t.last.Tid, Addr: r.Rip}), true
}

// Step implements gdbstub.Target.Step.
func (t *GDBTarget) Step(vtid int) (gdbstub.Stop, error) {
	th, err := t.thread(vtid)
	if err != nil {
		return t.last, err
	}
	end, toEnd := t.endEvent()
	for {
		st, err := t.tl.Step(th.Tid, 1)
		if err != nil && st.Reason != ReasonExited {
			return t.last, err
		}
		t.ended(st, err)
		g, ours := t.convert(st)
		if toEnd && g.Kind == gdbstub.StopExited && err == nil {
			return t.pastEnd(end)
		}
		if st.Reason == ReasonStep || st.Steps > 0 && st.Reason != ReasonExited && !ours {
			// Done, though another process's stop came with it.
			g = gdbstub.Stop{Kind: gdbstub.StopStep, Tid: vtid}
			ours = true
		}
		if ours || t.intr.Swap(false) {
			return t.stopped(g), nil
		}
		if _, err := t.thread(vtid); err != nil {
			// The step ended the thread without a stop of the process's
			// (the signal it stood at killed a process that another
			// outlives, or the thread exited): the process runs on, as
			// a live one would, to its next stop or its end.
			return t.Continue()
		}
	}
}

// stopped records where the target stopped.
func (t *GDBTarget) stopped(g gdbstub.Stop) gdbstub.Stop {
	if t.catch.note != "" && g.Note == "" {
		g.Note, t.catch.note = t.catch.note, ""
	}
	if g.Tid == 0 && g.Kind != gdbstub.StopExited && g.Kind != gdbstub.StopKilled {
		if th, err := t.any(); err == nil {
			g.Tid = th.Vtid
		}
	}
	t.last = g
	return g
}

// convert turns a Session stop into the debugger's, and says whether it
// concerns the debugged process (the end of the run always does).
func (t *GDBTarget) convert(st Stop) (gdbstub.Stop, bool) {
	if st.Reason == ReasonExited {
		sig, code := st.Result.Signal, st.Result.ExitCode
		if t.proc.Exited {
			sig, code = t.proc.Status&0x7f, t.proc.Status>>8&0xff
		}
		note := t.childrenNote()
		if t.failure != nil {
			// The end the debugger sees is not the recording's: the
			// replay was cut short (a damaged trace, a divergence), as
			// a kill would have, not the exit the recording holds.
			note = "hermit: " + t.failure.Error()
			sig, code = 9, 0
		}
		if sig != 0 {
			return gdbstub.Stop{Kind: gdbstub.StopKilled, Signal: sig, Note: note}, true
		}
		return gdbstub.Stop{Kind: gdbstub.StopExited, ExitCode: code, Note: note}, true
	}
	var g gdbstub.Stop
	ours := false
	for _, th := range t.threads() {
		if th.Tid == st.Tid {
			g.Tid, ours = th.Vtid, true
		}
	}
	switch st.Reason {
	case ReasonStart, ReasonEvent:
		g.Kind = gdbstub.StopStart
	case ReasonBreakpoint:
		g.Kind, g.Addr = gdbstub.StopBreakpoint, st.Addr
	case ReasonWatchpoint:
		g.Kind, g.Addr, g.Watch = gdbstub.StopWatch, st.Addr, gdbstub.WatchAccess
		for k, id := range t.watches {
			// The Z packet that set the slot (Z3 and Z4 share one).
			if id == st.Watch && k.kind != gdbstub.WatchAccess {
				g.Watch = k.kind
			}
		}
		if g.Watch == gdbstub.BreakHardware {
			g.Kind, g.Watch, g.Hardware = gdbstub.StopBreakpoint, 0, true
		}
	case ReasonStep:
		g.Kind = gdbstub.StopStep
	case ReasonInterrupt:
		g.Kind, ours = gdbstub.StopInterrupt, true
	case ReasonSignal:
		g.Kind, g.Signal = gdbstub.StopSignal, st.Sig
	}
	return g, ours
}

// Interrupt implements gdbstub.Target.Interrupt.
func (t *GDBTarget) Interrupt() {
	t.intr.Store(true)
	t.s.Interrupt()
}

// LastStop implements gdbstub.Target.LastStop.
func (t *GDBTarget) LastStop() gdbstub.Stop { return t.last }

// Restart implements gdbstub.Target.Restart.
func (t *GDBTarget) Restart() (gdbstub.Stop, error) {
	if _, err := t.tl.Restart(); err != nil {
		return t.last, err
	}
	return t.begin()
}

// begin brings a fresh run to where the debugged process starts: before
// the first instruction of the first process, or at the event where the
// chosen one has its program.
func (t *GDBTarget) begin() (gdbstub.Stop, error) {
	if t.start > 0 {
		return t.Goto(t.start)
	}
	g, _ := t.convert(t.s.LastStop())
	return t.stopped(g), nil
}

// When implements gdbstub.Target.When.
func (t *GDBTarget) When() uint64 { return t.s.Event() }

// Goto implements gdbstub.Target.Goto.
func (t *GDBTarget) Goto(n uint64) (gdbstub.Stop, error) {
	if n < t.start {
		return t.last, fmt.Errorf("process %d has not started its program at event %d (it does at event %d)", t.vpid, n, t.start)
	}
	alive := func(st Stop) bool { return st.Reason != ReasonExited && len(t.threads()) > 0 }
	reached, st, kept, err := t.tl.RunToEventWhile(n, alive)
	switch {
	case err != nil && st.Reason != ReasonExited:
		return t.last, err
	case !kept:
		// Past its end, gdb would have a process without registers.
		end := fmt.Sprintf("it has ended by event %d", reached.Event)
		if reached.Reason == ReasonExited {
			end = fmt.Sprintf("the recording ends at event %d", reached.Event)
		}
		return t.last, fmt.Errorf("process %d is not alive at event %d (%s): the replay stays at event %d", t.vpid, n, end, t.When())
	}
	t.ended(st, err)
	g, _ := t.convert(st)
	if g.Kind != gdbstub.StopExited && g.Kind != gdbstub.StopKilled {
		g.Kind = gdbstub.StopStart
	}
	return t.stopped(g), nil
}

// Auxv implements gdbstub.Target.Auxv.
func (t *GDBTarget) Auxv() ([]byte, error) {
	th, err := t.any()
	if err != nil {
		return nil, err
	}
	return Auxv(th)
}

// ExecFile implements gdbstub.Target.ExecFile: the program the process
// runs now, as the guest names it (its last exec), else the one it was
// chosen by.
func (t *GDBTarget) ExecFile() (string, error) {
	if th, err := t.any(); err == nil {
		if p, ok := guestExe(th.Pid); ok {
			return p, nil
		}
	}
	return t.exe, nil
}

// guestExe returns the path of process pid's executable in its own view:
// the kernel shows it from the reader's root, below the guest's root.
func guestExe(pid int) (string, bool) {
	exe, err1 := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	root, err2 := os.Readlink(fmt.Sprintf("/proc/%d/root", pid))
	if err1 != nil || err2 != nil || strings.HasSuffix(exe, " (deleted)") {
		return "", false
	}
	return guestPath(root, exe)
}

// Open implements gdbstub.Target.Open: the files of the recording, and
// the /proc files of the debugged process (gdb reads its maps there).
func (t *GDBTarget) Open(path string) (fs.File, error) {
	if rest, ok := strings.CutPrefix(path, "/proc/"); ok {
		host, err := t.hostProcPath(rest)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return os.Open(host)
	}
	return t.rec.OpenFile(path)
}

// hostProcPath translates the guest's "/proc/" + rest, where rest starts
// with the debugged process's pid or one of its tids, optionally followed
// by task/TID, to the host's path of the same file.
func (t *GDBTarget) hostProcPath(rest string) (string, error) {
	parts := strings.Split(rest, "/")
	ts := t.threads()
	host := func(id string, pid bool) (int, bool) {
		n, err := strconv.Atoi(id)
		for _, th := range ts {
			switch {
			case err != nil:
			case pid && th.Vpid == n:
				return th.Pid, true
			case th.Vtid == n:
				return th.Tid, true
			}
		}
		return 0, false
	}
	h, ok := host(parts[0], true)
	if !ok || slices.Contains(parts, "..") {
		return "", fs.ErrNotExist
	}
	parts[0] = strconv.Itoa(h)
	if len(parts) > 2 && parts[1] == "task" {
		if parts[2] != "" {
			ht, ok := host(parts[2], false)
			if !ok {
				return "", fs.ErrNotExist
			}
			parts[2] = strconv.Itoa(ht)
		}
	}
	return "/proc/" + strings.Join(parts, "/"), nil
}

// Siginfo implements gdbstub.Target.Siginfo.
func (t *GDBTarget) Siginfo(vtid int) ([]byte, error) {
	th, err := t.thread(vtid)
	if err != nil {
		return nil, err
	}
	b, err := t.s.Siginfo(th.Tid)
	if err == nil {
		return b, nil
	}
	// Stopped by the debugger's own trap, which the replay makes without
	// a signal: the SIGTRAP the kernel would have given it natively.
	code := int32(0)
	switch t.last.Kind {
	case gdbstub.StopBreakpoint:
		code = siKernel // int3
		if t.last.Hardware {
			code = trapHWBkpt
		}
	case gdbstub.StopWatch:
		code = trapHWBkpt
	case gdbstub.StopStep:
		code = trapTrace
	}
	if code == 0 || t.last.Tid != vtid {
		return nil, gdbstub.ErrUnsupported
	}
	info := make([]byte, 128)
	binary.LittleEndian.PutUint32(info[0:], 5) // SIGTRAP
	binary.LittleEndian.PutUint32(info[8:], uint32(code))
	return info, nil
}

// si_code values of a SIGTRAP (siginfo.h).
const (
	siKernel   = 0x80 // an int3
	trapTrace  = 2    // a single step
	trapHWBkpt = 4    // a debug register's breakpoint or watchpoint
)

// OpenFile opens a file of the recording by its path in the guest's
// view, as the recorded program would have found it: symlinks resolve
// inside the recorded files, and nothing outside them is reached.
func (rec *Recording) OpenFile(path string) (fs.File, error) {
	f, err := ptrace.OpenInRoot(rec.root, path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// LocalPath returns where the file the guest calls path lies on this
// machine, within the rebuilt files (for a debugger that must read it
// itself, as Delve does).
func (rec *Recording) LocalPath(path string) (string, error) {
	f, err := ptrace.OpenInRoot(rec.root, path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
}
