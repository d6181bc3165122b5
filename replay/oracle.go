package replay

import (
	"errors"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/recorder"
	"github.com/hermitdbg/hermit/trace"
)

// oracle is the tracer a replay's engine drives: it answers the engine's
// questions about the outside world from the trace instead of asking the
// host, and otherwise reaches the guest.
type oracle struct {
	recorder.HostTracer
	detcore.Actions // of the HostTracer
	p               *player
	// signals: the trace keeps the guest's pending signals
	// (recorder.Settings.SignalAnswers), and send gives the guest those
	// the recording got from outside.
	signals bool
	send    func(tid, sig int, process bool) error
}

// DebugReg passes the debug registers through, for the Session.
func (o *oracle) DebugReg(tid, i int) (uint64, error) {
	d, ok := o.HostTracer.(DebugRegs)
	if !ok {
		return 0, ErrNoDebugRegs
	}
	return d.DebugReg(tid, i)
}

// SetDebugReg passes the debug registers through, for the Session.
func (o *oracle) SetDebugReg(tid, i int, v uint64) error {
	d, ok := o.HostTracer.(DebugRegs)
	if !ok {
		return ErrNoDebugRegs
	}
	return d.SetDebugReg(tid, i, v)
}

// Siginfo passes a signal stop's siginfo through, for the Session.
func (o *oracle) Siginfo(tid int) ([]byte, error) {
	f, ok := o.HostTracer.(SiginfoReader)
	if !ok {
		return nil, errors.New("the tracer cannot read siginfo")
	}
	return f.Siginfo(tid)
}

// Resume refuses to run a guest that has diverged.
func (o *oracle) Resume(tid int, mode detcore.ResumeMode, sig int) error {
	if o.p.err != nil {
		return o.p.err
	}
	return o.HostTracer.Resume(tid, mode, sig)
}

func (o *oracle) Wait() (detcore.Stop, error) {
	if o.p.err != nil {
		return detcore.Stop{}, o.p.err
	}
	return o.HostTracer.Wait()
}

func (o *oracle) FdKind(tid, fd int) detcore.FdKind {
	ev, ok := o.p.answer(recorder.QueryFdKind, uint64(fd))
	if !ok {
		return detcore.FdClosed
	}
	return detcore.FdKind(ev.Result)
}

func (o *oracle) PipeSpace(tid, fd int) int {
	ev, ok := o.p.answer(recorder.QueryPipeSpace, uint64(fd))
	if !ok {
		return -1
	}
	return int(ev.Result)
}

func (o *oracle) Poll(ws []detcore.FdWait, timeout time.Duration) ([]bool, error) {
	if timeout == detcore.ProbeOnly {
		// The guest's own descriptors are real in replay; a stand-in
		// for an external one answers as it does.
		return o.HostTracer.Poll(ws, 0)
	}
	ev, ok := o.p.answer(recorder.QueryPoll, recorder.PollKey(ws))
	if !ok {
		return nil, o.p.err
	}
	if err := o.errOf(ev.Result, ev.Mem); err != nil {
		return nil, err
	}
	return recorder.DecodePoll(len(ws), ev.Result, ev.Mem), nil
}

// WaitSignals answers from the trace what the recording's host said was
// pending at a waiting thread (detcore.WaitSignalsTracer). A signal
// pending there and not here came from outside the recording's guest (a
// kill, a ^C): it is sent now, where the recording's engine first saw it,
// so that the kernel delivers it as it did there.
func (o *oracle) WaitSignals(tid int, drop uint64) (own, shared, blocked uint64, err error) {
	if !o.signals {
		own, shared, blocked, err = o.HostTracer.Signals(tid)
		return own &^ drop, shared, blocked, err
	}
	b, _, err := o.data(recorder.QuerySignals, 0)
	if err != nil {
		return 0, 0, 0, err
	}
	if own, shared, blocked, err = recorder.DecodeSignals(b); err != nil {
		o.p.diverge(0, "%v", err)
		return 0, 0, 0, o.p.err
	}
	hown, hshared, _, herr := o.HostTracer.Signals(tid)
	if herr != nil || o.send == nil {
		return own, shared, blocked, nil
	}
	for sig := 1; sig <= 64; sig++ {
		bit := uint64(1) << (sig - 1)
		switch {
		case outsideSignals&bit == 0 || (hown|hshared)&bit != 0:
		case own&bit != 0:
			_ = o.send(tid, sig, false)
		case shared&bit != 0:
			_ = o.send(tid, sig, true)
		}
	}
	return own, shared, blocked, nil
}

// outsideSignals are the signals a replay sends where its recording's
// engine found one pending that this one does not: those users, shells
// and supervisors send. The guest's own (a kill between its processes)
// are pending here too when the engine looks; the kernel's and hermit's
// (SIGCHLD, job control, a ptrace stop, a timer's) may come a moment
// later than in the recording, and are not sent twice.
const outsideSignals = 1<<(abi.SIGHUP-1) | 1<<(abi.SIGINT-1) | 1<<(abi.SIGQUIT-1) | 1<<(abi.SIGUSR1-1) |
	1<<(abi.SIGUSR2-1) | 1<<(abi.SIGTERM-1) | 0xfffffffe<<32 // SIGRTMIN+2 to SIGRTMAX: not glibc's own

// errOf decodes an answer's error.
func (o *oracle) errOf(res int64, mem []trace.MemWrite) error {
	var msg []byte
	if len(mem) > 0 {
		msg = mem[0].Data
	}
	return recorder.ErrorOf(res, msg)
}

