package recorder

import (
	"reflect"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/ptrace"
)

// optionalTracers are the interfaces the engine finds on its tracer by
// type assertion, each a feature it uses when it can.
var optionalTracers = []any{
	(*detcore.AccessModeTracer)(nil),
	(*detcore.CPUTimeTracer)(nil),
	(*detcore.FastPipeTracer)(nil),
	(*detcore.FifoTracer)(nil),
	(*detcore.FileTracer)(nil),
	(*detcore.KernelWaitTracer)(nil),
	(*detcore.OutsideTracer)(nil),
	(*detcore.PartWriteTracer)(nil),
	(*detcore.ProcTracer)(nil),
	(*detcore.SiginfoTracer)(nil),
	(*detcore.SocketTracer)(nil),
	(*detcore.SpinTracer)(nil),
	(*detcore.TtyTracer)(nil),
}

// TestTracerKeepsFeatures: the tracer a recording's engine drives offers
// every optional interface the ptrace tracer under it has. One it hid
// would change what the engine does while recording (without CPU
// times, the watchdog measured wall time, and on a loaded machine it
// stopped a thread inside a splice that a replay then made whole).
func TestTracerKeepsFeatures(t *testing.T) {
	host := reflect.TypeOf((*ptrace.Tracer)(nil))
	rec := reflect.TypeOf((&Recorder{}).Tracer((*ptrace.Tracer)(nil)))
	for _, p := range optionalTracers {
		it := reflect.TypeOf(p).Elem()
		if host.Implements(it) && !rec.Implements(it) {
			t.Errorf("the recording's tracer hides %s, which the ptrace tracer implements", it)
		}
	}
}
