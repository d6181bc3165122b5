package recorder

import (
	"fmt"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/trace"
)

// splice, tee and sendfile move data between two descriptors inside the
// kernel, so the guest's memory never holds it. When one end is external
// (a network socket, a terminal, hermit's stdin), replay has no such
// descriptor there, only a stand-in, and running the call would diverge
// (Go's io.Copy between TCP connections splices through a pipe; its file
// server sendfiles). Such a call is kept as ResultSplice: replay skips it,
// returns the recorded count, writes the offsets it updated, and does to
// the internal end what the call did: puts the recorded bytes into the
// pipe it filled, or takes as many from the pipe or file it drained.

// Pipes moves data in and out of the guest's pipes and files from
// outside the guest (detcore/ptrace.Tracer implements it).
type Pipes interface {
	// PipeTail returns the last n bytes pipe fd of thread tid's process
	// holds, leaving them there.
	PipeTail(tid, fd, n int) ([]byte, error)
	// PipeFill writes b into pipe fd.
	PipeFill(tid, fd int, b []byte) error
	// PipeRewrite takes all of pipe fd's bytes and writes them back,
	// which lays them out in whole pages as PipeFill's.
	PipeRewrite(tid, fd int) error
	// FdSkip takes n bytes from fd as a read would: a pipe's are dropped,
	// a file's offset moves on.
	FdSkip(tid, fd int, n int64) error
}

var _ Pipes = (*ptrace.Tracer)(nil)

// What replay does to the internal end of a kept splice, in the first
// byte of the event's Mem entry at address 0 (the bytes to put follow).
const (
	SpliceNone = iota // both ends external
	SpliceFill        // put the bytes that follow into the output pipe
	SpliceSkip        // take Result bytes from the input (pipe or file)
)

// SpliceCall is one splice, tee or sendfile: its descriptors, the
// addresses of the offsets the kernel updates (0: none; the descriptor's
// own offset moves instead) and whether it takes the data from its input
// (tee only copies it).
type SpliceCall struct {
	In, Out       int
	InOff, OutOff uint64
	Takes         bool
}

// SpliceOf decodes a splice, tee or sendfile call.
func SpliceOf(nr int, a [6]uint64) (SpliceCall, bool) {
	fd := func(v uint64) int { return int(int32(v)) }
	switch nr {
	case abi.SYS_SPLICE:
		return SpliceCall{In: fd(a[0]), InOff: a[1], Out: fd(a[2]), OutOff: a[3], Takes: true}, true
	case abi.SYS_TEE:
		return SpliceCall{In: fd(a[0]), Out: fd(a[1])}, true
	case abi.SYS_SENDFILE:
		return SpliceCall{Out: fd(a[0]), In: fd(a[1]), InOff: a[2], Takes: true}, true
	}
	return SpliceCall{}, false
}

// spliceKeep decides whether call c's result must be kept: when data
// comes from outside (an external input, or hermit's stdin) or goes to an
// external output.
func (r *Recorder) spliceKeep(c *detcore.Call, p *pend) bool {
	s, ok := SpliceOf(c.Nr, c.Args)
	if !ok {
		return false
	}
	in, out := r.classOf(c.Tid, s.In), r.classOf(c.Tid, s.Out)
	p.inExt = in == ptrace.FdExternal || in == ptrace.FdStdio
	p.outExt = out == ptrace.FdExternal
	return p.inExt || p.outExt
}

// spliceExit fills ev, the kept result of call c, for replay. It
// reports false if it logged a refusal instead.
func (r *Recorder) spliceExit(c *detcore.Call, p *pend, ev *trace.Event) bool {
	ev.Digest = ResultSplice
	s, _ := SpliceOf(c.Nr, c.Args)
	if c.Result <= 0 {
		return true
	}
	o := outs{read: func(addr uint64, b []byte) error { return r.host.ReadMem(c.Tid, addr, b) }}
	o.add(s.InOff, 8)
	o.add(s.OutOff, 8)
	act := []byte{SpliceNone}
	switch {
	case p.inExt && !p.outExt:
		pipes, ok := r.host.(Pipes)
		if !ok {
			r.fail(fmt.Errorf("recording %s: the tracer cannot look into pipes", abi.SyscallName(c.Nr)))
			return false
		}
		b, err := pipes.PipeTail(c.Tid, s.Out, int(c.Result))
		if err != nil {
			r.refuse(c, abi.SyscallName(c.Nr), fmt.Sprintf("what it brought from outside the guest cannot be read back from its output (%v)", err))
			return false
		}
		act = append([]byte{SpliceFill}, b...)
		// As replay's pipe will hold them, so that a splice out of it
		// into a socket takes as much in both.
		if err := pipes.PipeRewrite(c.Tid, s.Out); err != nil {
			r.refuse(c, abi.SyscallName(c.Nr), fmt.Sprintf("what it brought from outside the guest cannot be laid out as replay will (%v)", err))
			return false
		}
	case !p.inExt && p.outExt && s.Takes && s.InOff == 0:
		act = []byte{SpliceSkip}
	}
	ev.Mem = append(o.mem, trace.MemWrite{Data: act})
	return true
}
