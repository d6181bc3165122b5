package replay

import (
	"reflect"
	"testing"

	"github.com/hermitdbg/hermit/detcore/detcoretest"
	"github.com/hermitdbg/hermit/detcore/ptrace"
)

// TestLayerKeepsFeatures: the tracer a Session's engine drives (the
// debug layer over the replay's oracle) offers every optional interface
// the oracle has, as a replay without a debugger does: one it hid would
// change what the engine does under a debugger (without CPU times, the
// watchdog measured wall time; without kernel waits, it examined threads
// asleep in calls).
func TestLayerKeepsFeatures(t *testing.T) {
	o := &oracle{HostTracer: (*ptrace.Tracer)(nil)}
	layer := reflect.TypeOf(newLayer(nil, nil).wrap(o))
	for _, it := range detcoretest.OptionalTracers() {
		if reflect.TypeOf(o).Implements(it) && !layer.Implements(it) {
			t.Errorf("a Session's tracer hides %s, which the replay's oracle implements", it)
		}
	}
}
