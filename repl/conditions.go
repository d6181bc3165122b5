package repl

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hermitdbg/hermit/repl/debuginfo"
)

// Conditional breakpoints: "break LOC if EXPR" stops at LOC only where
// EXPR, evaluated as print would in the stopped thread's innermost frame
// of the program's own code, is nonzero; "condition N [EXPR]" changes or
// removes a breakpoint's condition. A continue passes the other hits;
// going back, a KeepRewinder passes them in one search.

// KeepRewinder is a Rewinder whose reverse-continue passes by, in one
// search, the stops keep rejects: keep is called at each stop the search
// makes, with the replay there.
type KeepRewinder interface {
	ReverseContinueWhere(keep func(Stop) bool) (Stop, error)
}

// condBreak is break LOC if EXPR.
func (r *REPL) condBreak(loc []string, cond string) error {
	if cond == "" {
		return errors.New("break: \"if\" needs a condition: break LOCATION if EXPRESSION")
	}
	if !codeBreak(loc) {
		return errors.New("break: a condition goes with a code breakpoint: break FUNCTION|FILE:LINE|*ADDR if EXPRESSION")
	}
	n := len(r.bps)
	if err := r.cmdBreak(loc); err != nil {
		return err
	}
	for _, b := range r.bps[n:] {
		b.cond = cond
	}
	return nil
}

// cmdCondition is condition N [EXPR].
func (r *REPL) cmdCondition(args []string) error {
	if len(args) == 0 {
		return errors.New("condition: usage: condition N [EXPRESSION] (none removes it)")
	}
	b, err := r.breakpointByID("condition", args[0])
	if err != nil {
		return err
	}
	if b.kind != bpAddr && b.kind != bpPending {
		return fmt.Errorf("condition: breakpoint %d is not a code breakpoint", b.id)
	}
	b.cond = strings.Join(args[1:], " ")
	if b.cond == "" {
		r.printf("breakpoint %d now stops at every hit\n", b.id)
	} else {
		r.printf("breakpoint %d stops only if %s\n", b.id, b.cond)
	}
	return nil
}

// codeBreak says whether break's arguments name a code breakpoint: a
// symbol, FILE:LINE or *ADDR, or func or addr and its argument.
func codeBreak(args []string) bool {
	return len(args) == 1 && !breakKinds[args[0]] || len(args) == 2 && (args[0] == "func" || args[0] == "addr")
}

// condSuffix is how info breakpoints shows a condition.
func condSuffix(cond string) string {
	if cond == "" {
		return ""
	}
	return " if " + cond
}

// hasConditions says whether a code breakpoint has a condition.
func (r *REPL) hasConditions() bool {
	for _, b := range r.bps {
		if b.cond != "" {
			return true
		}
	}
	return false
}

// holds says whether stop st is one to show for its breakpoints'
// conditions: not a code breakpoint's, one without a condition, or one
// whose condition holds or cannot be evaluated (the stop shows, with a
// line saying why).
func (r *REPL) holds(st Stop) bool {
	if st.Kind != StopBreakpoint {
		return true
	}
	var conds []*breakpoint
	for _, b := range r.bps {
		if b.kind == bpAddr && b.addr == st.Addr {
			if b.cond == "" {
				return true
			}
			conds = append(conds, b)
		}
	}
	for _, b := range conds {
		ok, err := r.condHolds(b.cond, st.Tid)
		if err != nil {
			r.printf("breakpoint %d: condition %s: %v (stopped)\n", b.id, b.cond, err)
			return true
		}
		if ok {
			return true
		}
	}
	return len(conds) == 0
}

// condHolds evaluates cond in thread tid's frame that print would look at.
func (r *REPL) condHolds(cond string, tid int) (bool, error) {
	var th Thread
	found := false
	for _, t := range r.s.Threads() {
		if t.Tid == tid {
			th, found = t, true
		}
	}
	if !found {
		return false, fmt.Errorf("no thread %d", tid)
	}
	sp := r.space(th.Pid)
	if sp == nil {
		return false, fmt.Errorf("process %d has no mappings to read symbols from", th.Pid)
	}
	g, frames, err := r.stackOf(th, sp)
	if err != nil {
		return false, err
	}
	v, mem, err := r.evalIn(cond, tid, &g, sp, frames)
	if err != nil {
		return false, err
	}
	return debuginfo.Truth(v, mem)
}

// cmdTbreak is break, for a breakpoint deleted once it has stopped.
func (r *REPL) cmdTbreak(args []string) error {
	loc := args
	if i := slices.Index(args, "if"); i >= 0 {
		loc = args[:i]
	}
	if err := wantArgs("tbreak", loc, 1, 2); err != nil {
		return err
	}
	if !codeBreak(loc) {
		return fmt.Errorf("tbreak: %s is no code breakpoint: break sets it", strings.Join(loc, " "))
	}
	r.temp = true
	defer func() { r.temp = false }()
	return r.cmdBreak(args)
}

// cmdAdvance runs to a place: a tbreak there, continue, and the tbreak
// gone wherever the continue stopped.
func (r *REPL) cmdAdvance(args []string) error {
	if err := wantArgs("advance", args, 1, 1); err != nil {
		return err
	}
	n := len(r.bps)
	if err := r.cmdTbreak(args); err != nil {
		return err
	}
	added := slices.Clone(r.bps[n:])
	err := r.cmdContinue(nil)
	r.dropTemp(func(b *breakpoint) bool { return slices.Contains(added, b) })
	return err
}

// dropTemp deletes the temporary breakpoints which.
func (r *REPL) dropTemp(which func(*breakpoint) bool) {
	for _, b := range slices.Clone(r.bps) {
		if b.temp && which(b) {
			r.bps = slices.DeleteFunc(r.bps, func(o *breakpoint) bool { return o == b })
			r.unset(b)
		}
	}
}
