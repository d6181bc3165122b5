package replay

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/repl"
	"github.com/hermitdbg/hermit/trace"
)

// REPLSession shows a Session's runs to the interactive debugger
// (repl.Session): every guest thread and process, named by the ids the
// guest saw, and the recording's events, read once from the trace.
type REPLSession struct {
	s *Session
	// tl runs s forwards and backwards (replrewind.go).
	tl    *Timeline
	rec   *Recording
	evs   []replEvent
	files map[string]openFile
	// failure is why a run ended before the recording did (Failure).
	failure error
	// reversedTo is the stop the last command, a reverse one, returned:
	// what Where says, not the Session's own last stop there (a step
	// back's counting stop, a breakpoint's). Other moves clear it.
	reversedTo *repl.Stop
}

var _ repl.Session = (*REPLSession)(nil)

// replEvent is what the event table keeps of one event.
type replEvent struct {
	kind     repl.EventKind
	boundary bool
	tid, pid int32
	nr       int32 // syscall number, or signal
	aux      int64 // child, status, a syscall's recorded result
	group    bool
	// result: a syscall entry whose recorded result (aux) follows it.
	result bool
}

// NewREPLSession reads rec's events and debugs s, a Session of its runs.
// Continue and Stepi stop at the signals the recording delivers.
func NewREPLSession(rec *Recording, s *Session) (*REPLSession, error) {
	evs, err := readEvents(rec)
	if err != nil {
		return nil, err
	}
	rs := &REPLSession{s: s, tl: NewTimeline(s, TimelineOptions{}), rec: rec, evs: evs, files: map[string]openFile{}}
	s.StopAtSignals(true)
	s.CaptureResults()
	return rs, nil
}

