package ptrace

import (
	"encoding/binary"
	"unsafe"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/sys/unix"
)

// Count mode (detcore/count.go) with PTRACE_SYSCALL and PTRACE_SYSEMU.
//
// A thread resumed with ResumeCount stops at the entry of every syscall,
// where the tracer runs hermit's seccomp program on the call (the kernel
// runs it later: seccomp comes after the entry stop). A call the filter
// lets through is reported as StopUntraced, before it runs; for any other
// the kernel's seccomp stop follows and goes to the engine as in any run.
// The request that resumes it depends on where it stands:
//
//   - From a seccomp stop, PTRACE_SYSEMU: the call runs with no exit stop,
//     and the next call stops at its entry, skipped. If it is one for the
//     kernel's filter, it is reported as its seccomp stop (StopSeccomp),
//     from its entry: one stop, as outside count mode, when the engine
//     emulates it; made again when the engine lets it run, its seccomp
//     stop then the tracer's. If not, it is reported as StopUntraced;
//     resumed, it is made again under PTRACE_SYSCALL, whose exit stop for
//     the skipped call and entry stop for the new one are the tracer's.
//   - From anywhere else, PTRACE_SYSCALL: the call runs to an exit stop,
//     which the tracer takes, so that a thread looping on calls the
//     filter lets through pays two stops a call.
//
// ResumeCountStep is a single step, except at a syscall instruction: that
// one runs under PTRACE_SYSCALL, to its entry, and the step ends after
// the call (the next resume from the entry single steps it).

// emuState is the count-mode state of one thread.
type emuState struct {
	// count: resumed with ResumeCount or ResumeCountStep, the thread's
	// syscall stops are the tracer's to classify.
	count bool
	// req is the request that last resumed the thread.
	req int
	// atSeccomp: the last stop reported was a seccomp stop.
	atSeccomp bool
	// skipped: stopped at a call PTRACE_SYSEMU skipped, reported as
	// StopUntraced, or as StopSeccomp when the kernel's filter traces it
	// (intercepted); remade: that call is being made again, and after
	// resumes the thread at the new call's entry; swallow, when not 0,
	// resumes the thread from the remade call's seccomp stop.
	skipped, remade, intercepted bool
	after, swallow, swallowSig   int
	// masked: the thread's signal mask is all blocked while a call is
	// made again; mask is its own, given back at the call's seccomp stop.
	masked bool
	mask   uint64
	// ip and nr are the call being made again: where its entry or
	// seccomp stop reports it (after its syscall instruction), and its
	// number.
	ip, nr uint64
	// ownFilter: the thread has a seccomp filter of the guest's own
	// (OwnFilter).
	ownFilter bool
}

// OwnFilter implements detcore.FilterTracer: a thread under a seccomp
// filter of the guest's own is never resumed with PTRACE_SYSEMU, which
// skips a call before the kernel's filters run: a call the engine then
// emulates would pass by the guest's filter (its SECCOMP_RET_TRAP,
// ERRNO or KILL for it never came). Its calls run to their seccomp stop
// as outside count mode (a traced one costs the entry stop too).
func (t *Tracer) OwnFilter(tid int) {
	s := t.emus[tid]
	if s == nil {
		s = &emuState{}
		t.emus[tid] = s
	}
	s.ownFilter = true
}

// getSigmask and setSigmask read and set a stopped thread's signal mask
// (PTRACE_GETSIGMASK, PTRACE_SETSIGMASK).
func getSigmask(tid int, mask *uint64) error {
	return ptracePtr(unix.PTRACE_GETSIGMASK, tid, 8, unsafe.Pointer(mask))
}

func setSigmask(tid int, mask uint64) error {
	return ptracePtr(unix.PTRACE_SETSIGMASK, tid, 8, unsafe.Pointer(&mask))
}

// SignalMask implements detcore.MaskTracer.
func (t *Tracer) SignalMask(tid int) (uint64, error) {
	var m uint64
	return m, gone(getSigmask(tid, &m))
}

// SetSignalMask implements detcore.MaskTracer.
func (t *Tracer) SetSignalMask(tid int, mask uint64) error { return gone(setSigmask(tid, mask)) }

// syscallInfo is struct ptrace_syscall_info (PTRACE_GET_SYSCALL_INFO) for
// an entry stop.
type syscallInfo struct {
	Op   uint8
	_    [3]uint8
	Arch uint32
	IP   uint64
	SP   uint64
	Nr   uint64
	Args [6]uint64
	_    [2]uint32
}

