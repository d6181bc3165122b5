package recorder

import (
	"errors"
	"path"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/trace"
)

// HostTracer is the tracer the recorder wraps: the engine's tracer with
// the optional file and proc interfaces (detcore/ptrace implements all).
type HostTracer interface {
	detcore.Tracer
	detcore.FileTracer
	detcore.ProcTracer
	detcore.SpinTracer
	detcore.KernelWaitTracer
	detcore.SiginfoTracer
	// Where a spin trap may go: the same answer in a replay, whose
	// files are the recording's; and traps change no schedule.
	detcore.SpinTrapTracer
	// The watchdog's budgets count the running thread's CPU time:
	// without it they count the wall time, and on a loaded machine a
	// thread in a call the host is slow to run gets examined there (the
	// examination's stop interrupts the call), which a replay does not
	// repeat.
	detcore.CPUTimeTracer
	// What procfs's links to pipes, sockets and namespaces name.
	detcore.PseudoDevTracer
	// The timeouts of sockets.
	detcore.SockTimeoutTracer
	// Which threads run under a seccomp filter of the guest's own: the
	// same in a replay.
	detcore.FilterTracer
}

// tracer logs every answer the host gives the engine. The engine asks in
// a deterministic order, so replay can give the same answers back.
type tracer struct {
	HostTracer
	detcore.Actions // of the HostTracer: nothing to keep
	r               *Recorder
}

func (t *tracer) answer(q int, key uint64, res int64, mem []trace.MemWrite) {
	t.r.append(&trace.Event{Kind: trace.KindSyscall, External: true, Sysno: int32(-q), Digest: key, Result: res, Mem: mem})
}

func (t *tracer) answerErr(q int, key uint64, err error, data []byte) {
	res, msg := errorCode(err)
	if err == nil && data != nil {
		t.answer(q, key, res, []trace.MemWrite{{Data: data}})
		return
	}
	var mem []trace.MemWrite
	if msg != nil {
		mem = []trace.MemWrite{{Data: msg}}
	}
	t.answer(q, key, res, mem)
}

// Wait reports a recording failure (a full disk) as the run's error.
func (t *tracer) Wait() (detcore.Stop, error) {
	if err := t.r.failed(); err != nil {
		return detcore.Stop{}, err
	}
	return t.HostTracer.Wait()
}

// kindClasser is implemented by tracers that tell a descriptor's FdKind
// and FdClass in one look (detcore/ptrace).
type kindClasser interface {
	FdKindClass(tid, fd int, class bool) (detcore.FdKind, ptrace.FdClass)
}

func (t *tracer) FdKind(tid, fd int) detcore.FdKind {
	var k detcore.FdKind
	if kc, ok := t.HostTracer.(kindClasser); ok {
		// The call asking is about to run: keep its class for Native.
		var c ptrace.FdClass
		k, c = kc.FdKindClass(tid, fd, true)
		t.r.known = knownClass{tid: tid, fd: fd, class: c, valid: true, kind: k, hasKind: true}
	} else {
		k = t.HostTracer.FdKind(tid, fd)
	}
	t.answer(QueryFdKind, uint64(fd), int64(k), nil)
	return k
}

func (t *tracer) PipeSpace(tid, fd int) int {
	n := t.HostTracer.PipeSpace(tid, fd)
	t.answer(QueryPipeSpace, uint64(fd), int64(n), nil)
	return n
}

func (t *tracer) Poll(ws []detcore.FdWait, timeout time.Duration) ([]bool, error) {
	if timeout == detcore.ProbeOnly {
		return t.HostTracer.Poll(ws, 0)
	}
	ready, err := t.HostTracer.Poll(ws, timeout)
	if err != nil {
		t.answerErr(QueryPoll, PollKey(ws), err, nil)
		return ready, err
	}
	res, mem := EncodePoll(ready)
	t.answer(QueryPoll, PollKey(ws), res, mem)
	return ready, nil
}

// WaitSignals keeps a waiting thread's pending signals each time the
// engine looks (detcore.WaitSignalsTracer): a signal from outside (a kill,
// ^C at a terminal hermit shares) becomes pending when it comes, and a
// replay sends it where its answer first shows it.
func (t *tracer) WaitSignals(tid int, drop uint64) (own, shared, blocked uint64, err error) {
	own, shared, blocked, err = t.HostTracer.Signals(tid)
	own &^= drop
	t.answerErr(QuerySignals, 0, err, EncodeSignals(own, shared, blocked))
	return own, shared, blocked, err
}

func (t *tracer) Statx(tid int, req detcore.StatReq) (detcore.StatxBuf, string, error) {
	st, found, err := t.HostTracer.Statx(tid, req)
	if errors.Is(err, detcore.ErrNotEmulated) && path.IsAbs(req.Path) {
		// The guest's call runs natively, in replay too.
		t.r.captureProcLink(tid, req.Path)
	}
	// The answer is the struct statx, then the path the host found
	// (journal version 16), which replay gives the engine again.
	t.answerErr(QueryStatx, StringKey(req.Path, uint64(req.Dirfd)<<32|uint64(req.Flags)), err, append(st[:len(st):len(st)], found...))
	return st, found, err
}

