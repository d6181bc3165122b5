package repl

import (
	"errors"
	"fmt"

	"github.com/hermitdbg/hermit/repl/debuginfo"
)

// Pending function breakpoints. At the start of a replay only the
// program and the dynamic loader are mapped, so `break puts` finds no
// symbol; as in gdb, the breakpoint is kept pending, and set once a
// library that defines it is mapped. A library is mapped by an mmap of
// its file, which the recording keeps as an event: while a breakpoint is
// pending, a forward run stops (without showing it) at the boundary after
// each such event to look the symbol up again. (The Session sets a code
// breakpoint in a page only once it may run code: the loader maps a
// library's code over its first mapping.)

// sysMmap is mmap's number (<asm/unistd_64.h>).
const sysMmap = 9

// pendingBreak adds a pending breakpoint on function name.
func (r *REPL) pendingBreak(name string) error {
	return r.addBreak(&breakpoint{kind: bpPending, sym: name,
		desc: fmt.Sprintf("function %s, pending: no such symbol yet; it is set once a library that defines it is loaded", name)})
}

// notFound says err is a symbol lookup's that found nothing.
func notFound(err error) bool { return errors.Is(err, debuginfo.ErrNotFound) }

func (r *REPL) hasPending() bool {
	for _, b := range r.bps {
		if b.kind == bpPending {
			return true
		}
	}
	return false
}

// libraryBoundary returns the boundary just after the first file mmap at
// or after boundary from, where a library may have been mapped.
func (r *REPL) libraryBoundary(from uint64) (uint64, bool) {
	m, ok := r.boundaryAfter(from, 1, func(ev Event) bool { return ev.Kind == EventSyscall && ev.Nr == sysMmap })
	if !ok {
		return 0, false
	}
	return r.boundaryAfter(m+1, 1, nil)
}

// resolvePending looks the pending breakpoints' symbols up in the process
// of thread tid, and sets those it finds.
func (r *REPL) resolvePending(tid int) {
	pid := 0
	for _, th := range r.s.Threads() {
		if th.Tid == tid {
			pid = th.Pid
		}
	}
	sp := r.space(pid)
	if sp == nil {
		return
	}
	for _, b := range r.bps {
		if b.kind != bpPending {
			continue
		}
		v, err := sp.Lookup(b.sym)
		if err != nil {
			continue
		}
		addr := sp.AfterPrologue(v.Addr)
		if err := r.s.SetBreakpoint(addr); err != nil {
			r.printf("breakpoint %d: function %s at %#x: %v\n", b.id, b.sym, addr, err)
			continue
		}
		b.kind, b.addr = bpAddr, addr
		b.desc = fmt.Sprintf("function %s at %#x%s", b.sym, addr, r.describePCIn(pid, addr))
		r.printf("breakpoint %d: %s\n", b.id, b.desc)
	}
}
