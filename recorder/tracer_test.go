package recorder

import (
	"reflect"
	"testing"

	"github.com/hermitdbg/hermit/detcore/detcoretest"
	"github.com/hermitdbg/hermit/detcore/ptrace"
)

// TestTracerKeepsFeatures: the tracer a recording's engine drives offers
// every optional interface the ptrace tracer under it has. One it hid
// would change what the engine does while recording (without CPU
// times, the watchdog measured wall time, and on a loaded machine it
// stopped a thread inside a splice that a replay then made whole).
func TestTracerKeepsFeatures(t *testing.T) {
	host := reflect.TypeOf((*ptrace.Tracer)(nil))
	rec := reflect.TypeOf((&Recorder{}).Tracer((*ptrace.Tracer)(nil)))
	for _, it := range detcoretest.OptionalTracers() {
		if host.Implements(it) && !rec.Implements(it) {
			t.Errorf("the recording's tracer hides %s, which the ptrace tracer implements", it)
		}
	}
}
