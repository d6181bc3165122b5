package gdbstub

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Run control and stop replies.

// stopNone is a stop reply for a thread that did not cause the stop
// (T00, for qThreadStopInfo).
const stopNone StopKind = -1

// stopReply formats st as a stop reply and, when the process ended,
// remembers it for '?' and further resumes.
func (s *session) stopReply(st Stop) []byte {
	switch st.Kind {
	case StopExited:
		s.dead = &st
		b := fmt.Appendf(nil, "W%02x", st.ExitCode&0xff)
		if s.multiprocess {
			b = fmt.Appendf(b, ";process:%x", s.t.Pid())
		}
		return b
	case StopKilled:
		s.dead = &st
		b := fmt.Appendf(nil, "X%02x", s.signal(st.Signal)&0xff)
		if s.multiprocess {
			b = fmt.Appendf(b, ";process:%x", s.t.Pid())
		}
		return b
	}
	sig := gdbSIGTRAP
	switch st.Kind {
	case stopNone:
		sig = 0
	case StopStart:
		if s.native {
			// lldb-server's stop of a process it launched or attached
			// to. A SIGTRAP at a static program's entry is taken for
			// the breakpoint lldb puts there to find the libraries: it
			// removes it and runs on, to the end.
			sig = linuxSIGSTOP
		}
	case StopInterrupt:
		sig = gdbSIGINT
	case StopSignal:
		sig = s.signal(st.Signal)
	}
	if st.Begin || st.End {
		sig = 0 // as rr: gdb says "No more reverse-execution history."
	}
	b := fmt.Appendf(nil, "T%02x", sig&0xff)
	tid := st.Tid
	if tid <= 0 {
		tid = s.resolve(0)
	}
	if tid > 0 {
		if regs, err := s.t.Registers(tid); err == nil && regs != nil {
			for _, n := range [...]int{regRBP, regRSP, regRIP} {
				b = fmt.Appendf(b, "%02x:", n)
				b = appendRegHex(b, regs, n)
				b = append(b, ';')
			}
		}
		b = fmt.Appendf(b, "thread:%s;", s.threadID(tid))
		if s.native {
			b = s.appendLLDBStopKeys(b, st, tid)
		}
	}
	switch {
	case !s.catching && (st.Kind == StopSyscallEntry || st.Kind == StopSyscallReturn):
		// A plain SIGTRAP for a client that did not ask (the next one
		// after a client that caught syscalls went away): gdb resumes
		// at a syscall stop it did not ask for.
	case st.Kind == StopSyscallEntry:
		b = fmt.Appendf(b, "syscall_entry:%x;", st.Syscall)
	case st.Kind == StopSyscallReturn:
		b = fmt.Appendf(b, "syscall_return:%x;", st.Syscall)
	case st.Kind == StopBreakpoint:
		if st.Hardware {
			b = append(b, "hwbreak:;"...)
		} else {
			b = append(b, "swbreak:;"...)
		}
	case st.Kind == StopWatch:
		name := "watch"
		switch st.Watch {
		case WatchRead:
			name = "rwatch"
		case WatchAccess:
			name = "awatch"
		}
		b = fmt.Appendf(b, "%s:%x;", name, st.Addr)
	}
	switch {
	case st.Begin:
		b = append(b, "replaylog:begin;"...)
	case st.End:
		b = append(b, "replaylog:end;"...)
	}
	if s.listThreads {
		b = s.appendThreadList(b)
	}
	return b
}

// appendThreadList appends lldb's "threads:" and "thread-pcs:" keys.
func (s *session) appendThreadList(b []byte) []byte {
	ths, err := s.t.Threads()
	if err != nil || len(ths) == 0 {
		return b
	}
	ids := make([]string, len(ths))
	pcs := make([]string, 0, len(ths))
	for i, th := range ths {
		ids[i] = s.threadID(th.ID)
		if regs, err := s.t.Registers(th.ID); err == nil && regs != nil {
			pcs = append(pcs, strconv.FormatUint(regs.Rip, 16))
		}
	}
	b = fmt.Appendf(b, "threads:%s;", strings.Join(ids, ","))
	if len(pcs) == len(ids) {
		b = fmt.Appendf(b, "thread-pcs:%s;", strings.Join(pcs, ","))
	}
	return b
}

