package replay

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/hermitdbg/hermit/trace"
)

// ProcessInfo describes one guest process of a recording, to choose the
// one to debug (hermit replay --onprocess).
type ProcessInfo struct {
	Vpid int // its pid, as the guest saw it
	Ppid int // its parent's pid; 0 for the root
	// Argv and ExecPath (as the guest named it) are those of its last
	// exec; for a process that never exec'd (Forked), those of the
	// program it was forked from.
	Argv     []string
	ExecPath string
	Forked   bool
	// Exited says the recording holds the process's end, ExitStatus its
	// wait status (exit code << 8, or the signal that killed it).
	Exited     bool
	ExitStatus int
	// ExecEvent is the number of the trace event of its last exec (of its
	// creation, if Forked; 0 for the root of a trace without process
	// events). Event numbers count every event of the trace, as
	// Session.RunToEvent and Stop.Event do. ExecEvent is never an event
	// boundary itself: Session.RunToEvent(ExecEvent) stops at the first
	// boundary after it (the next intercepted syscall of any thread),
	// where the process exists and runs its last program, unless it has
	// ended by then (it cannot end before its exit_group's boundary, but
	// a signal from another process may end it sooner).
	ExecEvent uint64
	// Before names the programs of its execs before its last, oldest
	// first: a debugger sees none of them.
	Before []string
}

// Name is the process's command name: the base name of argv[0], else of
// its exec path.
func (p ProcessInfo) Name() string {
	if len(p.Argv) > 0 && p.Argv[0] != "" {
		return path.Base(p.Argv[0])
	}
	if p.ExecPath != "" {
		return path.Base(p.ExecPath)
	}
	return "?"
}

// Processes lists the recording's processes in creation order. A trace
// recorded before hermit logged processes lists its root alone; a damaged
// one, the processes before the damage.
func (rec *Recording) Processes() ([]ProcessInfo, error) {
	r, err := trace.Open(rec.Dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	procs, _ := trace.ReadProcesses(r) // damage is reported when the replay reaches it
	out := make([]ProcessInfo, len(procs))
	for i, p := range procs {
		out[i] = ProcessInfo{
			Vpid: int(p.Vpid), Ppid: int(p.Ppid), Argv: p.Argv, ExecPath: p.ExecPath, Forked: !p.Execed,
			Exited: p.Exited, ExitStatus: int(p.Status), ExecEvent: p.Event, Before: p.Before,
		}
		if out[i].ExecPath == "" && p.Execed && i == 0 {
			out[i].ExecPath = rec.Settings.Path
		}
	}
	return out, nil
}

// FindProcess returns the process sel names: a guest pid in decimal, or a
// command name (ProcessInfo.Name, or the base name of its exec path). A
// name names the processes that exec'd it; only if there are none, those
// forked from one that did. It is an error if sel names no process (the
// message lists them) or several (the message lists their pids).
func (rec *Recording) FindProcess(sel string) (ProcessInfo, error) {
	procs, err := rec.Processes()
	if err != nil {
		return ProcessInfo{}, err
	}
	return findProcess(procs, sel)
}

func findProcess(procs []ProcessInfo, sel string) (ProcessInfo, error) {
	sel = strings.TrimSpace(sel)
	var found []ProcessInfo
	what := fmt.Sprintf("no process named %q", sel)
	if pid, err := strconv.Atoi(sel); err == nil {
		what = fmt.Sprintf("no process %d", pid)
		for _, p := range procs {
			if p.Vpid == pid {
				found = append(found, p)
			}
		}
	} else {
		for _, forked := range []bool{false, true} {
			for _, p := range procs {
				if p.Forked == forked && (p.Name() == sel || p.ExecPath != "" && path.Base(p.ExecPath) == sel) {
					found = append(found, p)
				}
			}
			if len(found) > 0 {
				break
			}
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		for _, p := range procs {
			if slices.Contains(p.Before, sel) {
				return ProcessInfo{}, fmt.Errorf("process %d ran %s, then exec'd %s at event %d, and a process is debugged from its last exec on", p.Vpid, sel, p.Name(), p.ExecEvent)
			}
		}
		return ProcessInfo{}, fmt.Errorf("%s in the recording; its processes: %s", what, listProcesses(procs))
	}
	return ProcessInfo{}, fmt.Errorf("%q names %d processes of the recording: %s; choose one by pid", sel, len(found), listProcesses(found))
}

// listProcesses shows processes as "2 (sh), 3 (cat)".
func listProcesses(procs []ProcessInfo) string {
	if len(procs) == 0 {
		return "none"
	}
	parts := make([]string, len(procs))
	for i, p := range procs {
		parts[i] = fmt.Sprintf("%d (%s", p.Vpid, p.Name())
		if p.Forked {
			parts[i] += ", a fork"
		}
		parts[i] += ")"
	}
	return strings.Join(parts, ", ")
}
