// Package replay runs a program again from a trace made by package
// recorder: the same engine recomputes the schedule, time, randomness and
// ids, and the trace supplies what came from outside. Session, built on
// it, stops anywhere in the replay for a debugger.
package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/trace"
)

// DivergenceError says the replay stopped doing what the recording did.
type DivergenceError struct {
	Event uint64 // the event at which it noticed
	Tid   int    // the guest thread (as the guest sees it), 0 if none
	Msg   string
}

func (e *DivergenceError) Error() string {
	if e.Tid != 0 {
		return fmt.Sprintf("replay diverged at event %d: thread %d: %s", e.Event, e.Tid, e.Msg)
	}
	return fmt.Sprintf("replay diverged at event %d: %s", e.Event, e.Msg)
}

// TruncatedError says the trace ends (damaged or cut) before the replay
// does.
type TruncatedError struct {
	Event uint64
	Err   error
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("the trace ends at event %d, before the program did (%v)", e.Event, e.Err)
}

func (e *TruncatedError) Unwrap() error { return e.Err }

// player feeds a trace's events to a run, in order. It implements
// detcore.Journal; tracer (oracle.go) answers the engine's questions
// from it.
type player struct {
	r *trace.Reader
	// ev is the next event, valid when have is set; n is its number.
	ev   trace.Event
	have bool
	n    uint64
	// err is the first divergence; the run stops with it.
	err error
	// args are each (thread, syscall)'s last recorded arguments.
	args map[[2]int32][6]uint64
	// force holds, per host tid, the result to force at Exit.
	force map[int]int64
	// place holds, per host tid, the address an mmap must return.
	place   map[int]int64
	onEvent func(uint64)
	// exit is the recorded exit of the root process, once reached.
	exit *trace.Event
	// pipes redoes a kept splice's work on its internal end (nil: such
	// a call diverges).
	pipes recorder.Pipes
	// fastDigests: the trace keeps what writes without a stop wrote
	// (recorder.Settings.FastWriteDigests).
	fastDigests bool
}

func newPlayer(r *trace.Reader, onEvent func(uint64)) *player {
	return &player{r: r, args: map[[2]int32][6]uint64{}, force: map[int]int64{}, place: map[int]int64{}, onEvent: onEvent}
}

