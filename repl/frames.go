package repl

import (
	"fmt"
	"strconv"

	"github.com/hermitdbg/hermit/repl/debuginfo"
)

// Frames: print, x and list look at one frame of the current thread's
// stack. By default it is the innermost frame of the program's own code
// (one stopped in the C library or Go's runtime is looked at where its
// code called them); frame, up and down choose another, until the replay
// or the current thread moves.

// frameChoice is a frame chosen with frame, up or down, at a stop of a
// thread.
type frameChoice struct {
	at  Stop
	tid int
	n   int
}

// selectedFrame returns the index in frames of the frame the commands
// look at.
func (r *REPL) selectedFrame(tid int, frames []debuginfo.Frame) int {
	if c := r.frameSel; c != nil && c.at == r.s.Where() && c.tid == tid && c.n < len(frames) {
		return c.n
	}
	for i, f := range frames {
		if !libraryFrame(f) {
			return i
		}
	}
	i, _ := withSource(frames)
	return i
}

// withSource returns the innermost of frames that has a source line (0,
// false if none has).
func withSource(frames []debuginfo.Frame) (int, bool) {
	for i, f := range frames {
		if f.Location.File != "" {
			return i, true
		}
	}
	return 0, false
}

// frameScope is where frame i of frames looks names up.
func frameScope(g *Regs, frames []debuginfo.Frame, i int) debuginfo.Scope {
	f := frames[i]
	sc := debuginfo.Scope{PC: f.PC, CFA: f.CFA, Regs: debuginfoRegs(g).All}
	if i > 0 {
		// A return address: the call is the byte before. Its registers
		// are those the unwinder restored (the callee-saved ones), and
		// the CFA; without a restored rbp, a frame pointer frame has it
		// 16 bytes below, as clang's locals need.
		sc.PC--
		sc.Regs, sc.Known, sc.Outer = f.Regs, f.Known, true
		if f.Known&(1<<6) == 0 {
			sc.Regs[6] = f.CFA - 16
		}
		sc.Regs[7] = f.CFA
	}
	return sc
}

// currentFrames returns the current thread, its registers, its process's
// symbols and its stack.
func (r *REPL) currentFrames() (Thread, Regs, *debuginfo.Space, []debuginfo.Frame, error) {
	th, sp, err := r.current()
	if err != nil {
		return th, Regs{}, nil, nil, err
	}
	g, frames, err := r.stackOf(th, sp)
	return th, g, sp, frames, err
}

// stackOf returns thread th's registers and stack; sp is its process's
// symbols.
func (r *REPL) stackOf(th Thread, sp *debuginfo.Space) (Regs, []debuginfo.Frame, error) {
	g, err := r.s.Regs(th.Tid)
	if err != nil {
		return g, nil, err
	}
	return g, sp.Backtrace(debuginfoRegs(&g), r.mem(th.Tid), 64), nil
}

// cmdFrame shows the selected frame, or selects frame N.
func (r *REPL) cmdFrame(args []string) error {
	if err := wantArgs("frame", args, 0, 1); err != nil {
		return err
	}
	th, _, _, frames, err := r.currentFrames()
	if err != nil {
		return err
	}
	n := r.selectedFrame(th.Tid, frames)
	if len(args) == 1 {
		if n, err = strconv.Atoi(args[0]); err != nil || n < 0 {
			return fmt.Errorf("frame: %q is not a frame number", args[0])
		}
	}
	return r.selectFrame(th.Tid, frames, n)
}

// cmdUp and cmdDown move the selection N frames out or in.
func (r *REPL) cmdUp(args []string) error   { return r.moveFrame("up", args, 1) }
func (r *REPL) cmdDown(args []string) error { return r.moveFrame("down", args, -1) }

func (r *REPL) moveFrame(name string, args []string, dir int) error {
	n := 1
	if len(args) > 0 {
		var err error
		if n, err = count(name, args); err != nil {
			return err
		}
	}
	th, _, _, frames, err := r.currentFrames()
	if err != nil {
		return err
	}
	to := r.selectedFrame(th.Tid, frames) + dir*n
	switch {
	case to < 0:
		return fmt.Errorf("%s: the innermost frame is selected already", name)
	case to >= len(frames):
		return fmt.Errorf("%s: the outermost frame is #%d", name, len(frames)-1)
	}
	return r.selectFrame(th.Tid, frames, to)
}

// selectFrame makes frame n the one the commands look at, and shows it.
func (r *REPL) selectFrame(tid int, frames []debuginfo.Frame, n int) error {
	if n >= len(frames) {
		return fmt.Errorf("frame: the stack of thread %d has frames #0 to #%d", tid, len(frames)-1)
	}
	r.frameSel = &frameChoice{at: r.s.Where(), tid: tid, n: n}
	f := frames[n]
	r.printf("#%-2d %#x %s\n", n, f.PC, f.Location.String())
	return nil
}

// evalVar evaluates expr (debuginfo.Eval) in the frame the commands look
// at: its locals, then the globals. It returns the value, the process's
// symbols and its memory.
func (r *REPL) evalVar(expr string) (debuginfo.Var, *debuginfo.Space, debuginfo.Mem, error) {
	th, g, sp, frames, err := r.currentFrames()
	if err != nil {
		return debuginfo.Var{}, nil, nil, err
	}
	v, mem, err := r.evalIn(expr, th.Tid, &g, sp, frames)
	return v, sp, mem, err
}

// evalIn evaluates expr in thread tid's frame that the commands look at
// (the innermost of the program's own code unless one was chosen at this
// stop), of frames, its stack; it returns the value and tid's memory.
func (r *REPL) evalIn(expr string, tid int, g *Regs, sp *debuginfo.Space, frames []debuginfo.Frame) (debuginfo.Var, debuginfo.Mem, error) {
	mem := r.mem(tid)
	lookup := func(name string) (debuginfo.Var, error) { return r.lookupLocal(sp, name, tid, g, frames, mem) }
	v, err := debuginfo.Eval(expr, lookup, mem)
	return v, mem, err
}
