package replay

import "math/bits"

// What a SIGTRAP means to the debug layer (debug.go): its debug
// registers and the bytes around the instruction pointer tell.

// trapFacts are what classifyTrap needs to know about a SIGTRAP.
type trapFacts struct {
	dr6 uint64
	// watching has bit n set for each watchpoint slot in use.
	watching uint64
	// ourStep: the layer, or the engine (a spin examination), resumed the
	// thread with a step.
	ourStep bool
	// stepOver: the thread was stepping over one of our breakpoints;
	// overInt3: whose original instruction is itself an int3.
	stepOver, overInt3 bool
	// inSyscall: the step began inside a syscall or delivered a signal,
	// so its end is reported without DR6.BS.
	inSyscall bool
}

// trapClass is what a SIGTRAP means to the layer.
type trapClass struct {
	step  bool // an instruction the layer stepped has completed
	brk   bool // the thread executed one of our int3s
	watch int  // the watchpoint slot that triggered, or -1
}

func (c trapClass) ours() bool { return c.step || c.brk || c.watch >= 0 }

// classifyTrap tells what a SIGTRAP means. look, called only when the
// debug registers do not tell, reports whether the two bytes before the
// instruction pointer are a syscall instruction and whether the byte
// before it is the int3 of one of our breakpoints.
func classifyTrap(f trapFacts, look func() (afterSyscall, atBreak bool)) trapClass {
	c := trapClass{watch: -1}
	if hit := f.dr6 & f.watching & dr6TrapBits; hit != 0 {
		c.watch = bits.TrailingZeros64(hit)
	}
	bs := f.dr6&dr6Step != 0
	switch {
	case f.stepOver:
		// Any trap ends the step over a breakpoint, unless the instruction
		// stepped was an int3 of the guest's own.
		c.step = bs || c.watch >= 0 || !f.overInt3
		return c
	case f.ourStep && (bs || f.inSyscall):
		c.step = true
		return c
	case c.watch >= 0:
		return c
	}
	// An int3 trap leaves DR6 alone: whatever BS says (a single-step the
	// guest set up itself), the byte before the pointer decides.
	afterSyscall, atBreak := look()
	switch {
	case atBreak:
		c.brk = true
	case f.ourStep && afterSyscall:
		// A step over a syscall instruction the filter let through.
		c.step = true
	}
	return c
}