// peek returns the next event that is not informational, or an error at
// the end of the trace. Captured files were used to build the root; the
// process events (clone, exec, a process's exit: see recorder/processes.go)
// only describe the run, which replay recomputes. The last process exit is
// the root's, which Close wrote: it ends the recording.
func (p *player) peek() (*trace.Event, error) {
	for !p.have {
		p.n = p.r.Pos()
		err := p.r.Next(&p.ev)
		if err == io.EOF {
			if t := p.r.Truncation(); t != nil {
				return nil, &TruncatedError{Event: p.n, Err: t}
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, &TruncatedError{Event: p.n, Err: err}
		}
		if p.ev.Kind == trace.KindExit && p.ev.Group {
			ev := p.ev
			p.exit = &ev
			continue
		}
		switch p.ev.Kind {
		case trace.KindFile, trace.KindClone, trace.KindExec, trace.KindExit:
			continue
		}
		p.have = true
	}
	return &p.ev, nil
}

func (p *player) take() { p.have = false }

// preemptEarly is the share of the recording's CPU time after which a
// replay preempts a thread where the recording's watchdog did: its own
// pace differs, and a thread that got to its next call first would
// diverge at once.
const preemptEarly = 0.9

// PreemptDue implements detcore.PreemptJournal: the recording's watchdog
// preempted thread vtid next, after ran of CPU time.
func (p *player) PreemptDue(vtid int) (time.Duration, bool) {
	ev, err := p.peek()
	if err != nil || ev.Kind != trace.KindPreempt || int(ev.Tid) != vtid {
		return 0, false
	}
	return time.Duration(float64(ev.Ran) * preemptEarly), true
}

// Preempted implements detcore.PreemptJournal.
// The thread ran what the recording's ran, whatever this run's did.
func (p *player) Preempted(vtid int, _ time.Duration) (time.Duration, error) {
	if p.err != nil {
		return 0, p.err
	}
	ev, err := p.peek()
	switch {
	case err == io.EOF:
		ev = nil
	case err != nil:
		return 0, err
	case ev.Kind == trace.KindPreempt && int(ev.Tid) == vtid:
		p.take()
		return time.Duration(ev.Ran), nil
	}
	return 0, p.diverge(vtid, "the watchdog preempted it where the recording has %s", p.describe(ev, vtid))
}

// SignalDue implements detcore.OutsideSignalPlayer: the recording's
// thread vtid got a signal from outside here (after its preemption, or as
// it was resumed).
func (p *player) SignalDue(vtid int) (int, []byte, bool) { return p.outsideSignal(vtid, false) }

// SignalAtCall implements detcore.OutsideSignalPlayer: the recording's
// thread vtid got a signal from outside at the entry of the call it
// stands at, before the call.
func (p *player) SignalAtCall(vtid int) (int, []byte, bool) { return p.outsideSignal(vtid, true) }

func (p *player) outsideSignal(vtid int, atCall bool) (int, []byte, bool) {
	if p.err != nil {
		return 0, nil, false
	}
	ev, err := p.peek()
	if err != nil || ev.Kind != trace.KindSignal || int(ev.Tid) != vtid || ev.Deterministic || ev.AtCall != atCall {
		return 0, nil, false
	}
	p.take()
	return int(ev.Signo), append([]byte(nil), ev.Siginfo...), true
}

// FastWrites implements detcore.FastWriteJournal: what thread vtid's
// process wrote without a stop must be what the recording's wrote.
func (p *player) FastWrites(vtid int, digest uint64) error {
	if !p.fastDigests {
		return nil
	}
	ev, ok := p.answer(recorder.QueryFastWrites, 0)
	if !ok {
		return p.err
	}
	if uint64(ev.Result) != digest {
		return p.diverge(vtid, "the writes its process made without a stop since hermit last looked wrote other bytes than the recording's (a file it writes to, or stdout redirected to a file)")
	}
	return nil
}

func (p *player) diverge(tid int, format string, args ...any) error {
	if p.err == nil {
		p.err = &DivergenceError{Event: p.n, Tid: tid, Msg: fmt.Sprintf(format, args...)}
	}
	return p.err
}

// describe names the event the recording has next, for messages; tid is
// the thread the replay is at.
func (p *player) describe(ev *trace.Event, tid int) string {
	switch {
	case ev == nil:
		return "the end of the recording"
	case ev.Kind == trace.KindPreempt:
		return fmt.Sprintf("the watchdog's preemption of thread %d", ev.Tid)
	case ev.Kind == trace.KindSignal:
		return fmt.Sprintf("a signal from outside to thread %d", ev.Tid)
	case ev.Kind != trace.KindSyscall:
		return fmt.Sprintf("a %s event", ev.Kind)
	case ev.Sysno == -recorder.QueryFastWrites:
		return "a check of what thread " + fmt.Sprint(ev.Tid) + "'s process wrote without a stop"
	case ev.Sysno < 0:
		return "the host's answer to a " + recorder.QueryName(ev.Sysno) + " question"
	case ev.External:
		return fmt.Sprintf("the result of thread %d's %s", ev.Tid, abi.SyscallName(int(ev.Sysno)))
	}
	call := abi.SyscallName(int(ev.Sysno)) + "(?)"
	if a, ok := p.args[[2]int32{ev.Tid, ev.Sysno}]; ok && recorder.ArgDigest(int(ev.Sysno), a) == ev.Digest {
		call = callString(int(ev.Sysno), a)
	}
	if int(ev.Tid) != tid {
		return fmt.Sprintf("thread %d's %s", ev.Tid, call)
	}
	return call
}

// FormatCall shows a syscall with its arguments as strace would, roughly:
// small negative numbers in decimal, everything else in hex.
func FormatCall(nr int, a [6]uint64) string { return callString(nr, a) }

func callString(nr int, a [6]uint64) string {
	parts := make([]string, 0, 6)
	for _, v := range a[:abi.NumArgs(nr)] {
		switch {
		case int64(v) < 0 && int64(v) > -4096:
			parts = append(parts, fmt.Sprint(int64(v)))
		case v>>32 == 0 && int32(v) < 0 && int32(v) > -4096:
			// A negative int argument such as AT_FDCWD.
			parts = append(parts, fmt.Sprint(int32(v)))
		default:
			parts = append(parts, fmt.Sprintf("%#x", v))
		}
	}
	return abi.SyscallName(nr) + "(" + strings.Join(parts, ", ") + ")"
}

// partWrite returns the arguments that make write call c write only the
// n bytes the recording's wrote to hermit's stdio (recorder/stdio.go), or
// nil to run it as it is.
func partWrite(c *detcore.Call, n int64) *[6]uint64 {
	switch c.Nr {
	case abi.SYS_WRITE, abi.SYS_PWRITE64, abi.SYS_SENDTO:
		if n < 0 || uint64(n) >= c.Args[2] {
			return nil
		}
		args := c.Args
		args[2] = uint64(n)
		return &args
	}
	return nil
}

// Enter implements detcore.Journal: the call must be the one recorded.
func (p *player) Enter(c *detcore.Call) error {
	if p.err != nil {
		return p.err
	}
	ev, err := p.peek()
	if err == io.EOF {
		if p.killedFromOutside() {
			return p.err
		}
		return p.diverge(c.Vtid, "expected the end of the recording got %s", callString(c.Nr, c.Args))
	}
	if err != nil {
		return err
	}
	if ev.Kind == trace.KindSyscall && !ev.External && len(ev.Mem) == 1 {
		if a, ok := recorder.DecodeArgs(ev.Mem[0].Data); ok {
			p.args[[2]int32{ev.Tid, ev.Sysno}] = a
		}
	}
	if ev.Kind != trace.KindSyscall || ev.External || ev.Tid != int32(c.Vtid) || ev.Sysno != int32(c.Nr) ||
		!sameArgs(ev.Digest, c.Nr, c.Args) {
		return p.diverge(c.Vtid, "expected %s got %s", p.describe(ev, c.Vtid), callString(c.Nr, c.Args))
	}
	if c.HasWritten && ev.Result != int64(c.Written) {
		return p.diverge(c.Vtid, "%s writes other bytes than the recording's", callString(c.Nr, c.Args))
	}
	n := p.n
	p.take()
	if p.onEvent != nil {
		p.onEvent(n)
	}
	return nil
}

// Native implements detcore.Journal: a call whose result was recorded is
// emulated from it (or run and then forced to it).
func (p *player) Native(c *detcore.Call) detcore.Outcome {
	if p.err != nil {
		// Stop the guest from acting on a diverged run.
		return detcore.Outcome{Emulate: true, Result: -abi.EINTR}
	}
	ev, err := p.peek()
	if err == io.EOF && p.killedFromOutside() {
		// Killed during this call: do not let it run.
		return detcore.Outcome{Emulate: true, Result: -abi.EINTR}
	}
	if err != nil || ev.Kind != trace.KindSyscall || !ev.External || ev.Sysno != int32(c.Nr) || ev.Tid != int32(c.Vtid) {
		return detcore.Outcome{}
	}
	p.take()
	switch {
	case ev.Digest == recorder.ResultForce && c.Nr == abi.SYS_COPY_FILE_RANGE:
		return p.copyFileRange(c, ev.Result)
	case ev.Digest == recorder.ResultForce && (c.Nr == abi.SYS_READLINK || c.Nr == abi.SYS_READLINKAT):
		// A link that names a pipe, socket or namespace by its inode
		// (recorder.Exit): read again, and answered as recorded.
		p.force[c.Tid] = ev.Result
		mem, err := p.mem(ev.Mem)
		if err != nil {
			p.err = err
			return detcore.Outcome{Emulate: true, Result: -abi.EINTR}
		}
		return detcore.Outcome{Exit: true, Mem: mem}
	case ev.Digest == recorder.ResultForce:
		p.force[c.Tid] = ev.Result
		o := detcore.Outcome{Exit: true, Args: partWrite(c, ev.Result)}
		if sig := recorder.RaisedSignal(ev.Mem); sig == abi.SIGPIPE && o.Args != nil {
			o.Signal = sig
		}
		return o
	case ev.Digest == recorder.ResultSocket && ev.Result >= 0:
		// A connection accepted from outside: a new socket takes its
		// descriptor number (the lowest free, as accept's was), and the
		// peer's address is written as accept wrote it. Everything done
		// on the socket afterwards was recorded as external.
		flags := uint64(0)
		if c.Nr == abi.SYS_ACCEPT4 {
			flags = c.Args[3] & (abi.O_NONBLOCK | abi.O_CLOEXEC)
		}
		o := p.standIn(c, ev.Result, flags)
		o.Mem, _ = p.mem(ev.Mem)
		return o
	case ev.Digest == recorder.ResultStandIn && ev.Result >= 0:
		// A terminal the guest opened: a pty of replay's own in its
		// place (its calls were recorded as external), or a socket, as
		// for an accepted connection.
		flags := uint64(0)
		if len(ev.Mem) == 1 && len(ev.Mem[0].Data) == 8 {
			flags = binary.LittleEndian.Uint64(ev.Mem[0].Data)
		}
		if flags&recorder.StandInTerminal != 0 && ptmxOpens() {
			return p.ptyStandIn(c, ev.Result, flags)
		}
		return p.standIn(c, ev.Result, flags&(abi.O_NONBLOCK|abi.O_CLOEXEC))
	case ev.Digest == recorder.ResultRefused:
		msg := "a call hermit cannot replay"
		if len(ev.Mem) == 1 {
			msg = string(ev.Mem[0].Data)
		}
		p.diverge(c.Vtid, "%s (hermit record warned that it cannot be replayed)", msg)
		return detcore.Outcome{Emulate: true, Result: -abi.EINTR}
	case ev.Digest == recorder.ResultSplice && ev.Result > 0:
		return p.splice(c, ev)
	case ev.Digest == recorder.ResultPreempted:
		p.force[c.Tid] = ev.Result
		spin := len(ev.Mem) == 1 && len(ev.Mem[0].Data) == 1 && ev.Mem[0].Data[0] == 1
		return detcore.Outcome{Exit: true, Nr: abi.SYS_GETPID, Args: &[6]uint64{}, Preempt: true, PreemptSpin: spin}
	case ev.Digest == recorder.ResultPlace && ev.Result >= 0 && c.Nr == abi.SYS_MREMAP:
		return p.remap(c, ev.Result)
	case ev.Digest == recorder.ResultPlace && ev.Result >= 0:
		args := c.Args
		args[0] = uint64(ev.Result)
		args[3] |= abi.MAP_FIXED_NOREPLACE
		p.place[c.Tid] = ev.Result
		return detcore.Outcome{Exit: true, Args: &args}
	case recorder.Restarted(ev.Result):
		// A signal interrupted the call: let one interrupt a wait in its
		// place, with the same restart code (the kernel's own job-control
		// signal is sent again).
		p.force[c.Tid] = ev.Result
		return detcore.Outcome{Exit: true, Interrupt: true, Raise: recorder.RaisedSignal(ev.Mem)}
	}
	if c.Nr == abi.SYS_IOCTL && uint32(c.Args[1]) == tiocsptlck && ptmxOpens() {
		// (Un)locking a pty master: made on replay's own pty too
		// (ptyStandIn), whose TIOCGPTPEER fails while it is locked.
		p.force[c.Tid] = ev.Result
		return detcore.Outcome{Exit: true}
	}
	o := detcore.Outcome{Emulate: true, Result: ev.Result}
	var mem []trace.MemWrite
	o.GroupSignals, mem = recorder.TermSignals(ev.Mem)
	if o.Mem, err = p.mem(mem); err != nil {
		p.err = err
		return detcore.Outcome{Emulate: true, Result: -abi.EINTR}
	}
	return o
}

// copyFileRange replays a copy_file_range whose recording returned res:
// failed, it fails so again without running; otherwise as many bytes are
// copied with sendfile, which needs no common filesystem (the replay's
// files are on an overlay's layers, and one the guest made is not where
// one it read is: EXDEV), when the call writes at the output's offset.
// One that gives its own output offset runs as it is, its result forced.
func (p *player) copyFileRange(c *detcore.Call, res int64) detcore.Outcome {
	if res < 0 {
		return detcore.Outcome{Emulate: true, Result: res}
	}
	p.force[c.Tid] = res
	if c.Args[3] != 0 || c.Args[5] != 0 {
		return detcore.Outcome{Exit: true}
	}
	return detcore.Outcome{Exit: true, Nr: abi.SYS_SENDFILE, Args: &[6]uint64{c.Args[2], c.Args[0], c.Args[1], uint64(res)}}
}

// splice replays a splice, tee or sendfile that had an external end: the
// call is skipped, and its internal end gets the recorded bytes or gives
// up as many as it gave (recorder/splice.go).
func (p *player) splice(c *detcore.Call, ev *trace.Event) detcore.Outcome {
	mem, err := p.mem(ev.Mem)
	if err != nil {
		p.err = err
		return detcore.Outcome{Emulate: true, Result: -abi.EINTR}
	}
	s, _ := recorder.SpliceOf(c.Nr, c.Args)
	o := detcore.Outcome{Emulate: true, Result: ev.Result}
	for _, m := range mem {
		if m.Addr != 0 {
			o.Mem = append(o.Mem, m)
			continue
		}
		switch {
		case len(m.Data) == 0 || m.Data[0] == recorder.SpliceNone:
		case p.pipes == nil:
			err = errors.New("this tracer cannot reach the guest's pipes")
		case m.Data[0] == recorder.SpliceFill:
			// Laid out as the recording's pipe was (recorder/splice.go).
			if err = p.pipes.PipeFill(c.Tid, s.Out, m.Data[1:]); err == nil {
				err = p.pipes.PipeRewrite(c.Tid, s.Out)
			}
		case m.Data[0] == recorder.SpliceSkip:
			err = p.pipes.FdSkip(c.Tid, s.In, ev.Result)
		}
	}
	if err != nil {
		p.diverge(c.Vtid, "%s could not be replayed on its guest descriptor: %v", callString(c.Nr, c.Args), err)
		return detcore.Outcome{Emulate: true, Result: -abi.EINTR}
	}
	return o
}

// standIn makes a socket take the place of descriptor fd, the lowest
// free number as the recorded call's was, with flags SOCK_NONBLOCK and
// SOCK_CLOEXEC (O_NONBLOCK and O_CLOEXEC).
func (p *player) standIn(c *detcore.Call, fd int64, flags uint64) detcore.Outcome {
	const afInet, sockStream = 2, 1
	args := [6]uint64{afInet, sockStream | flags}
	p.place[c.Tid] = fd
	return detcore.Outcome{Exit: true, Nr: abi.SYS_SOCKET, Args: &args}
}

// ptyStandIn opens a pty master, not as a controlling terminal, in place
// of the terminal the guest opened as descriptor fd, with the open's
// access mode, O_NONBLOCK and O_CLOEXEC: F_GETFL there says what it said
// in the recording (O_LARGEFILE, which a socket lacks, included), and
// poll and epoll take it. A TIOCGPTPEER runs for real, on the master's
// stand-in: its slave has the flags the recorded one had.
func (p *player) ptyStandIn(c *detcore.Call, fd int64, flags uint64) detcore.Outcome {
	p.place[c.Tid] = fd
	if c.Nr == abi.SYS_IOCTL {
		return detcore.Outcome{Exit: true}
	}
	flags &= abi.O_ACCMODE | abi.O_NONBLOCK | abi.O_CLOEXEC
	atFdcwd := int64(abi.AT_FDCWD)
	args := [6]uint64{uint64(atFdcwd), detcore.StackArg, flags | abi.O_NOCTTY}
	return detcore.Outcome{Exit: true, Nr: abi.SYS_OPENAT, Args: &args, Stack: []byte(ptmx + "\x00")}
}

const (
	ptmx       = "/dev/ptmx"
	tiocsptlck = 0x40045431 // TIOCSPTLCK
)

// ptmxOpens reports whether replay can open ptys (ptyStandIn).
var ptmxOpens = sync.OnceValue(func() bool {
	f, err := os.OpenFile(ptmx, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
})

// mem copies an event's memory writes, loading those stored as blobs.
func (p *player) mem(ms []trace.MemWrite) ([]detcore.MemWrite, error) {
	out := make([]detcore.MemWrite, 0, len(ms))
	for _, m := range ms {
		data := append([]byte(nil), m.Data...)
		if !m.Blob.IsZero() {
			b, err := p.r.Blob(m.Blob)
			if err != nil {
				return nil, &TruncatedError{Event: p.n, Err: err}
			}
			data = b
		}
		out = append(out, detcore.MemWrite{Addr: m.Addr, Data: data})
	}
	return out, nil
}

// Exit implements detcore.Journal.
func (p *player) Exit(c *detcore.Call) (bool, int64, error) {
	if addr, ok := p.place[c.Tid]; ok {
		delete(p.place, c.Tid)
		if c.Result != addr {
			return false, 0, p.diverge(c.Vtid, "expected %s to return %#x as recorded got %#x (%s)", callString(c.Nr, c.Args), addr, c.Result, placeDiffers(c))
		}
		return false, 0, p.err
	}
	res, ok := p.force[c.Tid]
	delete(p.force, c.Tid)
	return ok, res, p.err
}

// Exec implements detcore.Journal.
func (p *player) Exec(tid, vtid int) error { return p.err }

// answer returns the recorded answer to question q with key key.
func (p *player) answer(q int, key uint64) (*trace.Event, bool) {
	if p.err != nil {
		return nil, false
	}
	ev, err := p.peek()
	if err != nil {
		if err == io.EOF {
			if !p.killedFromOutside() {
				p.diverge(0, "expected the end of the recording got the host's answer to a %s question", recorder.QueryName(int32(-q)))
			}
		} else if p.err == nil {
			p.err = err
		}
		return nil, false
	}
	if ev.Kind == trace.KindSyscall && ev.External && ev.Sysno == int32(-q) && ev.Digest != key {
		// The same question about something else: the program went
		// another way before this, on an input hermit did not see.
		p.diverge(0, "the replay asked the host's answer to a %s question about %s, where the recording asked about %s: "+
			"the program went another way before this point, on an input the recording did not keep "+
			"(a random number from the CPU's RDRAND, which only --virtualize-cpuid hides, say)",
			recorder.QueryName(int32(-q)), queryAbout(q, key), queryAbout(q, ev.Digest))
		return nil, false
	}
	if ev.Kind != trace.KindSyscall || !ev.External || ev.Sysno != int32(-q) {
		p.diverge(0, "expected %s got the host's answer to a %s question", p.describe(ev, 0), recorder.QueryName(int32(-q)))
		return nil, false
	}
	p.take()
	return ev, true
}

// queryAbout says what a question with key asks about: a descriptor, or
// the digest of its path or arguments.
func queryAbout(q int, key uint64) string {
	switch q {
	case recorder.QueryFdKind, recorder.QueryPipeSpace, recorder.QueryAccessMode, recorder.QueryReadFd, recorder.QueryWriteEnd:
		return fmt.Sprintf("descriptor %d", key)
	}
	return fmt.Sprintf("the path or arguments with digest %#x", key)
}

// ErrKilled ends a replay whose recording ended with the guest killed by
// SIGKILL from outside (hermit record was told to stop, a CI job timed
// out): the replay has gone as far as the recording, and the guest is
// killed there too.
var ErrKilled = errors.New("the recording ends here: the program was killed from outside")

// killedFromOutside reports, at the end of the trace, whether the guest
// was killed by SIGKILL; if so the run stops with ErrKilled.
func (p *player) killedFromOutside() bool {
	if p.exit == nil || p.exit.Status != 9 {
		return false
	}
	if p.err == nil {
		p.err = ErrKilled
	}
	return true
}

// cpuid answers a cpuid instruction from the recording.
func (p *player) cpuid(leaf, subleaf uint32) [4]uint32 {
	ev, ok := p.answer(recorder.QueryCPUID, recorder.CPUIDKey(leaf, subleaf))
	if !ok || len(ev.Mem) == 0 {
		return [4]uint32{}
	}
	v, ok := recorder.DecodeCPUID(ev.Mem[0].Data)
	if !ok {
		p.diverge(0, "corrupt cpuid answer in the trace")
	}
	return v
}

// finish checks the end of a run against the recording.
func (p *player) finish(res detcore.Result) error {
	if p.err != nil {
		return p.err
	}
	ev, err := p.peek()
	if err == nil {
		return p.diverge(0, "expected %s got the end of the program", p.describe(ev, 0))
	}
	var te *TruncatedError
	if errors.As(err, &te) {
		return err
	}
	if p.exit != nil {
		want := p.exit.Status
		got := int32(res.ExitCode << 8)
		if res.Signal != 0 {
			got = int32(res.Signal)
		}
		if want != got {
			return p.diverge(0, "expected exit status %#x got %#x", want, got)
		}
	}
	return nil
}

// sameArgs reports whether call nr with args is the call whose argument
// digest the recording holds. An fcntl(F_SETFL) whose flags differ from
// the recorded ones only in the bits F_SETFL ignores (the access mode and
// O_LARGEFILE) is the same call: programs pass what F_GETFL said, which
// follows what their stdout is (a pipe in CI: O_WRONLY; a file:
// O_LARGEFILE too; a terminal: O_RDWR), and a replay's stdout may be
// another kind than the recording's (Node's fcntl(1, F_SETFL, flags |
// O_NONBLOCK) diverged there).
func sameArgs(digest uint64, nr int, args [6]uint64) bool {
	if digest == recorder.ArgDigest(nr, args) {
		return true
	}
	const fSetfl, ignored = 4, abi.O_ACCMODE | abi.O_LARGEFILE
	if nr != abi.SYS_FCNTL || uint32(args[1]) != fSetfl {
		return false
	}
	for _, acc := range []uint64{abi.O_RDONLY, abi.O_WRONLY, abi.O_RDWR} {
		for _, large := range []uint64{0, abi.O_LARGEFILE} {
			a := args
			a[2] = a[2]&^ignored | acc | large
			if digest == recorder.ArgDigest(nr, a) {
				return true
			}
		}
	}
	return false
}
