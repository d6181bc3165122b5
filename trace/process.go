package trace

import "path"

// Process is one guest process of a recording, as the recording's process
// events tell: KindClone (Tid created Child with Flags, for threads and
// processes alike), KindExec (process Tid exec'd Exec.Path with
// Exec.Argv) and KindExit with Group (process Tid ended with Status; the
// last one, which ends a recording, is the root's). Ids are the guest's.
// A trace without process events (recorded before hermit logged them)
// yields its root process alone, with the header's command.
type Process struct {
	Vpid int32 // its pid, as the guest saw it (0: unknown)
	Ppid int32 // its parent's pid, 0 for the root
	// Argv and ExecPath are the arguments and the path (as the guest named
	// it, "" if unknown) of its last exec; for a process that never
	// exec'd, those of the program it was forked from.
	Argv     []string
	ExecPath string
	// Execed says Argv and ExecPath are its own exec's. Otherwise ForkOf
	// is the process whose program it runs (its creator).
	Execed bool
	ForkOf int32
	// Event is the number of the event of its last exec, or of its
	// creation if it never exec'd: from there on it runs its last program.
	Event uint64
	// Before names the programs of its execs before its last, oldest
	// first (not the one it was forked with).
	Before []string
	// Exited says the trace holds its end; Status is then its wait status
	// (exit code << 8, or the signal that killed it).
	Exited bool
	Status int32
}

// Clone flags the process table needs (<linux/sched.h>).
const (
	cloneParent = 0x8000
	cloneThread = 0x10000
)

// ProcessTable builds the process table of a recording from its events,
// fed in order with Add.
type ProcessTable struct {
	hdr   *Header
	procs []Process
	// live maps a live process's pid to its row; procOf maps a guest tid
	// to its process's pid.
	live   map[int32]int
	procOf map[int32]int32
}

// NewProcessTable returns an empty table for a trace with header h (which
// names the root's command in traces without process events; may be nil).
func NewProcessTable(h *Header) *ProcessTable {
	return &ProcessTable{hdr: h, live: map[int32]int{}, procOf: map[int32]int32{}}
}

// Add takes event n of the trace into account.
func (pt *ProcessTable) Add(n uint64, ev *Event) {
	switch ev.Kind {
	case KindSyscall:
		if len(pt.procs) == 0 && ev.Tid != 0 && !ev.External {
			// No exec before the first call: an old trace. The calling
			// thread is the root's first.
			pt.addRoot(ev.Tid)
		}
	case KindExec:
		pt.exec(n, ev)
	case KindClone:
		pt.clone(n, ev)
	case KindExit:
		if ev.Group {
			pt.exit(ev)
		}
	}
}

// addRoot adds the root process, vpid, with the header's command: it
// runs it from the start (event 0).
func (pt *ProcessTable) addRoot(vpid int32) *Process {
	p := Process{Vpid: vpid, Execed: true}
	if pt.hdr != nil {
		p.Argv = append([]string(nil), pt.hdr.Argv...)
	}
	return pt.add(p)
}

func (pt *ProcessTable) add(p Process) *Process {
	pt.procs = append(pt.procs, p)
	pt.live[p.Vpid] = len(pt.procs) - 1
	pt.procOf[p.Vpid] = p.Vpid
	return &pt.procs[len(pt.procs)-1]
}

// process returns the live process of guest thread tid, or nil.
func (pt *ProcessTable) process(tid int32) *Process {
	pid, ok := pt.procOf[tid]
	if !ok {
		pid = tid
	}
	if i, ok := pt.live[pid]; ok {
		return &pt.procs[i]
	}
	return nil
}

func (pt *ProcessTable) exec(n uint64, ev *Event) {
	p := pt.process(ev.Tid)
	if p == nil || p.Vpid != ev.Tid {
		// The first exec is the root's; the exec of a process the table
		// does not know (damage) starts a row of its own.
		p = pt.add(Process{Vpid: ev.Tid})
	}
	if name := p.program(); name != "" && p.Execed {
		p.Before = append(p.Before, name)
	}
	p.Execed, p.ForkOf, p.Event = true, 0, n
	p.Argv, p.ExecPath = nil, ""
	if x := ev.Exec; x != nil {
		p.Argv = append([]string(nil), x.Argv...)
		p.ExecPath = x.Path
	}
}

// program names the program p runs: the base name of its argv[0], else
// of its exec path; "" if unknown.
func (p *Process) program() string {
	if len(p.Argv) > 0 && p.Argv[0] != "" {
		return path.Base(p.Argv[0])
	}
	if p.ExecPath != "" {
		return path.Base(p.ExecPath)
	}
	return ""
}

func (pt *ProcessTable) clone(n uint64, ev *Event) {
	creator := pt.process(ev.Tid)
	if ev.Flags&cloneThread != 0 {
		if creator != nil {
			pt.procOf[ev.Child] = creator.Vpid
		}
		return
	}
	child := Process{Vpid: ev.Child, Event: n}
	if creator != nil {
		child.Ppid, child.ForkOf = creator.Vpid, creator.Vpid
		if ev.Flags&cloneParent != 0 {
			child.Ppid = creator.Ppid
		}
		child.Argv = append([]string(nil), creator.Argv...)
		child.ExecPath = creator.ExecPath
	}
	pt.add(child)
}

func (pt *ProcessTable) exit(ev *Event) {
	i, ok := pt.live[ev.Tid]
	if !ok {
		if ev.Tid != 0 || len(pt.procs) == 0 || pt.procs[0].Exited {
			return
		}
		// Old traces end with the root's exit under tid 0.
		i = 0
	}
	p := &pt.procs[i]
	p.Exited, p.Status = true, ev.Status
	if pt.live[p.Vpid] == i {
		delete(pt.live, p.Vpid)
	}
}

// Processes returns the processes seen so far, in creation order. The
// result is the caller's.
func (pt *ProcessTable) Processes() []Process {
	out := make([]Process, len(pt.procs))
	copy(out, pt.procs)
	return out
}

// ReadProcesses builds the process table of the events r yields from its
// position on. The error is the damage that ended the trace early, if
// any; the table then holds what came before it.
func ReadProcesses(r *Reader) ([]Process, error) {
	pt := NewProcessTable(r.Header())
	for n, ev := range r.Events() {
		pt.Add(n, ev)
	}
	return pt.Processes(), r.Err()
}
