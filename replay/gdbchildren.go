package replay

import (
	"fmt"
	"path/filepath"
	"strings"
)

// childrenNote tells, at the end of the debugged process, of the
// processes it started, which the debugger never sees (gdb's catch fork
// and follow-fork-mode need fork events a replay of one process does not
// give): how each ended, and how to debug it. "" when it started none.
func (t *GDBTarget) childrenNote() string {
	if t.rec == nil {
		return ""
	}
	ps, err := t.rec.Processes()
	if err != nil {
		return ""
	}
	var kids []string
	for _, p := range ps {
		if p.Ppid != t.vpid {
			continue
		}
		name := filepath.Base(p.ExecPath)
		if len(p.Argv) > 0 {
			name = filepath.Base(p.Argv[0])
		}
		how := "still running at the end"
		switch {
		case p.Exited && p.ExitStatus&0x7f != 0:
			how = fmt.Sprintf("killed by signal %d", p.ExitStatus&0x7f)
		case p.Exited:
			how = fmt.Sprintf("exited %d", p.ExitStatus>>8&0xff)
		}
		kids = append(kids, fmt.Sprintf("%d (%s, %s)", p.Vpid, name, how))
	}
	if len(kids) == 0 {
		return ""
	}
	what := "process"
	if len(kids) > 1 {
		what = "processes"
	}
	return fmt.Sprintf("hermit: process %d started %s %s; the debugger follows process %d only: "+
		"hermit replay --onprocess PID debugs another", t.vpid, what, strings.Join(kids, ", "), t.vpid)
}
