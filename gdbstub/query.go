package gdbstub

import (
	"fmt"
	"strconv"
	"strings"
)

// The handshake queries and the thread ones.

const hostTriple = "x86_64-pc-linux-gnu"

// qSupported answers the features; multiprocess+ and binary-upload+ only
// when the client offered them.
func (s *session) qSupported(r *request) []byte {
	s.multiprocess, s.binaryUpload, s.gdb = false, false, false
	for _, f := range strings.Split(strings.TrimPrefix(r.args, ":"), ";") {
		switch f {
		case "multiprocess+":
			s.multiprocess = true
		case "binary-upload+":
			s.binaryUpload = true
		case "qRelocInsn+":
			s.gdb = true // gdb offers it always; lldb and Delve never
		}
	}
	if es, ok := s.t.(EndStopper); ok {
		es.StopAtEnd(s.gdb)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "PacketSize=%x", packetSize)
	b.WriteString(";QStartNoAckMode+" +
		";qXfer:features:read+;qXfer:auxv:read+;qXfer:exec-file:read+" +
		";qXfer:threads:read+;qXfer:libraries-svr4:read+;qXfer:siginfo:read+" +
		";swbreak+;hwbreak+;vContSupported+;QPassSignals+;ConditionalBreakpoints+")
	if _, ok := s.t.(Reverser); ok {
		b.WriteString(";ReverseContinue+;ReverseStep+")
	}
	if _, ok := s.t.(SyscallCatcher); ok {
		b.WriteString(";QCatchSyscalls+")
	}
	if s.multiprocess {
		b.WriteString(";multiprocess+")
	}
	if s.binaryUpload {
		b.WriteString(";binary-upload+")
	}
	return []byte(b.String())
}

// catchSyscalls answers QCatchSyscalls:0 (none), QCatchSyscalls:1 (all)
// and QCatchSyscalls:1;NR;... (those, in hex).
func (s *session) catchSyscalls(r *request) []byte {
	sc, ok := s.t.(SyscallCatcher)
	if !ok {
		return nil
	}
	f := strings.Split(strings.TrimPrefix(r.args, ":"), ";")
	var nrs []int
	for _, x := range f[1:] {
		n, err := strconv.ParseUint(x, 16, 16)
		if err != nil {
			return errReply
		}
		nrs = append(nrs, int(n))
	}
	switch {
	case f[0] == "0" && len(nrs) == 0:
		if err := sc.CatchSyscalls(false, nil); err != nil {
			return s.refused(err)
		}
		s.catching = false
	case f[0] == "1":
		if err := sc.CatchSyscalls(true, nrs); err != nil {
			return s.refused(err)
		}
		s.catching = true
	default:
		return errReply
	}
	return []byte("OK")
}

// startNoAck turns acknowledgments off, after this packet's own.
func (s *session) startNoAck(*request) []byte {
	s.noAck.Store(true)
	return []byte("OK")
}

func (s *session) threadSuffixOK(*request) []byte {
	s.threadSuffix = true
	return []byte("OK")
}

func (s *session) listThreadsOK(*request) []byte {
	s.listThreads = true
	return []byte("OK")
}

func (s *session) hostInfo(*request) []byte {
	s.native = true // lldb asks; gdb and Delve never do
	return fmt.Appendf(nil, "triple:%x;ptrsize:8;endian:little;ostype:linux;vendor:pc;", hostTriple)
}

// processInfo answers qProcessInfo (and lldb's qProcessInfoPID:pid),
// with the executable's name, which Delve falls back on.
func (s *session) processInfo(*request) []byte {
	b := fmt.Appendf(nil, "pid:%x;ptrsize:8;endian:little;ostype:linux;triple:%x;", s.t.Pid(), hostTriple)
	if exe, err := s.t.ExecFile(); err == nil && exe != "" {
		b = fmt.Appendf(b, "name:%x;", exe)
	}
	return b
}

// threadID formats tid as qfThreadInfo, stop replies and qXfer:threads
// all do: "p<pid>.<tid>" once multiprocess was negotiated, else "<tid>",
// in hex.
func (s *session) threadID(tid int) string {
	if s.multiprocess {
		return fmt.Sprintf("p%x.%x", s.t.Pid(), tid)
	}
	return strconv.FormatInt(int64(tid), 16)
}

