package repl

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/repl/debuginfo"
)

// Looking at the stop: threads, registers, memory, descriptors.

func (r *REPL) cmdInfo(args []string) error {
	if err := wantArgs("info", args, 1, 1); err != nil {
		return err
	}
	switch what := args[0]; {
	case strings.HasPrefix("threads", what):
		return r.infoThreads()
	case strings.HasPrefix("regs", what) || what == "registers":
		return r.infoRegs()
	case strings.HasPrefix("maps", what):
		return r.infoMaps()
	case strings.HasPrefix("fds", what):
		return r.infoFds()
	case strings.HasPrefix("breakpoints", what):
		return r.infoBreakpoints()
	case strings.HasPrefix("process", what):
		return r.infoProcess()
	case strings.HasPrefix("checkpoints", what) && len(what) > 1:
		return r.infoCheckpoints()
	}
	return fmt.Errorf("info: %q: want threads, regs, maps, fds, breakpoints, process or checkpoints", args[0])
}

func (r *REPL) infoThreads() error {
	cur, err := r.thread()
	if err != nil {
		return err
	}
	for _, t := range r.s.Threads() {
		mark := " "
		if t.Tid == cur.Tid {
			mark = "*"
		}
		where := ""
		if regs, err := r.s.Regs(t.Tid); err == nil {
			where = fmt.Sprintf("  %#x%s", regs.Rip, r.describePCIn(t.Pid, regs.Rip))
		}
		r.printf("%s tid %-6d pid %-6d %-16s %s%s\n", mark, t.Tid, t.Pid, t.Name, t.State, where)
	}
	return nil
}

// regNames are the registers in `info regs` order, with their values.
func regList(g *Regs) []struct {
	name string
	v    uint64
} {
	return []struct {
		name string
		v    uint64
	}{
		{"rax", g.Rax}, {"rbx", g.Rbx}, {"rcx", g.Rcx}, {"rdx", g.Rdx},
		{"rsi", g.Rsi}, {"rdi", g.Rdi}, {"rbp", g.Rbp}, {"rsp", g.Rsp},
		{"r8", g.R8}, {"r9", g.R9}, {"r10", g.R10}, {"r11", g.R11},
		{"r12", g.R12}, {"r13", g.R13}, {"r14", g.R14}, {"r15", g.R15},
		{"rip", g.Rip}, {"eflags", g.Eflags}, {"orig_rax", g.OrigRax},
		{"cs", g.Cs}, {"ss", g.Ss}, {"ds", g.Ds}, {"es", g.Es}, {"fs", g.Fs}, {"gs", g.Gs},
		{"fs_base", g.FsBase}, {"gs_base", g.GsBase},
	}
}

func (r *REPL) infoRegs() error {
	th, err := r.thread()
	if err != nil {
		return err
	}
	g, err := r.s.Regs(th.Tid)
	if err != nil {
		return err
	}
	for _, reg := range regList(&g) {
		extra := ""
		switch reg.name {
		case "rip":
			extra = r.describePCIn(th.Pid, reg.v)
		case "orig_rax":
			extra = fmt.Sprint(int64(reg.v))
		}
		r.printf("%-9s %#-18x %s\n", reg.name, reg.v, extra)
	}
	return nil
}

// register returns the value of $name for the current thread.
func (r *REPL) register(name string) (uint64, error) {
	th, err := r.thread()
	if err != nil {
		return 0, err
	}
	g, err := r.s.Regs(th.Tid)
	if err != nil {
		return 0, err
	}
	switch name {
	case "pc":
		return g.Rip, nil
	case "sp":
		return g.Rsp, nil
	case "fp":
		return g.Rbp, nil
	}
	for _, reg := range regList(&g) {
		if reg.name == name {
			return reg.v, nil
		}
	}
	return 0, fmt.Errorf("no register $%s", name)
}

func (r *REPL) infoMaps() error {
	th, err := r.thread()
	if err != nil {
		return err
	}
	maps, err := r.s.Maps(th.Pid)
	if err != nil {
		return err
	}
	r.printf("%s", maps)
	return nil
}

func (r *REPL) infoFds() error {
	th, err := r.thread()
	if err != nil {
		return err
	}
	fds, err := r.s.Fds(th.Pid)
	if err != nil {
		return err
	}
	for _, f := range fds {
		r.printf("%-4d %s\n", f.Fd, f.What)
	}
	return nil
}

func (r *REPL) infoProcess() error {
	th, err := r.thread()
	if err != nil {
		return err
	}
	n := 0
	for _, t := range r.s.Threads() {
		if t.Pid == th.Pid {
			n++
		}
	}
	r.printf("process %d, %d threads, current thread %d\n", th.Pid, n, th.Tid)
	return nil
}

// evalAddr evaluates an address: a number (0x… or decimal), $REG, a
// symbol, each optionally followed by +N or -N.
func (r *REPL) evalAddr(expr string) (uint64, error) {
	addr, _, err := r.evalLocation(expr)
	return addr, err
}