func (s *session) haltReason(*request) []byte {
	if s.dead != nil {
		return s.stopReply(*s.dead)
	}
	st := s.t.LastStop()
	s.shown = st.Tid
	return s.stopReply(st)
}

// resume continues (tid 0) or steps thread tid and replies with the stop.
// Once the process has ended it just repeats how it ended.
func (s *session) resume(r *request, step bool, tid int) []byte {
	s.allocating = false
	if s.dead != nil {
		return s.stopReply(*s.dead)
	}
	if s.holdStart && !step {
		s.holdStart = false
		return s.stopped(s.t.LastStop())
	}
	s.holdStart = false
	st, err := s.run(r.seq, func() (Stop, error) {
		if step {
			return s.t.Step(tid)
		}
		return s.passFalse(s.t.Continue)
	})
	if err != nil {
		s.logf("gdbstub: resume: %v", err)
		return errReply
	}
	return s.stopped(st)
}

// stopped answers a resume with its stop. The thread that stopped becomes
// the current one for registers (Hg), as gdb assumes after a stop reply.
func (s *session) stopped(st Stop) []byte {
	if st.Tid > 0 {
		s.gThread, s.shown = st.Tid, st.Tid
	}
	if st.Note != "" {
		s.console(st.Note + "\n")
	}
	return s.stopReply(st)
}

// vCont resumes: if an action steps a thread, that thread steps (the
// others go as the recording has them); else the process continues.
// Signals given with C and S are ignored: the recording decides.
func (s *session) vCont(r *request) []byte {
	if r.args == "" || r.args[0] != ';' {
		return errReply
	}
	step, stepTid, cont, contAll := false, 0, false, false
	var contTids []int
	for _, a := range strings.Split(r.args[1:], ";") {
		act, id, hasID := strings.Cut(a, ":")
		tid := 0
		if hasID {
			var err error
			if tid, err = parseThreadID(id); err != nil {
				return errReply
			}
		}
		switch {
		case act == "c", len(act) == 3 && act[0] == 'C':
			cont = true
			contAll = contAll || tid <= 0
			contTids = append(contTids, s.resolve(tid))
		case act == "s", len(act) == 3 && act[0] == 'S':
			if !step {
				if tid <= 0 {
					tid = s.cThread
				}
				step, stepTid = true, s.resolve(tid)
			}
		case act == "t":
			// Stop: every thread is stopped already.
		default:
			return errReply
		}
	}
	switch {
	case step && stepTid == 0 && s.dead == nil:
		return errReply // no thread to step
	case step:
		return s.resume(r, true, stepTid)
	case cont && !contAll && s.gdb && !s.allThreads(contTids):
		// Continue one thread, the others held (gdb's scheduler-locking):
		// a replay runs them all as recorded, and gdb would keep showing
		// the others' registers from before. lldb continues the current
		// thread alone to step over a call, and ends the session on an
		// error: it gets them all run, and reads the others' registers
		// again at the stop.
		s.console("hermit: a replay runs every thread as recorded, so it cannot continue one thread alone; " +
			"set scheduler-locking off (or replay) and continue\n")
		return errReply
	case cont:
		return s.resume(r, false, 0)
	}
	return []byte("OK")
}

// continuePlain answers c and C. A resume address would change a
// recorded register, so it is refused.
func (s *session) continuePlain(r *request) []byte {
	if plainResumeAddr(r) {
		return errReply
	}
	return s.resume(r, false, 0)
}

