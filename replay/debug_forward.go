package replay

import (
	"errors"

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