func (o *oracle) data(q int, key uint64) ([]byte, int64, error) {
	ev, ok := o.p.answer(q, key)
	if !ok {
		return nil, 0, o.p.err
	}
	if err := o.errOf(ev.Result, ev.Mem); err != nil {
		return nil, ev.Result, err
	}
	var b []byte
	if len(ev.Mem) > 0 {
		b = append([]byte(nil), ev.Mem[0].Data...)
	}
	return b, ev.Result, nil
}

func (o *oracle) Statx(tid int, req detcore.StatReq) (detcore.StatxBuf, string, error) {
	var st detcore.StatxBuf
	b, _, err := o.data(recorder.QueryStatx, recorder.StringKey(req.Path, uint64(req.Dirfd)<<32|uint64(req.Flags)))
	n := copy(st[:], b)
	// After the struct, the path the recording's host found, if it did
	// (traces of journal version 16).
	return st, string(b[n:]), err
}

func (o *oracle) OpenDir(tid, fd int) (detcore.DirHandle, error) {
	b, _, err := o.data(recorder.QueryOpenDir, uint64(fd))
	if err != nil {
		return nil, err
	}
	id, err := recorder.DecodeFileID(b)
	if err != nil {
		return nil, o.p.diverge(0, "corrupt directory answer: %v", err)
	}
	// The rebuilt directory's own descriptor keeps the guest's offset.
	h, herr := o.HostTracer.OpenDir(tid, fd)
	return &dirHandle{o: o, fd: fd, id: id, real: h, realErr: herr}, nil
}

type dirHandle struct {
	o       *oracle
	fd      int
	id      detcore.FileID
	real    detcore.DirHandle
	realErr error
}

func (d *dirHandle) ID() detcore.FileID { return d.id }

func (d *dirHandle) Offset() (int64, error) {
	if d.real == nil {
		return 0, d.realErr
	}
	return d.real.Offset()
}

func (d *dirHandle) SetOffset(off int64) error {
	if d.real == nil {
		return d.realErr
	}
	return d.real.SetOffset(off)
}

func (d *dirHandle) Close() error {
	if d.real == nil {
		return nil
	}
	return d.real.Close()
}

func (d *dirHandle) ReadAll() ([]detcore.DirEntry, error) {
	b, _, err := d.o.data(recorder.QueryReadDir, uint64(d.fd))
	if err != nil {
		return nil, err
	}
	ents, err := recorder.DecodeDir(b)
	if err != nil {
		return nil, d.o.p.diverge(0, "corrupt directory listing in the trace")
	}
	return ents, nil
}

func (o *oracle) FdPath(tid, fd int) (string, error) {
	b, _, err := o.data(recorder.QueryFdPath, uint64(fd))
	return string(b), err
}

func (o *oracle) ReadFd(tid, fd int) ([]byte, int64, error) {
	b, off, err := o.data(recorder.QueryReadFd, uint64(fd))
	if err != nil {
		return nil, 0, err
	}
	return b, off, nil
}

func (o *oracle) InBackground(tid int) bool {
	ev, ok := o.p.answer(recorder.QueryBackground, 0)
	return ok && ev.Result == 1
}

func (o *oracle) FdAccessMode(tid, fd int) int {
	ev, ok := o.p.answer(recorder.QueryAccessMode, uint64(fd))
	if !ok {
		return -1
	}
	return int(ev.Result)
}

func (o *oracle) InternalPipe(tid, fd int) bool {
	ev, ok := o.p.answer(recorder.QueryPipe, uint64(fd))
	return ok && ev.Result == 1
}

func (o *oracle) WaitsOutside(ws []detcore.FdWait) bool {
	ev, ok := o.p.answer(recorder.QueryOutside, recorder.PollKey(ws))
	return ok && ev.Result == 1
}

func (o *oracle) WriteEnd(tid, fd int) detcore.WriteEnd {
	ev, ok := o.p.answer(recorder.QueryWriteEnd, uint64(fd))
	if !ok {
		return detcore.WriteUnknown
	}
	return detcore.WriteEnd(ev.Result)
}

// SetNonblock forwards detcore.PartWriteTracer to the guest's pipe or
// socket, which replay has as the recording had it.
func (o *oracle) SetNonblock(tid, fd int, on bool) error {
	pw, ok := o.HostTracer.(detcore.PartWriteTracer)
	if !ok {
		return detcore.ErrNotEmulated
	}
	return pw.SetNonblock(tid, fd, on)
}

func (o *oracle) PseudoDev(kind string) (uint64, bool) {
	ev, ok := o.p.answer(recorder.QueryPseudoDev, recorder.StringKey(kind, 0))
	if !ok || ev.Result < 0 {
		return 0, false
	}
	return uint64(ev.Result), true
}

func (o *oracle) SockTimeout(tid, fd int, send bool) (time.Duration, bool) {
	ev, ok := o.p.answer(recorder.QuerySockTimeout, recorder.SockTimeoutKey(fd, send))
	if !ok || ev.Result < 0 {
		return 0, false
	}
	return time.Duration(ev.Result), true
}

func (o *oracle) CallOutput(tid int, addr uint64, b []byte) error {
	data, _, err := o.data(recorder.QueryCallOutput, uint64(len(b)))
	if err != nil {
		return err
	}
	if len(data) != len(b) {
		return o.p.diverge(0, "corrupt call output: %d bytes, want %d", len(data), len(b))
	}
	copy(b, data)
	return nil
}
