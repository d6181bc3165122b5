package repl

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hermitdbg/hermit/repl/debuginfo"
)

// Symbols, source lines, backtraces and disassembly, from the recorded
// files (repl/debuginfo). Each process's address space is read again when
// its mappings change (an exec, a library loaded).

// procSymbols is one process's address space as last seen.
type procSymbols struct {
	maps  string
	space *debuginfo.Space
}

// space returns process pid's symbols, nil when its mappings cannot be
// read (it has ended).
func (r *REPL) space(pid int) *debuginfo.Space {
	maps, err := r.s.Maps(pid)
	if err != nil {
		return nil
	}
	if ps := r.syms[pid]; ps != nil && ps.maps == maps {
		r.lastSpace = ps.space
		return ps.space
	}
	sp := debuginfo.NewSpace(debuginfo.ParseMaps(maps), func(path string) (io.ReaderAt, int64, error) { return r.s.Open(path) })
	r.syms[pid] = &procSymbols{maps: maps, space: sp}
	r.lastSpace = sp
	return sp
}

// symbols returns the current process's symbols, for naming code and
// globals. Once the recording has ended no process is left: those of
// the one last looked at still name them, so that a breakpoint or a
// watchpoint set at the end (a Go panic's, an exit's) is there to go
// back to, as in rr.
func (r *REPL) symbols() (*debuginfo.Space, error) {
	_, sp, err := r.current()
	if err != nil && r.lastSpace != nil && len(r.s.Threads()) == 0 {
		return r.lastSpace, nil
	}
	return sp, err
}

// current returns the current thread and its process's symbols.
func (r *REPL) current() (Thread, *debuginfo.Space, error) {
	th, err := r.thread()
	if err != nil {
		return th, nil, err
	}
	sp := r.space(th.Pid)
	if sp == nil {
		return th, nil, fmt.Errorf("process %d has no mappings to read symbols from", th.Pid)
	}
	return th, sp, nil
}

// mem reads thread tid's memory, for debuginfo.
func (r *REPL) mem(tid int) debuginfo.Mem {
	return func(addr uint64, b []byte) (int, error) { return r.s.ReadMem(tid, addr, b) }
}

// symbol is what lookupSymbol finds.
type symbol struct {
	addr uint64
	size int
	v    debuginfo.Var
}

// lookupSymbol finds a function or variable of the current process.
func (r *REPL) lookupSymbol(name string) (symbol, error) {
	sp, err := r.symbols()
	if err != nil {
		return symbol{}, err
	}
	v, err := sp.Lookup(name)
	if err != nil {
		return symbol{}, err
	}
	return symbol{addr: v.Addr, size: int(v.Size), v: v}, nil
}

// afterPrologue is where a function breakpoint goes: its first line
// after the one of its entry, when the line table says, as gdb's break.
func (r *REPL) afterPrologue(addr uint64) uint64 {
	sp, err := r.symbols()
	if err != nil {
		return addr
	}
	return sp.AfterPrologue(addr)
}

// describePC describes a code address of the current process, as
// " <func+off> at file:line", or "".
func (r *REPL) describePC(pc uint64) string {
	th, err := r.thread()
	if err != nil {
		return ""
	}
	return r.describePCIn(th.Pid, pc)
}

func (r *REPL) describePCIn(pid int, pc uint64) string {
	sp := r.space(pid)
	if sp == nil {
		return ""
	}
	loc, ok := sp.Symbol(pc)
	if !ok {
		return ""
	}
	return " " + loc.String()
}

// symbolNames lists the current process's function names, for completion.
func (r *REPL) symbolNames() []string {
	_, sp, err := r.current()
	if err != nil {
		return nil
	}
	return sp.Names()
}

func (r *REPL) completeSymbol(args []string) []string {
	if len(args) > 0 {
		return nil
	}
	return r.symbolNames()
}

// completeVariable offers the locals of the current frame (userScope),
// then the globals, then the functions.
func (r *REPL) completeVariable(args []string) []string {
	if len(args) > 0 {
		return nil
	}
	th, g, sp, frames, err := r.currentFrames()
	if sp == nil {
		return nil
	}
	var names []string
	if sc, ok := r.userScope(th.Tid, &g, frames); ok && err == nil {
		names = sp.LocalNames(sc, r.mem(th.Tid))
	}
	return append(append(names, sp.VarNames()...), sp.Names()...)
}

func (r *REPL) cmdDisas(args []string) error {
	if err := wantArgs("disas", args, 0, 2); err != nil {
		return err
	}
	n := 10
	var addr uint64
	if len(args) > 0 {
		var err error
		if addr, err = r.evalAddr(args[0]); err != nil {
			return fmt.Errorf("disas: %w", err)
		}
	} else {
		pc, err := r.register("pc")
		if err != nil {
			return err
		}
		addr = pc
	}
	if len(args) == 2 {
		c, err := count("disas", args[1:])
		if err != nil {
			return err
		}
		n = c
	}
	return r.disassemble(addr, n)
}

func (r *REPL) disassemble(addr uint64, n int) error {
	th, sp, err := r.current()
	if err != nil {
		return err
	}
	pc, _ := r.register("pc")
	insts := sp.Disassemble(r.mem(th.Tid), addr, n)
	if len(insts) == 0 {
		return fmt.Errorf("cannot read code at %#x", addr)
	}
	for _, in := range insts {
		mark := "  "
		if in.Addr == pc {
			mark = "=>"
		}
		r.printf("%s %#x %-22s %s\n", mark, in.Addr, fmt.Sprintf("% x", in.Bytes), in.Text)
	}
	return nil
}

