package recorder

import (
	"errors"

	"github.com/hermitdbg/hermit/detcore"
)

var errNoSockets = errors.New("the tracer cannot look at sockets")

// SocketName passes detcore.SocketTracer through unrecorded: the engine
// asks it only to virtualize ports, about calls whose results the trace
// keeps after the rewriting (detcore/ports.go), and replay, which emulates
// those calls, never asks it.
func (t *tracer) SocketName(tid, fd int, peer bool) (int, []byte, error) {
	st, ok := t.HostTracer.(detcore.SocketTracer)
	if !ok {
		return 0, nil, errNoSockets
	}
	return st.SocketName(tid, fd, peer)
}

var _ detcore.SocketTracer = (*tracer)(nil)
