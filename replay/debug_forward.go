package replay

import (
	"errors"
	"time"

	"github.com/hermitdbg/hermit/detcore"
)

// The layer's forwarding of the optional tracer interfaces the engine
// asks for.

// VectorRegs and Symbolize forward detcore.SpinTracer; without it the
// engine's examination ends at once, as without the interface.
func (l *layer) VectorRegs(tid int, b []byte) ([]byte, error) {
	if st, ok := l.inner.(detcore.SpinTracer); ok {
		return st.VectorRegs(tid, b)
	}
	return nil, errNoVectorRegs
}

func (l *layer) Symbolize(tid int, addr uint64) string {
	if st, ok := l.inner.(detcore.SpinTracer); ok {
		return st.Symbolize(tid, addr)
	}
	return ""
}

var errNoVectorRegs = errors.New("the tracer cannot read vector registers")

// OwnFilter forwards detcore.FilterTracer: count mode lets a guest's own
// seccomp filter see every call.
func (l *layer) OwnFilter(tid int) {
	if ft, ok := l.inner.(detcore.FilterTracer); ok {
		ft.OwnFilter(tid)
	}
}

// Siginfo forwards detcore.SiginfoTracer (the engine asks at a SIGSYS).
func (l *layer) Siginfo(tid int) ([]byte, error) {
	if st, ok := l.inner.(SiginfoReader); ok {
		return st.Siginfo(tid)
	}
	return nil, errNoSiginfo
}

// SetSiginfo forwards detcore.SiginfoTracer (the engine hides a
// SIGCHLD's CPU times).
func (l *layer) SetSiginfo(tid int, info []byte) error {
	if st, ok := l.inner.(detcore.SiginfoTracer); ok {
		return st.SetSiginfo(tid, info)
	}
	return errNoSiginfo
}

var errNoSiginfo = errors.New("the tracer cannot read a siginfo")

// CPUTime forwards detcore.CPUTimeTracer: the watchdog's budgets count
// the running thread's CPU time, as the recording's did, not the wall
// time a loaded machine stretches (a thread the host had descheduled in
// a call was examined there, and the examination's stop interrupted the
// call, which the recording had not seen).
func (l *layer) CPUTime(pid, tid int) (time.Duration, bool) {
	if ct, ok := l.inner.(detcore.CPUTimeTracer); ok {
		return ct.CPUTime(pid, tid)
	}
	return 0, false
}

// InKernelWait forwards detcore.KernelWaitTracer: the watchdog does not
// examine a thread asleep in a call.
func (l *layer) InKernelWait(tid int) (int, bool) {
	if kt, ok := l.inner.(detcore.KernelWaitTracer); ok {
		return kt.InKernelWait(tid)
	}
	return 0, false
}

// PseudoDev forwards detcore.PseudoDevTracer: the replay's oracle
// answers from the trace, which holds the recording's question (hidden,
// a procfs link to a pipe kept the host's inode, and the replay met the
// question it did not ask).
func (l *layer) PseudoDev(kind string) (uint64, bool) {
	if pt, ok := l.inner.(detcore.PseudoDevTracer); ok {
		return pt.PseudoDev(kind)
	}
	return 0, false
}

// CallOutput forwards detcore.OutputTracer: what a natively run call
// wrote comes from the trace, as without a debugger.
func (l *layer) CallOutput(tid int, addr uint64, b []byte) error {
	if ot, ok := l.inner.(detcore.OutputTracer); ok {
		return ot.CallOutput(tid, addr, b)
	}
	return l.inner.ReadMem(tid, addr, b)
}

// FileCode forwards detcore.SpinTrapTracer: spin traps go where they
// went in the recording.
func (l *layer) FileCode(tid int, addr uint64) bool {
	if st, ok := l.inner.(detcore.SpinTrapTracer); ok {
		return st.FileCode(tid, addr)
	}
	return false
}

// SockTimeout forwards detcore.SockTimeoutTracer: a socket's wait ends
// when the recording's did.
func (l *layer) SockTimeout(tid, fd int, send bool) (time.Duration, bool) {
	if st, ok := l.inner.(detcore.SockTimeoutTracer); ok {
		return st.SockTimeout(tid, fd, send)
	}
	return 0, false
}