func (t *tracer) OpenDir(tid, fd int) (detcore.DirHandle, error) {
	h, err := t.HostTracer.OpenDir(tid, fd)
	if err != nil {
		t.answerErr(QueryOpenDir, uint64(fd), err, nil)
		return nil, err
	}
	t.answerErr(QueryOpenDir, uint64(fd), nil, EncodeFileID(h.ID()))
	return &dirHandle{DirHandle: h, t: t, fd: fd}, nil
}

type dirHandle struct {
	detcore.DirHandle
	t  *tracer
	fd int
}

func (d *dirHandle) ReadAll() ([]detcore.DirEntry, error) {
	ents, err := d.DirHandle.ReadAll()
	if err != nil {
		d.t.answerErr(QueryReadDir, uint64(d.fd), err, nil)
		return nil, err
	}
	d.t.answer(QueryReadDir, uint64(d.fd), int64(len(ents)), []trace.MemWrite{{Data: EncodeDir(ents)}})
	return ents, nil
}

func (t *tracer) FdPath(tid, fd int) (string, error) {
	p, err := t.HostTracer.FdPath(tid, fd)
	t.answerErr(QueryFdPath, uint64(fd), err, []byte(p))
	return p, err
}

func (t *tracer) ReadFd(tid, fd int) ([]byte, int64, error) {
	b, off, err := t.HostTracer.ReadFd(tid, fd)
	if err != nil {
		t.answerErr(QueryReadFd, uint64(fd), err, nil)
		return b, off, err
	}
	t.answer(QueryReadFd, uint64(fd), off, []trace.MemWrite{{Data: append([]byte{}, b...)}})
	return b, off, nil
}

func (t *tracer) InBackground(tid int) bool {
	tt, ok := t.HostTracer.(detcore.TtyTracer)
	bg := ok && tt.InBackground(tid)
	res := int64(0)
	if bg {
		res = 1
	}
	t.answer(QueryBackground, 0, res, nil)
	return bg
}

func (t *tracer) InternalPipe(tid, fd int) bool {
	pt, ok := t.HostTracer.(detcore.FastPipeTracer)
	return t.answerBool(QueryPipe, fd, ok && pt.InternalPipe(tid, fd))
}

// answerBool keeps a yes-or-no answer about descriptor fd.
func (t *tracer) answerBool(q, fd int, yes bool) bool {
	res := int64(0)
	if yes {
		res = 1
	}
	t.answer(q, uint64(fd), res, nil)
	return yes
}

func (t *tracer) FdAccessMode(tid, fd int) int {
	m := -1
	if am, ok := t.HostTracer.(detcore.AccessModeTracer); ok {
		m = am.FdAccessMode(tid, fd)
	}
	t.answer(QueryAccessMode, uint64(fd), int64(m), nil)
	return m
}

func (t *tracer) WaitsOutside(ws []detcore.FdWait) bool {
	ot, ok := t.HostTracer.(detcore.OutsideTracer)
	out := ok && ot.WaitsOutside(ws)
	res := int64(0)
	if out {
		res = 1
	}
	t.answer(QueryOutside, PollKey(ws), res, nil)
	return out
}

// WriteEnd forwards detcore.PartWriteTracer, and keeps the answer.
func (t *tracer) WriteEnd(tid, fd int) detcore.WriteEnd {
	end := detcore.WriteUnknown
	if pw, ok := t.HostTracer.(detcore.PartWriteTracer); ok {
		end = pw.WriteEnd(tid, fd)
	}
	t.answer(QueryWriteEnd, uint64(fd), int64(end), nil)
	return end
}

// SetNonblock forwards detcore.PartWriteTracer: an action on a pipe or
// socket the guest holds, whose answer replay need not know (its own
// takes the same parts).
func (t *tracer) SetNonblock(tid, fd int, on bool) error {
	pw, ok := t.HostTracer.(detcore.PartWriteTracer)
	if !ok {
		return detcore.ErrNotEmulated
	}
	return pw.SetNonblock(tid, fd, on)
}

// PseudoDev forwards detcore.PseudoDevTracer, and keeps the answer: a
// replay's machine may number its internal filesystems otherwise.
func (t *tracer) PseudoDev(kind string) (uint64, bool) {
	dev, ok := t.HostTracer.PseudoDev(kind)
	res := int64(dev)
	if !ok {
		res = -1
	}
	t.answer(QueryPseudoDev, StringKey(kind, 0), res, nil)
	return dev, ok
}

// SockTimeout forwards detcore.SockTimeoutTracer, and keeps the answer:
// a replay's socket may be a stand-in.
func (t *tracer) SockTimeout(tid, fd int, send bool) (time.Duration, bool) {
	d, ok := t.HostTracer.SockTimeout(tid, fd, send)
	res := int64(d)
	if !ok {
		res = -1
	}
	t.answer(QuerySockTimeout, SockTimeoutKey(fd, send), res, nil)
	return d, ok
}

// SockTimeoutKey is a QuerySockTimeout's digest.
func SockTimeoutKey(fd int, send bool) uint64 {
	k := uint64(fd) * 2
	if send {
		k++
	}
	return k
}

// CallOutput implements detcore.OutputTracer: it reads the guest's memory,
// and keeps what it read.
func (t *tracer) CallOutput(tid int, addr uint64, b []byte) error {
	err := t.HostTracer.ReadMem(tid, addr, b)
	t.answerErr(QueryCallOutput, uint64(len(b)), err, b)
	return err
}
