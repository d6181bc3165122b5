package detcoretest

import (
	"reflect"

	"github.com/hermitdbg/hermit/detcore"
)

// OptionalTracers returns the interfaces the engine finds on its tracer
// by type assertion, each a feature it uses when it can: a tracer that
// wraps another (a recording's, a debugger's) must offer each one the
// wrapped tracer has, or the engine behaves otherwise under it.
// (LoopbackTracer is left out: it only words a warning of hermit run's,
// which a recording, keeping what came, does not give.)
func OptionalTracers() []reflect.Type {
	return []reflect.Type{
		reflect.TypeFor[detcore.AccessModeTracer](),
		reflect.TypeFor[detcore.CPUTimeTracer](),
		reflect.TypeFor[detcore.FastPipeTracer](),
		reflect.TypeFor[detcore.FifoTracer](),
		reflect.TypeFor[detcore.FileTracer](),
		reflect.TypeFor[detcore.KernelWaitTracer](),
		reflect.TypeFor[detcore.MaskTracer](),
		reflect.TypeFor[detcore.OutputTracer](),
		reflect.TypeFor[detcore.OutsideTracer](),
		reflect.TypeFor[detcore.PartWriteTracer](),
		reflect.TypeFor[detcore.ProcTracer](),
		reflect.TypeFor[detcore.PseudoDevTracer](),
		reflect.TypeFor[detcore.PtyTracer](),
		reflect.TypeFor[detcore.SiginfoTracer](),
		reflect.TypeFor[detcore.SockTimeoutTracer](),
		reflect.TypeFor[detcore.SocketTracer](),
		reflect.TypeFor[detcore.SpinTracer](),
		reflect.TypeFor[detcore.SpinTrapTracer](),
		reflect.TypeFor[detcore.TtyTracer](),
		reflect.TypeFor[detcore.WaitSignalsTracer](),
	}
}
