package gdbstub

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Monitor commands: gdb's "monitor <cmd>" (qRcmd,<hex>), whose output goes
// in 'O' packets before the final OK, and rr's qRRCmd, which Delve sends
// for "when" and whose reply is the output itself, in hex.

// monitorCmd is one monitor command. It returns its output; err set means
// the command failed (output still shown).
type monitorCmd struct {
	name, args, help string
	run              func(s *session, args []string) (string, error)
}

var monitorCmds []monitorCmd

func init() {
	monitorCmds = []monitorCmd{
		{"help", "", "list the monitor commands", (*session).monHelp},
		{"when", "", "show the current event number", (*session).monWhen},
		{"when-tid", "", "show the current thread", (*session).monWhenTid},
		{"goto", "N", "replay to event N (after goto, \"maint flush register-cache\" and \"maint flush dcache\"; gdb's \"run N\" replays to event N too, refreshing what gdb shows, then continues to the next breakpoint)", (*session).monGoto},
	}
}

// findMonitor finds a command by name.
func findMonitor(name string) *monitorCmd {
	for i := range monitorCmds {
		if monitorCmds[i].name == name {
			return &monitorCmds[i]
		}
	}
	return nil
}

func (s *session) monHelp([]string) (string, error) {
	var b strings.Builder
	b.WriteString("Monitor commands:\n")
	for _, c := range monitorCmds {
		name := c.name
		if c.args != "" {
			name += " " + c.args
		}
		fmt.Fprintf(&b, "  %-10s %s\n", name, c.help)
	}
	return b.String(), nil
}

func (s *session) monWhen([]string) (string, error) {
	return fmt.Sprintf("Current event: %d\n", s.t.When()), nil
}

func (s *session) monWhenTid([]string) (string, error) {
	return fmt.Sprintf("Current tid: %d\n", s.resolve(0)), nil
}

func (s *session) monGoto(args []string) (string, error) {
	if len(args) != 1 {
		return "usage: goto N\n", errBadArgs
	}
	n, err := strconv.ParseUint(args[0], 0, 64)
	if err != nil {
		return fmt.Sprintf("goto: bad event number %q\n", args[0]), errBadArgs
	}
	st, err := s.t.Goto(n)
	if err != nil {
		return fmt.Sprintf("goto %d: %v\n", n, err), err
	}
	s.killed = false
	s.dead = nil
	switch st.Kind {
	case StopExited:
		s.dead = &st
		return fmt.Sprintf("At event %d: the process exited with status %d.\n", s.t.When(), st.ExitCode), nil
	case StopKilled:
		s.dead = &st
		return fmt.Sprintf("At event %d: the process was killed by signal %d.\n", s.t.When(), st.Signal), nil
	}
	where := ""
	if regs, err := s.t.Registers(st.Tid); err == nil && regs != nil {
		where = fmt.Sprintf(", pc %#x", regs.Rip)
	}
	note := ""
	if w := s.t.When(); w != n {
		note = fmt.Sprintf(" (event %d is not one a replay stops at: this is the next that is)", n)
	}
	return fmt.Sprintf("At event %d, thread %d%s%s.\n", s.t.When(), st.Tid, where, note), nil
}

var errBadArgs = errors.New("bad arguments")

// qRcmd runs "monitor <line>".
func (s *session) qRcmd(r *request) []byte {
	line, err := decodeHex(strings.TrimPrefix(r.args, ","))
	if err != nil {
		return errReply
	}
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		fields = []string{"help"}
	}
	c := findMonitor(fields[0])
	if c == nil {
		s.console(fmt.Sprintf("unknown monitor command %q; \"monitor help\" lists them\n", fields[0]))
		return errReply
	}
	out, err := c.run(s, fields[1:])
	s.console(out)
	if err != nil {
		return errReply
	}
	return []byte("OK")
}

// console sends text as 'O' packets, each within a packet.
func (s *session) console(text string) {
	const chunk = 1024
	for len(text) > 0 {
		n := min(len(text), chunk)
		s.send(appendHex([]byte{'O'}, []byte(text[:n])))
		text = text[n:]
	}
}

// qRRCmd answers rr's "qRRCmd:<cmd>:<tid>[:<hex arg>…]" (Delve ≥ v1.22
// with rr ≥ 5.8) and its older form "qRRCmd:<hex cmd>[:<hex arg>…]". The
// reply is the command's output, hex encoded, as rr gives it: "when" says
// "Current event: N\n".
func (s *session) qRRCmd(r *request) []byte {
	f := strings.Split(strings.TrimPrefix(r.args, ":"), ":")
	name, args := f[0], f[1:]
	// The new form names the command in plain words ("info
	// checkpoints"), then the thread; the old one hex-encodes the name.
	words := strings.Fields(name)
	if len(words) > 0 && findMonitor(words[0]) != nil {
		if len(args) > 0 {
			args = args[1:] // the thread
		}
	} else if b, err := decodeHex(name); err == nil {
		words = strings.Fields(string(b))
	}
	if len(words) == 0 {
		return errReply
	}
	c := findMonitor(words[0])
	if c == nil || c.name == "help" {
		return errReply
	}
	decoded := words[1:]
	for _, a := range args {
		b, err := decodeHex(a)
		if err != nil {
			return errReply
		}
		decoded = append(decoded, string(b))
	}
	out, err := c.run(s, decoded)
	if err != nil {
		return errReply
	}
	return appendHex(nil, []byte(out))
}