func (r *REPL) cmdBacktrace(args []string) error {
	n := 64
	if len(args) > 0 {
		c, err := count("bt", args)
		if err != nil {
			return err
		}
		n = c
	}
	th, sp, err := r.current()
	if err != nil {
		return err
	}
	g, err := r.s.Regs(th.Tid)
	if err != nil {
		return err
	}
	frames := sp.Backtrace(debuginfoRegs(&g), r.mem(th.Tid), n)
	for i, f := range frames {
		r.printf("#%-2d %#x %s\n", i, f.PC, f.Location.String())
	}
	return nil
}

// sourceFrame returns the location of the frame the commands look at
// (selectedFrame), if it has a source line, else of the innermost that
// has one.
func (r *REPL) sourceFrame() (debuginfo.Location, error) {
	th, _, _, frames, err := r.currentFrames()
	if err != nil {
		return debuginfo.Location{}, err
	}
	if len(frames) > 0 {
		if f := frames[r.selectedFrame(th.Tid, frames)]; f.Location.File != "" {
			return f.Location, nil
		}
	}
	if i, ok := withSource(frames); ok {
		return frames[i].Location, nil
	}
	return debuginfo.Location{}, fmt.Errorf("no frame of thread %d has a source line (no debug information?)", th.Tid)
}

// debuginfoRegs converts the registers for unwinding.
func debuginfoRegs(g *Regs) debuginfo.Regs {
	return debuginfo.Regs{Rip: g.Rip, Rsp: g.Rsp, Rbp: g.Rbp, All: [17]uint64{
		g.Rax, g.Rdx, g.Rcx, g.Rbx, g.Rsi, g.Rdi, g.Rbp, g.Rsp,
		g.R8, g.R9, g.R10, g.R11, g.R12, g.R13, g.R14, g.R15, g.Rip,
	}}
}

func (r *REPL) cmdList(args []string) error {
	if err := wantArgs("list", args, 0, 1); err != nil {
		return err
	}
	_, sp, err := r.current()
	if err != nil {
		return err
	}
	var file string
	var line int
	if len(args) == 1 {
		if f, l, ok := strings.Cut(args[0], ":"); ok {
			if _, err := fmt.Sscan(l, &line); err != nil {
				return fmt.Errorf("list: %q is not FILE:LINE", args[0])
			}
			file = f
		} else {
			sym, err := r.lookupSymbol(args[0])
			if err != nil {
				return fmt.Errorf("list: %w", err)
			}
			loc, _ := sp.Symbol(sym.addr)
			file, line = loc.File, loc.Line
		}
	} else {
		// The innermost frame with a source line: at a syscall the pc is
		// in libc, which has none; the caller that made it has.
		loc, err := r.sourceFrame()
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		file, line = loc.File, loc.Line
	}
	lines, err := sp.SourceLines(file, line, 5, func(path string) (io.ReaderAt, int64, error) { return r.s.Open(path) })
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	// => marks the line the thread is at, if it is among them.
	here, herr := r.sourceFrame()
	for _, l := range lines {
		mark := "  "
		if herr == nil && l.Line == here.Line && (here.File == file || strings.HasSuffix(here.File, "/"+file)) {
			mark = "=>"
		}
		r.printf("%s %-5d %s\n", mark, l.Line, l.Text)
	}
	return nil
}

func (r *REPL) cmdPrint(args []string) error {
	if err := wantArgs("print", args, 1, 64); err != nil {
		return err
	}
	expr := strings.Join(args, " ")
	if strings.HasPrefix(expr, "$") || expr[0] >= '0' && expr[0] <= '9' {
		v, err := r.evalAddr(expr)
		switch {
		case err == nil:
			r.printf("%s = %#x (%d)\n", expr, v, int64(v))
			return nil
		case expr[0] == '$':
			return fmt.Errorf("print: %w", err)
		}
		// Not NUMBER[+-OFFSET]: an expression that starts with a number
		// (2 * counter).
	}
	v, sp, mem, err := r.evalVar(expr)
	if err != nil {
		return fmt.Errorf("print: %w", err)
	}
	r.printf("%s = %s\n", expr, sp.Format(v, mem))
	return nil
}

// lookupLocal finds name among the locals of the current thread's
// innermost frame of the program's own code (userScope), then among the
// globals.
func (r *REPL) lookupLocal(sp *debuginfo.Space, name string, tid int, g *Regs, frames []debuginfo.Frame, mem debuginfo.Mem) (debuginfo.Var, error) {
	if sc, ok := r.userScope(tid, g, frames); ok {
		v, err := sp.Local(name, sc, mem)
		if err == nil || !errors.Is(err, debuginfo.ErrNotFound) {
			return v, err
		}
	}
	return sp.Lookup(name)
}

// userScope is the scope of the frame the commands look at
// (selectedFrame).
func (r *REPL) userScope(tid int, g *Regs, frames []debuginfo.Frame) (debuginfo.Scope, bool) {
	if len(frames) == 0 {
		return debuginfo.Scope{}, false
	}
	return frameScope(g, frames, r.selectedFrame(tid, frames)), true
}

// libraryFrame says whether f is in code of a library rather than the
// program's: without a source line (the C library without its debug
// information), or in Go's standard library (a package path whose first
// element has no dot, but main).
func libraryFrame(f debuginfo.Frame) bool {
	if f.Location.File == "" {
		return true
	}
	fn := f.Location.Func
	if !strings.HasSuffix(f.Location.File, ".go") && !strings.HasSuffix(f.Location.File, ".s") {
		return false
	}
	if first, _, ok := strings.Cut(fn, "/"); ok {
		return !strings.Contains(first, ".") // internal/poll, not github.com/x
	}
	pkg, _, _ := strings.Cut(fn, ".")
	return pkg != "main"
}