// readEvents reads the table of rec's events.
func readEvents(rec *Recording) ([]replEvent, error) {
	r, err := trace.Open(rec.Dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	evs := make([]replEvent, 0, r.Count())
	pidOf := map[int32]int32{}
	// open maps a thread to its last syscall entry, until a recorded
	// result of the same call comes.
	open := map[int32]int{}
	for n, ev := range r.Events() {
		if n >= rec.Events {
			break
		}
		e := replEvent{kind: repl.EventOther, tid: ev.Tid}
		switch ev.Kind {
		case trace.KindSyscall:
			e.nr = ev.Sysno
			e.aux = ev.Result
			switch {
			case ev.Sysno >= 0 && ev.External:
				e.kind = repl.EventHost
				if i, ok := open[ev.Tid]; ok && evs[i].nr == ev.Sysno {
					evs[i].aux, evs[i].result = ev.Result, true
					delete(open, ev.Tid)
				}
			case ev.Sysno < 0:
				e.kind = repl.EventHost
			default:
				e.kind, e.boundary = repl.EventSyscall, true
				open[ev.Tid] = len(evs)
			}
		case trace.KindSignal:
			e.kind, e.nr = repl.EventSignal, ev.Signo
		case trace.KindClone:
			e.kind, e.aux = repl.EventClone, int64(ev.Child)
			if pid, ok := pidOf[ev.Tid]; ok && ev.Flags&abi.CLONE_THREAD != 0 {
				pidOf[ev.Child] = pid
			} else {
				pidOf[ev.Child] = ev.Child
			}
		case trace.KindExec:
			e.kind = repl.EventExec
		case trace.KindExit:
			e.kind, e.aux, e.group = repl.EventExit, int64(ev.Status), ev.Group
		}
		if _, ok := pidOf[ev.Tid]; !ok && ev.Tid != 0 {
			pidOf[ev.Tid] = ev.Tid // the root's first thread
		}
		e.pid = pidOf[ev.Tid]
		evs = append(evs, e)
	}
	return evs, nil
}

// Len implements repl.Session.Len.
func (rs *REPLSession) Len() uint64 { return uint64(len(rs.evs)) }

// Event implements repl.Session.Event.
func (rs *REPLSession) Event(n uint64) (repl.Event, error) {
	if n >= uint64(len(rs.evs)) {
		return repl.Event{}, fmt.Errorf("the recording has events 0 to %d", len(rs.evs)-1)
	}
	e := rs.evs[n]
	ev := repl.Event{N: n, Kind: e.kind, Tid: int(e.tid), Pid: int(e.pid), Boundary: e.boundary}
	switch e.kind {
	case repl.EventSyscall:
		ev.Nr = int(e.nr)
		ev.Text = abi.SyscallName(ev.Nr)
		ev.Result, ev.HasResult = e.aux, e.result
	case repl.EventHost:
		if e.nr < 0 {
			ev.Text = "the host's answer to a " + recorder.QueryName(e.nr) + " question"
		} else {
			ev.Nr = int(e.nr)
			ev.Text = fmt.Sprintf("the recorded result of %s: %d", abi.SyscallName(ev.Nr), e.aux)
		}
	case repl.EventSignal:
		ev.Signal = int(e.nr)
		ev.Text = fmt.Sprintf("signal %d delivered", e.nr)
	case repl.EventClone:
		ev.Child = int(e.aux)
		ev.Text = fmt.Sprintf("thread %d created", e.aux)
	case repl.EventExec:
		ev.Text = "a new program"
	case repl.EventExit:
		ev.Status, ev.Group = int(e.aux), e.group
		ev.Text = fmt.Sprintf("thread %d exited (status %#x)", e.tid, e.aux)
		if e.group {
			ev.Text = fmt.Sprintf("process %d exited (status %#x)", e.pid, e.aux)
		}
	default:
		ev.Text = "a file of the recording"
	}
	return ev, nil
}

// vtid returns the guest id of host thread tid (0 if gone).
func vtidOf(ts []detcore.ThreadInfo, tid int) int {
	for _, th := range ts {
		if th.Tid == tid {
			return th.Vtid
		}
	}
	return 0
}

// stop converts a Session stop.
func (rs *REPLSession) stop(st Stop, err error) (repl.Stop, error) {
	rs.reversedTo = nil
	if err != nil && st.Reason != ReasonExited {
		return rs.Where(), err
	}
	out := rs.convert(st)
	if err != nil {
		// The run ended early: a divergence, a damaged trace.
		out.Failure = err.Error()
		if rs.failure == nil {
			rs.failure = err
		}
	}
	return out, nil
}

// Failure returns why a run of the session ended before the recording
// did (the first such), or nil.
func (rs *REPLSession) Failure() error { return rs.failure }

func (rs *REPLSession) convert(st Stop) repl.Stop {
	out := repl.Stop{Event: st.Event, Addr: st.Addr, Watch: st.Watch, Signal: st.Sig, Tid: vtidOf(rs.s.Threads(), st.Tid)}
	switch st.Reason {
	case ReasonStart:
		out.Kind = repl.StopStart
	case ReasonEvent:
		out.Kind = repl.StopEvent
	case ReasonBreakpoint:
		out.Kind = repl.StopBreakpoint
	case ReasonWatchpoint:
		out.Kind = repl.StopWatch
	case ReasonStep:
		out.Kind = repl.StopStep
	case ReasonSignal:
		out.Kind = repl.StopSignal
	case ReasonInterrupt:
		out.Kind = repl.StopInterrupt
	case ReasonExited:
		out.Kind, out.ExitCode, out.Tid = repl.StopExited, st.Result.ExitCode, 0
	}
	return out
}

// Where implements repl.Session.Where.
func (rs *REPLSession) Where() repl.Stop {
	st := rs.convert(rs.s.LastStop())
	if rs.reversedTo != nil {
		st = *rs.reversedTo
	}
	if t, err := rs.s.Time(); err == nil {
		st.Time = t
	}
	return st
}

// Restart implements repl.Session.Restart.
func (rs *REPLSession) Restart() (repl.Stop, error) {
	rs.reversedTo = nil
	if _, err := rs.tl.Restart(); err != nil {
		return rs.Where(), err
	}
	return rs.Where(), nil
}

// Goto implements repl.Session.Goto.
func (rs *REPLSession) Goto(n uint64) (repl.Stop, error) { return rs.stop(rs.tl.RunToEvent(n)) }

// Continue implements repl.Session.Continue.
func (rs *REPLSession) Continue(until uint64) (repl.Stop, error) {
	if until < rs.Len() && until >= rs.s.Event() {
		return rs.stop(rs.tl.ContinueTo(until))
	}
	return rs.stop(rs.tl.Continue())
}

// Stepi implements repl.Session.Stepi.
func (rs *REPLSession) Stepi(vtid, n int) (repl.Stop, error) {
	th, err := rs.thread(vtid)
	if err != nil {
		return rs.Where(), err
	}
	return rs.stop(rs.tl.Step(th.Tid, n))
}

// Interrupt implements repl.Session.Interrupt.
func (rs *REPLSession) Interrupt() { rs.s.Interrupt() }

// Result implements repl.Session.Result.
func (rs *REPLSession) Result(n uint64) (int64, bool) { return rs.s.Result(n) }

// Progress implements repl.Session.Progress.
func (rs *REPLSession) Progress() uint64 { return rs.rec.Progress() }

func (rs *REPLSession) thread(vtid int) (detcore.ThreadInfo, error) {
	for _, th := range rs.s.Threads() {
		if th.Vtid == vtid {
			return th, nil
		}
	}
	return detcore.ThreadInfo{}, fmt.Errorf("no live thread %d", vtid)
}

// Threads implements repl.Session.Threads.
func (rs *REPLSession) Threads() []repl.Thread {
	var out []repl.Thread
	for _, th := range rs.s.Threads() {
		out = append(out, repl.Thread{Tid: th.Vtid, Pid: th.Vpid, Name: ThreadName(th), State: th.State})
	}
	return out
}

// Regs implements repl.Session.Regs.
func (rs *REPLSession) Regs(vtid int) (repl.Regs, error) {
	th, err := rs.thread(vtid)
	if err != nil {
		return repl.Regs{}, err
	}
	r, err := rs.s.Regs(th.Tid)
	if err != nil {
		return repl.Regs{}, err
	}
	return repl.Regs{
		Rax: r.Rax, Rbx: r.Rbx, Rcx: r.Rcx, Rdx: r.Rdx, Rsi: r.Rsi, Rdi: r.Rdi, Rbp: r.Rbp, Rsp: r.Rsp,
		R8: r.R8, R9: r.R9, R10: r.R10, R11: r.R11, R12: r.R12, R13: r.R13, R14: r.R14, R15: r.R15,
		Rip: r.Rip, Eflags: r.Eflags, OrigRax: r.OrigRax,
		Cs: r.Cs, Ss: r.Ss, Ds: r.Ds, Es: r.Es, Fs: r.Fs, Gs: r.Gs, FsBase: r.FsBase, GsBase: r.GsBase,
	}, nil
}

// ReadMem implements repl.Session.ReadMem.
func (rs *REPLSession) ReadMem(vtid int, addr uint64, b []byte) (int, error) {
	th, err := rs.thread(vtid)
	if err != nil {
		return 0, err
	}
	return rs.s.ReadMem(th.Tid, addr, b)
}

// process finds a live thread of process vpid.
func (rs *REPLSession) process(vpid int) (detcore.ThreadInfo, error) {
	for _, th := range rs.s.Threads() {
		if th.Vpid == vpid {
			return th, nil
		}
	}
	return detcore.ThreadInfo{}, fmt.Errorf("no live process %d", vpid)
}

// Maps implements repl.Session.Maps: the paths as the guest names them.
func (rs *REPLSession) Maps(vpid int) (string, error) {
	th, err := rs.process(vpid)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", th.Pid))
	if err != nil {
		return "", err
	}
	root, _ := os.Readlink(fmt.Sprintf("/proc/%d/root", th.Pid))
	lines := strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		if j := strings.Index(l, " /"); j >= 0 {
			lines[i] = l[:j+1] + guestPathOr(root, strings.TrimSpace(l[j+1:])) + "\n"
		}
	}
	return strings.Join(lines, ""), nil
}

