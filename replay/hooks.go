package replay

import (
	"os"

	"github.com/hermitdbg/hermit/detcore"
)

// Hooks are what a Session puts into a run: a layer between the engine and
// the tracer (breakpoints, watchpoints, single-steps) and a callback at
// every event boundary. Both run on the run's own goroutine, the only one
// that may touch the guest.
type Hooks struct {
	// Wrap, when set, returns the Tracer the engine drives, given the one
	// that reaches the guest. The result must also implement every
	// optional tracer interface (detcore.FileTracer, detcore.ProcTracer)
	// that its argument implements, by forwarding.
	Wrap func(detcore.Tracer) detcore.Tracer
	// OnEvent, when set, is called when the run reaches event n of the
	// trace (n counts from 0), before the engine acts on it: the thread
	// that owns the event is stopped, and so is every other guest thread.
	OnEvent func(n uint64)
	// Stdout and Stderr, when set, are where the guest's output goes,
	// rather than where the Starter's options send it.
	Stdout, Stderr *os.File
}

// A Runner is one started run of a trace, stopped before its first
// instruction.
type Runner interface {
	// Run drives the guest to its end. It must be called from the
	// goroutine (locked to its OS thread) that called the Starter.
	Run() (detcore.Result, error)
	// Engine is the run's scheduler, for Threads; use it only from hooks.
	Engine() *detcore.Engine
	// Kill ends the guest at once; Run then returns.
	Kill()
}

// A Starter launches a fresh run of the same recording with the given
// hooks. Every run it starts is identical: same threads, same tids, same
// addresses, same events.
type Starter func(h Hooks) (Runner, error)
