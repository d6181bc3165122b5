package replay

import (
	"fmt"
	"os"
	"strings"

	"github.com/hermitdbg/hermit/detcore"
)

// What a debugger reads of a paused run beyond registers and memory.

// XState returns thread tid's XSAVE area, as PTRACE_GETREGSET
// NT_X86_XSTATE gives it: the FXSAVE area (x87, MXCSR, xmm0–15) in its
// first 512 bytes, then the XSAVE header and the extended states.
// ErrNoFPRegs: the tracer cannot read it.
func (s *Session) XState(tid int) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b []byte
	err := s.do(func(l *layer) error {
		st, ok := l.inner.(detcore.SpinTracer)
		if !ok {
			return ErrNoFPRegs
		}
		var err error
		b, err = st.VectorRegs(tid, nil)
		return err
	})
	return b, err
}

// CaptureResults makes the Session learn the result of each call a run
// stops before at an event boundary, once the run goes on: the thread is
// resumed to that call's exit (one more ptrace stop, for that call
// only). Result then has it. Call it before the first run goes on.
func (s *Session) CaptureResults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.results != nil {
		return
	}
	s.results = map[uint64]int64{}
	_ = s.do(func(l *layer) error {
		l.results = s.results
		return nil
	})
}

// Result returns the result of the call of event n, if a run has made it
// since stopping before it (CaptureResults).
func (s *Session) Result(n uint64) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var v int64
	var ok bool
	look := func(*layer) error {
		v, ok = s.results[n]
		return nil
	}
	if s.do(look) != nil {
		_ = look(nil) // no run goroutine: nothing else touches the map
	}
	return v, ok
}

// Time returns the guest's logical time at the stop, in nanoseconds since
// the run began.
func (s *Session) Time() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t int64
	err := s.do(func(l *layer) error {
		if l.clock != nil {
			t = l.clock()
		}
		return nil
	})
	return t, err
}

// Siginfo returns the siginfo_t of the signal thread tid is stopped with
// (a ReasonSignal stop).
func (s *Session) Siginfo(tid int) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last.Reason != ReasonSignal || s.last.Tid != tid {
		return nil, fmt.Errorf("thread %d is not stopped with a signal", tid)
	}
	var b []byte
	err := s.do(func(l *layer) (err error) {
		si, ok := l.inner.(SiginfoReader)
		if !ok {
			return fmt.Errorf("the tracer cannot read siginfo")
		}
		b, err = si.Siginfo(tid)
		return err
	})
	return b, err
}

// Auxv returns the auxiliary vector of the process of thread th, as the
// kernel gave it at its last exec.
func Auxv(th detcore.ThreadInfo) ([]byte, error) {
	return os.ReadFile(fmt.Sprintf("/proc/%d/auxv", th.Pid))
}

// ThreadName returns thread th's name (its comm, PR_SET_NAME), or "" if
// it is gone.
func ThreadName(th detcore.ThreadInfo) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", th.Pid, th.Tid))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

// guestPath turns a path the kernel shows hermit into the guest's own,
// given the guest's root as hermit sees it (readlink /proc/PID/root):
// false when the path is not under that root.
func guestPath(root, p string) (string, bool) {
	switch {
	case root == "/" || root == "":
		return p, true
	case p == root:
		return "/", true
	case strings.HasPrefix(p, root+"/"):
		return p[len(root):], true
	}
	return p, false
}

// guestPathOr is guestPath, leaving a path outside the root as it is.
func guestPathOr(root, p string) string {
	g, _ := guestPath(root, p)
	return g
}