// evalLocation is evalAddr that also gives the size of a symbol (0 for
// anything else).
func (r *REPL) evalLocation(expr string) (uint64, int, error) {
	base, off := expr, int64(0)
	if i := strings.LastIndexAny(expr, "+-"); i > 0 {
		n, err := strconv.ParseInt(expr[i:], 0, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%q: bad offset %q", expr, expr[i:])
		}
		base, off = expr[:i], n
	}
	var v uint64
	size := 0
	switch {
	case strings.HasPrefix(base, "$"):
		reg, err := r.register(base[1:])
		if err != nil {
			return 0, 0, err
		}
		v = reg
	case base != "" && base[0] >= '0' && base[0] <= '9':
		n, err := strconv.ParseUint(base, 0, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%q is not an address", expr)
		}
		v = n
	default:
		sym, err := r.lookupSymbol(base)
		if err != nil {
			return 0, 0, err
		}
		v, size = sym.addr, sym.size
	}
	return v + uint64(off), size, nil
}

// readMem reads n bytes at addr in the current thread's memory.
func (r *REPL) readMem(addr uint64, n int) ([]byte, error) {
	th, err := r.thread()
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	got, err := r.s.ReadMem(th.Tid, addr, b)
	if got == 0 && err != nil {
		return nil, fmt.Errorf("cannot read memory at %#x", addr)
	}
	return b[:got], nil
}

// xFormat is a parsed /FMT.
type xFormat struct {
	count int
	f     byte // x d u o t c a s i
	size  int  // 1 2 4 8
}

// parseXFormat parses gdb's /NFU (count, format, unit), in any order.
func parseXFormat(s string) (xFormat, error) {
	x := xFormat{count: 1, f: 'x', size: 4}
	num := ""
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			num += string(c)
		case strings.ContainsRune("xduotcasi", c):
			x.f = byte(c)
		case c == 'b':
			x.size = 1
		case c == 'h':
			x.size = 2
		case c == 'w':
			x.size = 4
		case c == 'g':
			x.size = 8
		default:
			return x, fmt.Errorf("x/%s: unknown letter %q (formats x d u o t c a s i, sizes b h w g)", s, c)
		}
	}
	if num != "" {
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || n > 4096 {
			return x, fmt.Errorf("x/%s: the count must be from 1 to 4096", s)
		}
		x.count = n
	}
	switch x.f {
	case 'a':
		x.size = 8
	case 'c':
		if !strings.ContainsAny(s, "bhwg") {
			x.size = 1
		}
	}
	return x, nil
}

func (r *REPL) cmdExamine(args []string) error {
	f := xFormat{count: 1, f: 'x', size: 4}
	if len(args) > 0 && strings.HasPrefix(args[0], "/") {
		var err error
		if f, err = parseXFormat(args[0][1:]); err != nil {
			return err
		}
		args = args[1:]
	}
	if err := wantArgs("x", args, 1, 1); err != nil {
		return err
	}
	addr, err := r.examinedAddr(args[0])
	if err != nil {
		return fmt.Errorf("x: %w", err)
	}
	switch f.f {
	case 's':
		return r.examineStrings(addr, f.count)
	case 'i':
		return r.disassemble(addr, f.count)
	}
	b, err := r.readMem(addr, f.count*f.size)
	if err != nil {
		return fmt.Errorf("x: %w", err)
	}
	perLine := max(1, 16/f.size)
	if f.f == 'c' {
		perLine = 8
	}
	for i := 0; i+f.size <= len(b); i += f.size {
		if (i/f.size)%perLine == 0 {
			if i > 0 {
				r.printf("\n")
			}
			r.printf("%#x:", addr+uint64(i))
		}
		r.printf("\t%s", formatUnit(b[i:i+f.size], f.f))
	}
	r.printf("\n")
	if len(b) < f.count*f.size {
		return fmt.Errorf("x: cannot read memory at %#x", addr+uint64(len(b)))
	}
	return nil
}

// formatUnit formats one unit of memory as x/FMT does.
func formatUnit(b []byte, f byte) string {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	bits := uint(len(b) * 8)
	signed := int64(v<<(64-bits)) >> (64 - bits)
	switch f {
	case 'd':
		return strconv.FormatInt(signed, 10)
	case 'u':
		return strconv.FormatUint(v, 10)
	case 'o':
		return "0" + strconv.FormatUint(v, 8)
	case 't':
		return fmt.Sprintf("%0*b", bits, v)
	case 'c':
		return fmt.Sprintf("%d %s", signed, strconv.QuoteRune(rune(b[0])))
	case 'a':
		return fmt.Sprintf("%#x", binary.LittleEndian.Uint64(b))
	}
	return fmt.Sprintf("0x%0*x", len(b)*2, v)
}

func (r *REPL) examineStrings(addr uint64, n int) error {
	for range n {
		b, err := r.readMem(addr, 256)
		if err != nil {
			return fmt.Errorf("x: %w", err)
		}
		s := b
		if i := strings.IndexByte(string(b), 0); i >= 0 {
			s = b[:i]
		}
		r.printf("%#x:\t%q\n", addr, s)
		addr += uint64(len(s)) + 1
	}
	return nil
}

// examinedAddr is where x looks, as gdb's: a number or $REG as evalAddr
// takes it, else a variable's value: the address an array or function
// is at, a pointer's or an integer's value (a variable known only to the
// symbol table, its address).
func (r *REPL) examinedAddr(expr string) (uint64, error) {
	if strings.HasPrefix(expr, "$") || expr[0] >= '0' && expr[0] <= '9' {
		return r.evalAddr(expr)
	}
	v, _, mem, err := r.evalVar(expr)
	if err != nil {
		return 0, err
	}
	return debuginfo.AddressValue(v, mem)
}