func getSyscallInfo(tid int, info *syscallInfo) error {
	return ptracePtr(unix.PTRACE_GET_SYSCALL_INFO, tid, unsafe.Sizeof(*info), unsafe.Pointer(info))
}

// Resume implements detcore.Tracer.Resume.
func (t *Tracer) Resume(tid int, mode detcore.ResumeMode, sig int) error {
	t.dropHeld()
	s := t.emus[tid]
	counting := mode == detcore.ResumeCount || mode == detcore.ResumeCountStep
	if s == nil && !counting {
		return gone(ptraceRaw(request(mode), tid, 0, uintptr(sig)))
	}
	if s == nil {
		s = &emuState{}
		t.emus[tid] = s
	}
	if s.remade || s.swallow != 0 {
		// A stop came between the rewind of a call being made again and
		// the stop that makes it (the watchdog's SIGSTOP, which no mask
		// holds back): the thread is at the syscall instruction, and the
		// engine has seen the call already. It goes on to that stop, its
		// new entry or its seccomp stop, as remake left it, and from
		// there as mode now says: a step ends after the call. Forgetting
		// the remake would report the call a second time (a second turn
		// for one call, and a recording whose events replay does not
		// make), leave every signal blocked, or, from a seccomp stop,
		// resume the thread as it was resumed before (PTRACE_SYSEMU in
		// count mode: its next call skipped, and never made, fails with
		// ENOSYS). A signal the engine sends now finds them all blocked:
		// the kernel keeps it pending until that stop gives the mask
		// back, and it is taken after the call, as one sent to a call
		// made again in remake.
		s.count = counting
		req := unix.PTRACE_SYSCALL
		if s.remade {
			s.after = request(mode)
		}
		if s.swallow != 0 {
			s.swallow, req = afterSeccomp(mode, s), unix.PTRACE_CONT
		}
		return t.resumeReq(tid, s, req, sig)
	}
	s.count, s.remade = counting, false
	atSeccomp := s.atSeccomp
	s.atSeccomp = false
	if s.skipped {
		s.skipped = false
		return t.remake(tid, s, mode, sig)
	}
	req := request(mode)
	switch {
	case mode == detcore.ResumeCount && atSeccomp && !s.ownFilter:
		req = unix.PTRACE_SYSEMU
	case mode == detcore.ResumeCountStep && t.atSyscallInsn(tid):
		req = unix.PTRACE_SYSCALL
	}
	return t.resumeReq(tid, s, req, sig)
}

// request maps a resume mode to its ptrace request, outside the cases
// Resume decides.
func request(mode detcore.ResumeMode) int {
	switch mode {
	case detcore.ResumeSyscall, detcore.ResumeCount:
		return unix.PTRACE_SYSCALL
	case detcore.ResumeStep, detcore.ResumeCountStep:
		return unix.PTRACE_SINGLESTEP
	}
	return unix.PTRACE_CONT
}

func (t *Tracer) resumeReq(tid int, s *emuState, req, sig int) error {
	s.req = req
	return gone(ptraceRaw(req, tid, 0, uintptr(sig)))
}

// rewind sets tid back to the syscall instruction of the call it is
// stopped at, its number in rax, so that it makes the call again; it
// reports false if the call was emulated (orig_rax -1).
func rewind(tid int) (bool, abi.Regs, error) {
	var r abi.Regs
	if err := getRegs(tid, &r); err != nil {
		return false, r, gone(err)
	}
	if int64(r.OrigRax) == -1 {
		return false, r, nil
	}
	// Two bytes: syscall, sysenter and int $0x80 alike.
	r.Rip -= 2
	r.Rax = r.OrigRax
	return true, r, gone(setRegs(tid, &r))
}

