package replay

import (
	"reflect"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/ptrace"
)

// TestLayerKeepsFeatures: the tracer a Session's engine drives (the
// debug layer over the replay's oracle) offers every optional interface
// the oracle has, as a replay without a debugger does: one it hid would
// change what the engine does under a debugger (without CPU times, the
// watchdog measured wall time; without kernel waits, it examined threads
// asleep in calls).
func TestLayerKeepsFeatures(t *testing.T) {
	for _, p := range []any{
		(*detcore.AccessModeTracer)(nil), (*detcore.CPUTimeTracer)(nil), (*detcore.FastPipeTracer)(nil),
		(*detcore.FifoTracer)(nil), (*detcore.FileTracer)(nil), (*detcore.KernelWaitTracer)(nil),
		(*detcore.OutsideTracer)(nil), (*detcore.PartWriteTracer)(nil), (*detcore.ProcTracer)(nil),
		(*detcore.SiginfoTracer)(nil), (*detcore.SocketTracer)(nil), (*detcore.SpinTracer)(nil),
		(*detcore.TtyTracer)(nil),
	} {
		it := reflect.TypeOf(p).Elem()
		o := &oracle{HostTracer: (*ptrace.Tracer)(nil)}
		if reflect.TypeOf(o).Implements(it) && !reflect.TypeOf(newLayer(nil, nil).wrap(o)).Implements(it) {
			t.Errorf("a Session's tracer hides %s, which the replay's oracle implements", it)
		}
	}
}