// stepPlain answers s and S, stepping the Hc thread.
func (s *session) stepPlain(r *request) []byte {
	if plainResumeAddr(r) {
		return errReply
	}
	tid := s.resolve(s.cThread)
	if tid == 0 {
		if s.dead != nil {
			return s.stopReply(*s.dead)
		}
		return errReply
	}
	return s.resume(r, true, tid)
}

// plainResumeAddr tells whether a c, s, C or S packet gives an address.
func plainResumeAddr(r *request) bool {
	if r.pkt[0] == 'C' || r.pkt[0] == 'S' {
		_, addr, _ := strings.Cut(r.args, ";")
		return addr != ""
	}
	return r.args != ""
}

// vRun restarts the replay; arguments are ignored (the recording has
// them).
//
// As with rr, a run's arguments cannot change the recording: gdb's "run N"
// (vRun;FILE;N) replays from the start to event N instead, which also
// refreshes everything gdb knows (unlike "monitor goto N"). Delve's
// "restart cN" (vRun;;HEX("cN")) goes to checkpoint N; any other argument
// is refused.
func (s *session) vRun(r *request) []byte {
	var event uint64
	var goTo bool
	ckpt := 0
	parts := strings.Split(strings.TrimPrefix(r.args, ";"), ";")
	if len(parts) > 1 {
		arg, err := hex.DecodeString(parts[1])
		if err != nil {
			return errReply
		}
		switch {
		case len(arg) > 1 && arg[0] == 'c':
			// Delve's "restart cN": checkpoint N.
			if ckpt, err = checkpointID(string(arg)); err != nil {
				s.logf("gdbstub: vRun: %v", err)
				return errReply
			}
		case len(arg) > 0:
			if event, err = strconv.ParseUint(string(arg), 10, 64); err != nil {
				s.logf("gdbstub: vRun: %q is not an event number or a checkpoint (a replay runs only as recorded)", arg)
				return errReply
			}
			goTo = true
		}
	}
	var st Stop
	var err error
	if ckpt > 0 {
		c, cerr := s.checkpointer()
		if cerr == nil {
			st, err = c.RestartCheckpoint(ckpt)
		} else {
			err = cerr
		}
	} else {
		st, err = s.t.Restart()
	}
	if err == nil && goTo {
		gst, gerr := s.t.Goto(event)
		if gerr == nil {
			st = gst
		} else if s.opts.Refused != nil {
			// gdb takes no text with vRun's reply: the process is at
			// its start, and hermit says why.
			s.opts.Refused(fmt.Errorf("run %d: %w", event, gerr))
		}
	}
	if err != nil {
		s.logf("gdbstub: restart: %v", err)
		return errReply
	}
	s.dead, s.killed = nil, false
	s.gThread, s.cThread = 0, 0
	// Delve (restart) sends "vRun;" and then, as rr needs it to, one
	// vCont;c, after which it expects the program at its start: that
	// continue does not run. gdb's continue after its vRun (run, start)
	// runs to the first breakpoint; gdb names no program in it either
	// when its remote exec-file is not set.
	s.holdStart = parts[0] == "" && !s.gdb
	return s.stopped(st)
}

func (s *session) detach(*request) []byte {
	s.detached = true
	return []byte("OK")
}

// kill answers k: the process is gone (killed by SIGKILL: lldb waits for
// the reply, gdb reads none), and the session ends.
func (s *session) kill(*request) []byte {
	s.done, s.end = true, EndKilled
	return []byte("X09")
}

// vKill marks the process killed; the client may still vRun it.
func (s *session) vKill(*request) []byte {
	s.killed = true
	s.dead = &Stop{Kind: StopKilled, Signal: 9}
	return []byte("OK")
}

// allThreads says whether tids name every live thread (lldb continues
// each by name).
func (s *session) allThreads(tids []int) bool {
	ths, err := s.t.Threads()
	if err != nil {
		return false
	}
	for _, th := range ths {
		if !slices.Contains(tids, th.ID) {
			return false
		}
	}
	return true
}