// remake resumes tid, at a call PTRACE_SYSEMU skipped, so that the call
// runs, then on as mode says.
func (t *Tracer) remake(tid int, s *emuState, mode detcore.ResumeMode, sig int) error {
	intercepted := s.intercepted
	s.intercepted = false
	again, r, err := rewind(tid)
	if err != nil {
		return err
	}
	req := request(mode)
	if !again && intercepted {
		// Emulated where the engine saw it: on as from its seccomp stop.
		req = afterSeccomp(mode, s)
	}
	viaEntry := false
	if again {
		s.ip, s.nr = r.Rip+2, r.Rax
		// A signal goes in where the call's first seccomp stop would
		// have taken it (sent now, it would come at the syscall
		// instruction, before the call, not during it: a pause made
		// again would wait for another), and until then every signal
		// waits. So too for a call the filter lets through (counted):
		// its signal comes after it, as from an entry stop PTRACE_SYSEMU
		// did not make, not before it (the call, made again after the
		// handler, would take a second turn: a recording, whose stops
		// before the call may differ, would not follow the run).
		s.swallowSig, sig = sig, 0
		if err := getSigmask(tid, &s.mask); err != nil {
			return gone(err)
		}
		if err := setSigmask(tid, ^uint64(0)); err != nil {
			return gone(err)
		}
		s.masked = true
		if intercepted && filterAction(t.filter, regsInfo(&r)) == unix.SECCOMP_RET_TRACE {
			// Its seccomp stop is the tracer's.
			s.swallow = afterSeccomp(mode, s)
		} else {
			// A counted call, or one the engine changed into a call
			// the filter lets through (a waiting lock tried without
			// waiting): the mask goes back at its entry.
			viaEntry = true
		}
	}
	if !again || (req == unix.PTRACE_CONT || s.swallow != 0) && !viaEntry {
		// A call its seccomp stop will take (swallowed) needs no stop
		// before it: without PTRACE_SYSCALL, the skipped call has no exit
		// stop and the new one no entry stop, and its seccomp stop
		// resumes it as mode says. Two stops for a call the engine lets
		// run, not four.
		if again && s.swallow != 0 {
			req = unix.PTRACE_CONT
		}
		return t.resumeReq(tid, s, req, sig)
	}
	// Through the skipped call's exit and the new call's entry, both the
	// tracer's; from the entry the call runs as mode says.
	s.remade, s.after = true, req
	return t.resumeReq(tid, s, unix.PTRACE_SYSCALL, sig)
}

// atSyscallInsn reports whether tid's next instruction is a syscall.
func (t *Tracer) atSyscallInsn(tid int) bool {
	var r abi.Regs
	var insn [2]byte
	if getRegs(tid, &r) != nil || t.ReadMem(tid, r.Rip, insn[:]) != nil {
		return false
	}
	return insn == [2]byte{0x0f, 0x05}
}

// seccompStop notes that tid's stop to report is a seccomp stop.
func (t *Tracer) seccompStop(tid int) {
	if s := t.emus[tid]; s != nil {
		s.atSeccomp = true
	}
}

// syscallStop classifies a SIGTRAP|0x80 stop of tid. It returns the stop to
// report, or ok false when the tracer handled the stop itself and the
// thread runs on.
func (t *Tracer) syscallStop(tid int, st detcore.Stop) (detcore.Stop, bool, error) {
	st.Kind = detcore.StopSyscallExit
	s := t.emus[tid]
	if s == nil || (!s.count && !s.remade) {
		return st, true, nil
	}
	var info syscallInfo
	if err := getSyscallInfo(tid, &info); err != nil {
		return st, true, gone(err)
	}
	entry := info.Op == unix.PTRACE_SYSCALL_INFO_ENTRY
	if s.remade && entry && (info.IP != s.ip || info.Nr != s.nr) {
		// Not the call being made again: that one was made, or not,
		// without the stop (remakeLost). This call is classified as
		// itself.
		if err := t.remakeLost(tid, s); err != nil {
			return st, true, err
		}
	}
	switch {
	case s.remade && entry:
		s.remade = false
		sig := 0
		if s.masked && s.swallow == 0 {
			// A remade call the filter lets through (remake).
			s.masked, sig, s.swallowSig = false, s.swallowSig, 0
			if err := setSigmask(tid, s.mask); err != nil {
				return st, true, gone(err)
			}
		}
		return st, false, t.resumeReq(tid, s, s.after, sig)
	case s.remade || !entry:
		return st, false, t.resumeReq(tid, s, unix.PTRACE_SYSCALL, 0)
	}
	emu := s.req == unix.PTRACE_SYSEMU
	if filterAction(t.filter, &info) == unix.SECCOMP_RET_ALLOW {
		s.skipped = emu
		st.Kind, st.Msg = detcore.StopUntraced, info.Nr
		return st, true, nil
	}
	// One for the kernel's filter: its seccomp stop comes next.
	if !emu {
		return st, false, t.resumeReq(tid, s, unix.PTRACE_SYSCALL, 0)
	}
	// Skipped already: reported as the seccomp stop it would come to,
	// with the same registers. An emulated call costs no second stop;
	// one the engine lets run is made again (remake), and its seccomp
	// stop is the tracer's.
	s.skipped, s.intercepted, s.atSeccomp = true, true, true
	st.Kind = detcore.StopSeccomp
	return st, true, nil
}