// Fds implements repl.Session.Fds.
func (rs *REPLSession) Fds(vpid int) ([]repl.Fd, error) {
	th, err := rs.process(vpid)
	if err != nil {
		return nil, err
	}
	dir := fmt.Sprintf("/proc/%d/fd", th.Pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	root, _ := os.Readlink(fmt.Sprintf("/proc/%d/root", th.Pid))
	var out []repl.Fd
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, repl.Fd{Fd: fd, What: guestPathOr(root, target)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fd < out[j].Fd })
	return out, nil
}

// Open implements repl.Session.Open. Files stay open, one per path,
// until Close: the symbols read from them are kept.
func (rs *REPLSession) Open(path string) (io.ReaderAt, int64, error) {
	if f, ok := rs.files[path]; ok {
		return f.ReaderAt, f.size, nil
	}
	f, err := rs.rec.OpenFile(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	ra, ok := f.(io.ReaderAt)
	if !ok || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	rs.files[path] = openFile{ra, f, fi.Size()}
	return ra, fi.Size(), nil
}

// Close closes the files Open opened, and ends the runs kept for going
// back.
func (rs *REPLSession) Close() {
	for _, f := range rs.files {
		f.c.Close()
	}
	rs.files = nil
	_ = rs.tl.Close()
}

// openFile is a file Open keeps.
type openFile struct {
	io.ReaderAt
	c    io.Closer
	size int64
}

// SetBreakpoint implements repl.Session.SetBreakpoint.
func (rs *REPLSession) SetBreakpoint(addr uint64) error { return rs.s.SetBreakpoint(addr) }

// ClearBreakpoint implements repl.Session.ClearBreakpoint.
func (rs *REPLSession) ClearBreakpoint(addr uint64) error { return rs.s.ClearBreakpoint(addr) }

// SetWatchpoint implements repl.Session.SetWatchpoint.
func (rs *REPLSession) SetWatchpoint(addr uint64, size int) (int, error) {
	id, err := rs.s.SetWatchpoint(addr, size, WatchWrite)
	if err == ErrNoWatchSlot {
		return 0, repl.ErrNoSlot
	}
	return id, err
}

// ClearWatchpoint implements repl.Session.ClearWatchpoint.
func (rs *REPLSession) ClearWatchpoint(id int) error { return rs.s.ClearWatchpoint(id) }