// parseThreadID parses "p<pid>.<tid>", "p<pid>" or "<tid>" (hex, or -1).
// It returns the thread, with 0 for any and -1 for all.
func parseThreadID(id string) (int, error) {
	if rest, ok := strings.CutPrefix(id, "p"); ok {
		pid, tid, dot := strings.Cut(rest, ".")
		if _, err := parseTid(pid); err != nil {
			return 0, err
		}
		if !dot {
			return -1, nil
		}
		id = tid
	}
	return parseTid(id)
}

// parseTid parses a hex thread (or process) id, or -1.
func parseTid(s string) (int, error) {
	if s == "-1" {
		return -1, nil
	}
	v, err := strconv.ParseUint(s, 16, 31)
	if err != nil {
		return 0, fmt.Errorf("bad thread id %q", s)
	}
	return int(v), nil
}

// threadExists tells whether tid is one of the live threads.
func (s *session) threadExists(tid int) bool {
	if s.dead != nil {
		return false
	}
	ths, err := s.t.Threads()
	if err != nil {
		return false
	}
	for _, th := range ths {
		if th.ID == tid {
			return true
		}
	}
	return false
}

// resolve makes a thread choice (0 or -1: any) a thread: the one the
// last stop reply named, while it lives, else the one that stopped
// last, else the first one; 0 when there is none.
func (s *session) resolve(tid int) int {
	if tid > 0 {
		return tid
	}
	if s.dead != nil {
		return 0
	}
	st := s.t.LastStop()
	if s.shown > 0 && s.shown != st.Tid && s.threadExists(s.shown) {
		return s.shown
	}
	if st.Tid > 0 {
		return st.Tid
	}
	if ths, err := s.t.Threads(); err == nil && len(ths) > 0 {
		return ths[0].ID
	}
	return 0
}

// setThread answers Hg and Hc.
func (s *session) setThread(r *request) []byte {
	if len(r.args) < 2 || (r.args[0] != 'g' && r.args[0] != 'c') {
		return errReply
	}
	tid, err := parseThreadID(r.args[1:])
	if err != nil {
		return errReply
	}
	if tid > 0 && !s.threadExists(tid) {
		return errReply
	}
	if tid < 0 {
		tid = 0
	}
	if r.args[0] == 'g' {
		s.gThread = tid
	} else {
		s.cThread = tid
	}
	return []byte("OK")
}

func (s *session) currentThread(*request) []byte {
	tid := s.resolve(s.gThread)
	if tid == 0 {
		return nil
	}
	return []byte("QC" + s.threadID(tid))
}

func (s *session) threadInfoFirst(*request) []byte {
	ths, err := s.t.Threads()
	if err != nil {
		return errReply
	}
	if len(ths) == 0 || s.dead != nil {
		return []byte("l")
	}
	b := []byte{'m'}
	for i, th := range ths {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s.threadID(th.ID)...)
	}
	return b
}

func (s *session) threadAlive(r *request) []byte {
	tid, err := parseThreadID(r.args)
	if err != nil || tid <= 0 || !s.threadExists(tid) {
		return errReply
	}
	return []byte("OK")
}

// threadStopInfo answers qThreadStopInfo<tid>: the last stop for the
// thread that stopped, T00 for the others (Delve takes signal 5 as "at a
// breakpoint").
func (s *session) threadStopInfo(r *request) []byte {
	tid, err := parseTid(r.args)
	if err != nil || tid <= 0 || !s.threadExists(tid) {
		return errReply
	}
	if st := s.t.LastStop(); st.Tid == tid {
		return s.stopReply(st)
	}
	return s.stopReply(Stop{Kind: stopNone, Tid: tid})
}

// splitThreadSuffix splits lldb's ";thread:<tid>;" off a packet's
// arguments. It is accepted whether or not QThreadSuffixSupported was
// asked: nothing else looks like it. tid is 0 without a suffix.
func splitThreadSuffix(args string) (string, int, error) {
	i := strings.Index(args, ";thread:")
	if i < 0 {
		return args, 0, nil
	}
	id := strings.TrimSuffix(args[i+len(";thread:"):], ";")
	tid, err := parseThreadID(id)
	if err != nil {
		return "", 0, err
	}
	if tid < 0 {
		tid = 0
	}
	return args[:i], tid, nil
}