// regsInfo is the seccomp view of the call in r, at its syscall
// instruction.
func regsInfo(r *abi.Regs) *syscallInfo {
	info := &syscallInfo{Arch: unix.AUDIT_ARCH_X86_64, IP: r.Rip + 2, Nr: r.Rax}
	info.Args = [6]uint64{r.Rdi, r.Rsi, r.Rdx, r.R10, r.R8, r.R9}
	return info
}

// afterSeccomp is the request that resumes a thread from a seccomp stop
// as mode says.
func afterSeccomp(mode detcore.ResumeMode, s *emuState) int {
	if mode == detcore.ResumeCount && !s.ownFilter {
		return unix.PTRACE_SYSEMU
	}
	return request(mode)
}

// swallowed handles the seccomp stop of a call remade after the engine
// saw it at its entry (syscallStop): it resumes the thread as the engine
// asked, and reports whether the stop was that one.
func (t *Tracer) swallowed(tid int) (bool, error) {
	s := t.emus[tid]
	if s == nil || s.swallow == 0 {
		return false, nil
	}
	var info syscallInfo
	if err := getSyscallInfo(tid, &info); err != nil {
		return true, gone(err)
	}
	if info.IP != s.ip || info.Nr != s.nr {
		// Not the call being made again: the engine's to see.
		return false, t.remakeLost(tid, s)
	}
	req, sig := s.swallow, s.swallowSig
	s.swallow, s.swallowSig = 0, 0
	if s.masked {
		s.masked = false
		if err := setSigmask(tid, s.mask); err != nil {
			return true, gone(err)
		}
	}
	return true, t.resumeReq(tid, s, req, sig)
}

// remakeLost forgets the call being made again, at a stop of another
// call: the thread's own signal mask goes back, and a signal held for
// after the call is sent again. Resume keeps a remake across every stop
// the engine sees between the rewind and the call, so this is a guard:
// a lost remake must not make the tracer take another call for it (one
// PTRACE_SYSEMU skipped, resumed as if made, fails with ENOSYS).
func (t *Tracer) remakeLost(tid int, s *emuState) error {
	s.remade, s.swallow = false, 0
	sig := s.swallowSig
	s.swallowSig = 0
	if s.masked {
		s.masked = false
		if err := setSigmask(tid, s.mask); err != nil {
			return gone(err)
		}
	}
	if sig != 0 {
		return gone(tkill(tid, unix.Signal(sig)))
	}
	return nil
}

// filterAction runs the classic BPF program prog, as seccomp would, on a
// call, and returns its action (SECCOMP_RET_TRACE for anything it cannot
// run: the kernel then decides). It knows the instructions buildFilter
// emits.
func filterAction(prog []unix.SockFilter, info *syscallInfo) uint32 {
	var data [64]byte
	binary.LittleEndian.PutUint32(data[offNr:], uint32(info.Nr))
	binary.LittleEndian.PutUint32(data[offArch:], info.Arch)
	binary.LittleEndian.PutUint64(data[8:], info.IP)
	for i, a := range info.Args {
		binary.LittleEndian.PutUint64(data[offArgs+8*i:], a)
	}
	action, _ := runProg(prog, func(off uint32) (uint32, bool) {
		if off+4 > uint32(len(data)) {
			return 0, false
		}
		return binary.LittleEndian.Uint32(data[off:]), true
	})
	return action
}

// runProg runs prog, the subset of classic BPF hermit's filters use,
// reading the words of seccomp_data with load; ok is false when load
// could not give one (the action is then SECCOMP_RET_TRACE).
func runProg(prog []unix.SockFilter, load func(off uint32) (uint32, bool)) (action uint32, ok bool) {
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		f := prog[pc]
		switch f.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if acc, ok = load(f.K); !ok {
				return unix.SECCOMP_RET_TRACE, false
			}
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(f.K)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			pc += branch(acc == f.K, f)
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			pc += branch(acc >= f.K, f)
		case unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K:
			pc += branch(acc > f.K, f)
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			pc += branch(acc&f.K != 0, f)
		case unix.BPF_RET | unix.BPF_K:
			return f.K, true
		default:
			return unix.SECCOMP_RET_TRACE, true
		}
	}
	return unix.SECCOMP_RET_TRACE, true
}

func branch(cond bool, f unix.SockFilter) int {
	if cond {
		return int(f.Jt)
	}
	return int(f.Jf)
}
