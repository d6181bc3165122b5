package detcore

import (
	"fmt"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// A guest's own ptrace. Every guest thread is already hermit's tracee, and
// Linux allows one tracer per thread, so a debugger, strace or crash
// handler inside the guest cannot trace for real. The engine emulates it,
// as rr does: it keeps, per thread, which guest process traces it, turns
// the stops hermit itself sees (a signal about to be delivered, an exec)
// into ptrace-stops of the guest's tracer, reports them to that tracer's
// wait4 and waitid, and answers the tracer's requests on a stopped tracee
// (registers, memory, continue, kill, detach) with hermit's own ptrace.
// Every stop comes from the guest's own calls and signals, so the result
// is as deterministic as the rest, and the same in record and replay (the
// requests are emulated, not journaled).
//
// Syscall-stops (PTRACE_SYSCALL) and the tracing of new children are in
// guestptrace_syscall.go. Requests hermit does not emulate (single steps,
// SYSEMU, seccomp stops) fail with EIO and one warning that names them.

// ptrace requests and options from <linux/ptrace.h>.
const (
	ptTraceme      = 0
	ptPeektext     = 1
	ptPeekdata     = 2
	ptPeekuser     = 3
	ptPoketext     = 4
	ptPokedata     = 5
	ptPokeuser     = 6
	ptCont         = 7
	ptKill         = 8
	ptGetregs      = 12
	ptGetfpregs    = 14
	ptSetregs      = 13
	ptAttach       = 16
	ptDetach       = 17
	ptSetoptions   = 0x4200
	ptGeteventmsg  = 0x4201
	ptGetsiginfo   = 0x4202
	ptGetregset    = 0x4204
	ptSetregset    = 0x4205
	ptSeize        = 0x4206
	ptInterrupt    = 0x4207
	ptListen       = 0x4208
	ptSyscallInfo  = 0x420e
	ptOTraceExec   = 0x10
	ptOTraceExit   = 0x40
	ptOExitKill    = 0x100000
	ptOSysGood     = 0x1
	ptEventExec    = 4
	ptEventExit    = 6
	ptEventStop    = 128
	ntPrstatus     = 1
	ntPrfpreg      = 2
	ntX86Xstate    = 0x202
	fxsaveSize     = 512 // struct user_fpregs_struct
	userRegsSize   = 27 * 8
	userDebugRegs  = 848 // offsetof(struct user, u_debugreg)
	cldExited      = 1   // CLD_EXITED
	cldKilled      = 2   // CLD_KILLED
	cldTrapped     = 4   // CLD_TRAPPED
	wNowait        = 0x01000000
	siginfoSize    = 128
	syscallInfoLen = 24 // struct ptrace_syscall_info up to its union
)

// ptOptionsKnown are the options the emulation honours.
const ptOptionsKnown = ptOTraceExec | ptOTraceExit | ptOExitKill | ptOSysGood |
	ptOTraceFork | ptOTraceVfork | ptOTraceClone | ptOTraceVforkDone

// tracee is a guest thread's emulated ptrace state.
type tracee struct {
	tracer *process
	seized bool
	opts   uint64
	// status is the wait status of the ptrace-stop the thread is in
	// (state tsTraced); reported: the tracer's wait has seen it.
	status   int32
	reported bool
	// sig is the signal of a signal-delivery-stop, 0 for other stops;
	// trapCode is the si_code of a SIGTRAP stop the engine makes for the
	// kernel's (a single-step's over an instruction it answered).
	sig      int
	trapCode int32
	// frozen: the stop is the engine's own (an attach or an interrupt of
	// a parked thread, an exec event): the thread goes back to prev.
	frozen bool
	prev   tstate
	// pass is a signal the tracer injected that must reach the guest
	// without a second stop.
	pass int
	msg  uint64
	sc   sysStops
	// dr are the debug registers as the tracer set them; none that
	// enables a breakpoint is accepted.
	dr [8]uint64
	// exited: the thread has had its PTRACE_O_TRACEEXIT stop.
	exited bool
	// groupStop is the signal of the group stop the thread's process is
	// in, which no SIGCONT has ended yet (PTRACE_LISTEN leaves the thread
	// there; PTRACE_INTERRUPT reports it), or 0.
	groupStop int
}

func stopStatus(sig, event int) int32 { return int32((sig|event<<8)<<8 | 0x7f) }

// traceStop puts t in a ptrace-stop for its guest tracer.
func (e *Engine) traceStop(t *thread, status int32, sig int, frozen bool) {
	if e.running == t {
		e.running = nil
	}
	pt := t.pt
	pt.status, pt.reported, pt.sig, pt.frozen, pt.trapCode = status, false, sig, frozen, 0
	pt.prev = t.state
	if !frozen || pt.prev == tsRunning || pt.prev == tsStopped {
		// A group-stopped tracee runs on when its tracer continues it.
		pt.prev = tsReady
	}
	t.state = tsTraced
	e.childEpoch++
	e.digest.add(-8, int64(t.vtid), int64(status))
	// The tracer hears of it with a SIGCHLD, if it catches one.
	if c, _, err := e.t.Caught(pt.tracer.pid); err == nil && c&(1<<(abi.SIGCHLD-1)) != 0 {
		_ = e.signal(pt.tracer.pid, 0, abi.SIGCHLD, nil)
	}
}

// traceSignal handles a signal-delivery-stop of a traced thread: the
// tracer sees it first, unless it injected this signal itself.
func (e *Engine) traceSignal(t *thread, sig int) bool {
	if t.pt == nil || t.state == tsDying || sig == abi.SIGKILL {
		return false
	}
	if t.pt.pass == sig {
		t.pt.pass = 0
		return false
	}
	e.traceStop(t, stopStatus(sig, 0), sig, false)
	return true
}

// traceGroupStop reports the group stop t just entered to its tracer
// (PTRACE_EVENT_STOP for a seized tracee), which continues it.
func (e *Engine) traceGroupStop(t *thread, sig int) {
	if t.pt == nil || t.state != tsStopped {
		return
	}
	ev := 0
	if t.pt.seized {
		ev = ptEventStop
	}
	t.pt.groupStop = sig
	e.traceStop(t, stopStatus(sig, ev), 0, true)
}

// traceExec handles the exec of a traced thread: an exec event stop with
// PTRACE_O_TRACEEXEC; for a PTRACE_TRACEME or PTRACE_ATTACH tracee
// without it, the SIGTRAP the kernel would send. It reports whether t
// stays stopped.
func (e *Engine) traceExec(t *thread, formerVtid int) bool {
	pt := t.pt
	if pt == nil {
		return false
	}
	if pt.opts&ptOTraceExec != 0 {
		pt.msg = uint64(formerVtid)
		t.act = actCont
		pt.sc.at = syscallInExec
		e.traceStop(t, stopStatus(abi.SIGTRAP, ptEventExec), 0, true)
		return true
	}
	if !pt.seized {
		_ = e.signal(t.proc.pid, t.tid, abi.SIGTRAP, nil)
	}
	return false
}

// traceResume ends t's ptrace-stop, delivering sig (0: none).
func (e *Engine) traceResume(t *thread, sig int) {
	pt := t.pt
	t.state = pt.prev
	if !pt.frozen {
		t.sig = sig
		return
	}
	if sig != 0 {
		// Injected at a stop that had no signal of its own: send it, and
		// let it through when it arrives.
		pt.pass = sig
		_ = e.signal(t.proc.pid, t.tid, sig, nil)
	}
	e.traceSyscallResume(t)
}

// tracerGone detaches the tracees of p, which exited (their tracer died),
// or kills them if p asked for PTRACE_O_EXITKILL.
func (e *Engine) tracerGone(p *process) {
	for _, o := range e.ordered() {
		pt := o.pt
		if pt == nil || pt.tracer != p {
			continue
		}
		if pt.opts&ptOExitKill != 0 {
			_ = e.signal(o.proc.pid, o.tid, abi.SIGKILL, nil)
			e.setDying(o)
			continue
		}
		pt.sc.req = 0
		if o.state == tsTraced {
			e.traceResume(o, pt.sig)
		}
		o.pt = nil
	}
}

func init() { policy[abi.SYS_PTRACE] = sysPtrace }

var ptraceRequests = map[uint64]string{
	15:     "PTRACE_SETFPREGS",
	0x4203: "PTRACE_SETSIGINFO", 0x4209: "PTRACE_PEEKSIGINFO", 0x420c: "PTRACE_SECCOMP_GET_FILTER",
}

// liveThread finds the guest thread with guest tid vtid, unless it is
// on its way out.
func (e *Engine) liveThread(vtid int) *thread {
	if o := e.threadByVtid(vtid); o != nil && o.state != tsDying && o.state != tsZombie {
		return o
	}
	return nil
}

// sysPtrace emulates the guest's ptrace(request, pid, addr, data).
func sysPtrace(e *Engine, t *thread) {
	r := &t.regs
	req, addr, data := r.Rdi, r.Rdx, r.R10
	switch req {
	case ptTraceme:
		if t.pt != nil || t.proc.parent == nil {
			t.emulate(-abi.EPERM)
			return
		}
		t.pt = &tracee{tracer: t.proc.parent}
		e.dropSpinTraps(t.proc)
		t.emulate(0)
		return
	case ptAttach, ptSeize:
		t.emulate(e.ptraceAttach(t, req == ptSeize, data))
		return
	}
	o := e.liveThread(int(int32(r.Rsi)))
	if o == nil || o.pt == nil || o.pt.tracer != t.proc {
		t.emulate(-abi.ESRCH)
		return
	}
	switch req {
	case ptKill:
		_ = e.signal(o.proc.pid, o.tid, abi.SIGKILL, nil)
		for _, k := range o.proc.threads {
			e.setDying(k)
		}
		t.emulate(0)
		return
	case ptInterrupt:
		t.emulate(e.ptraceInterrupt(o))
		return
	}
	if o.state != tsTraced {
		t.emulate(-abi.ESRCH)
		return
	}
	if !o.started && (e.awaitFirstStop(o) != nil || e.threads[o.tid] != o) {
		// A new tracee stops from its first instruction: its registers
		// are there once the kernel has reported it.
		t.emulate(-abi.ESRCH)
		return
	}
	t.emulate(e.ptraceStopped(t, o, req, addr, data))
}

// ptraceAttach makes t's process the tracer of the thread named by
// ptrace's pid argument. PTRACE_ATTACH also stops it: a thread parked by
// hermit stops where it is, with the SIGSTOP the kernel would send.
func (e *Engine) ptraceAttach(t *thread, seize bool, opts uint64) int64 {
	o := e.liveThread(int(int32(t.regs.Rsi)))
	switch {
	case o == nil:
		return -abi.ESRCH
	case o.proc == t.proc || o.pt != nil:
		return -abi.EPERM
	case seize && opts&^ptOptionsKnown != 0:
		return e.ptraceRefuse(fmt.Sprintf("PTRACE_SEIZE with options %#x", opts&^ptOptionsKnown))
	}
	o.pt = &tracee{tracer: t.proc, seized: seize}
	e.dropSpinTraps(o.proc)
	if seize {
		o.pt.opts = opts // PTRACE_ATTACH ignores its data
		if o.state == tsStopped {
			// Seizing a stopped thread reports its group stop.
			o.pt.groupStop = abi.SIGSTOP
			e.traceStop(o, stopStatus(abi.SIGSTOP, ptEventStop), 0, true)
		}
		return 0
	}
	switch o.state {
	case tsReady, tsBlocked, tsNew, tsStopped:
		e.traceStop(o, stopStatus(abi.SIGSTOP, 0), 0, true)
	default:
		_ = e.signal(o.proc.pid, o.tid, abi.SIGSTOP, nil)
	}
	return 0
}

// ptraceInterrupt stops a PTRACE_SEIZE tracee where it is parked.
func (e *Engine) ptraceInterrupt(o *thread) int64 {
	if !o.pt.seized {
		return -abi.EIO
	}
	sig := abi.SIGTRAP
	if o.pt.groupStop != 0 {
		// The group stop is in effect until a SIGCONT, even for a
		// tracee its tracer continued.
		sig = o.pt.groupStop
	}
	switch o.state {
	case tsTraced:
	case tsReady, tsBlocked, tsNew, tsStopped:
		e.traceStop(o, stopStatus(sig, ptEventStop), 0, true)
	default:
		return e.ptraceRefuse("PTRACE_INTERRUPT of a thread that is running")
	}
	return 0
}

// ptraceStopped answers a request on o, a tracee in a ptrace-stop.
func (e *Engine) ptraceStopped(t, o *thread, req, addr, data uint64) int64 {
	switch req {
	case ptCont, ptDetach, ptSyscall, ptSysemu, ptSysemuStep, ptSinglestep:
		if data >= 65 {
			return -abi.EIO
		}
		o.pt.sc.req = req
		if req == ptCont || req == ptDetach {
			o.pt.sc.req = 0
		}
		e.traceResume(o, int(data))
		if req == ptDetach {
			o.pt = nil
		}
		return 0
	case ptListen:
		// A seized tracee in a group stop stays in it, but not in a
		// ptrace-stop: a SIGCONT ends it (its tracer then sees the
		// signal), as does one already sent.
		if !o.pt.seized || o.pt.status>>16 != ptEventStop || o.pt.status>>8&0xff == abi.SIGTRAP {
			return -abi.EIO
		}
		o.pt.sc.req = 0
		e.traceResume(o, 0)
		if o.pt.groupStop != 0 {
			o.state = tsStopped
		}
		return 0
	case ptPeektext, ptPeekdata:
		var b [8]byte
		if e.t.ReadMem(o.tid, addr, b[:]) != nil {
			return -abi.EIO
		}
		return e.ptraceOut(t, data, b[:])
	case ptPoketext, ptPokedata:
		var b [8]byte
		putLE64(b[:], data)
		if e.t.WriteMem(o.tid, addr, b[:]) != nil {
			return -abi.EIO
		}
		return 0
	case ptPeekuser:
		var b [8]byte
		switch {
		case addr%8 != 0:
			return -abi.EIO
		case addr < userRegsSize:
			regs, err := e.traceeRegs(o)
			if err != nil {
				return -abi.ESRCH
			}
			copy(b[:], regs[addr:])
		case addr >= userDebugRegs && addr < userDebugRegs+64:
			// The tracer's own values: none is in the CPU.
			putLE64(b[:], o.pt.dr[(addr-userDebugRegs)/8])
		default:
			return -abi.EIO
		}
		return e.ptraceOut(t, data, b[:])
	case ptPokeuser:
		if addr%8 == 0 && addr >= userDebugRegs && addr < userDebugRegs+64 {
			i := (addr - userDebugRegs) / 8
			if i == 7 && data&0xff != 0 {
				return e.ptraceRefuse("a hardware breakpoint or watchpoint (PTRACE_POKEUSER of DR7)")
			}
			o.pt.dr[i] = data
			return 0
		}
		if addr%8 != 0 || addr >= userRegsSize {
			return e.ptraceRefuse("PTRACE_POKEUSER outside the registers")
		}
		regs, err := e.traceeRegs(o)
		if err != nil {
			return -abi.ESRCH
		}
		putLE64(regs[addr:], data)
		return e.setTraceeRegs(o, regs)
	case ptGetregs:
		regs, err := e.traceeRegs(o)
		if err != nil {
			return -abi.ESRCH
		}
		return e.ptraceOut(t, data, regs)
	case ptSetregs:
		regs := make([]byte, userRegsSize)
		if e.t.ReadMem(t.tid, data, regs) != nil {
			return -abi.EFAULT
		}
		return e.setTraceeRegs(o, regs)
	case ptGetfpregs:
		vr, errno := e.traceeVectorRegs(o, true)
		if errno != 0 {
			return errno
		}
		return e.ptraceOut(t, data, vr)
	case ptGetregset, ptSetregset:
		return e.ptraceRegset(t, o, req, addr, data)
	case ptSetoptions:
		if data&^ptOptionsKnown != 0 {
			return e.ptraceRefuse(fmt.Sprintf("PTRACE_SETOPTIONS with options %#x", data&^ptOptionsKnown))
		}
		o.pt.opts = data
		return 0
	case ptGeteventmsg:
		var b [8]byte
		putLE64(b[:], o.pt.msg)
		return e.ptraceOut(t, data, b[:])
	case ptGetsiginfo:
		return e.ptraceSiginfo(t, o, data)
	case ptSyscallInfo:
		var regs abi.Regs
		if e.t.GetRegs(o.tid, &regs) != nil {
			return -abi.ESRCH
		}
		info := make([]byte, 80)
		putLE32(info[4:], auditArchX8664)
		putLE64(info[8:], regs.Rip)
		putLE64(info[16:], regs.Rsp)
		n := syscallInfo(o, info, &regs)
		if r := e.ptraceOut(t, data, info[:min(int(addr), n)]); r != 0 {
			return r
		}
		return int64(n)
	}
	name := ptraceRequests[req]
	if name == "" {
		name = fmt.Sprintf("request %#x", req)
	}
	return e.ptraceRefuse(name)
}

// ptraceRefuse fails a request the emulation does not support, and says
// so once.
func (e *Engine) ptraceRefuse(what string) int64 {
	e.warnOnce("ptrace:"+what, fmt.Sprintf("the guest called ptrace: %s is not emulated by hermit (it emulates attach, seize, traceme, "+
		"interrupt, signal, exec and syscall stops, registers, memory, cont, kill and detach), so the call fails with EIO", what))
	return -abi.EIO
}

// ptraceOut writes b to the tracer's memory at addr.
func (e *Engine) ptraceOut(t *thread, addr uint64, b []byte) int64 {
	if e.t.WriteMem(t.tid, addr, b) != nil {
		return -abi.EFAULT
	}
	return 0
}

// traceeRegs returns o's registers as struct user_regs_struct.
func (e *Engine) traceeRegs(o *thread) ([]byte, error) {
	var r abi.Regs
	if err := e.t.GetRegs(o.tid, &r); err != nil {
		return nil, err
	}
	return r.Bytes(), nil
}

func (e *Engine) setTraceeRegs(o *thread, b []byte) int64 {
	var r abi.Regs
	r.SetBytes(b)
	if e.t.SetRegs(o.tid, &r) != nil {
		return -abi.ESRCH
	}
	// A tracee parked at a syscall is resumed from these.
	o.regs = r
	return 0
}

// ptraceRegset handles PTRACE_GETREGSET and PTRACE_SETREGSET for the
// general registers (NT_PRSTATUS), through the iovec at data.
func (e *Engine) ptraceRegset(t, o *thread, req, note, data uint64) int64 {
	var iov [16]byte
	switch {
	case note == ntPrfpreg || note == ntX86Xstate:
		if req == ptSetregset {
			return e.ptraceRefuse("PTRACE_SETREGSET of the floating-point registers")
		}
		if e.t.ReadMem(t.tid, data, iov[:]) != nil {
			return -abi.EFAULT
		}
		vr, errno := e.traceeVectorRegs(o, note == ntPrfpreg)
		if errno != 0 {
			return errno
		}
		n := min(le64(iov[8:]), uint64(len(vr)))
		if r := e.ptraceOut(t, le64(iov[:8]), vr[:n]); r != 0 {
			return r
		}
		putLE64(iov[8:], n)
		return e.ptraceOut(t, data+8, iov[8:])
	case note != ntPrstatus:
		return e.ptraceRefuse(fmt.Sprintf("PTRACE_GETREGSET/SETREGSET of note type %d", note))
	}
	if e.t.ReadMem(t.tid, data, iov[:]) != nil {
		return -abi.EFAULT
	}
	base, n := le64(iov[:8]), min(le64(iov[8:]), userRegsSize)
	regs, err := e.traceeRegs(o)
	if err != nil {
		return -abi.ESRCH
	}
	if req == ptSetregset {
		if e.t.ReadMem(t.tid, base, regs[:n]) != nil {
			return -abi.EFAULT
		}
		return e.setTraceeRegs(o, regs)
	}
	if r := e.ptraceOut(t, base, regs[:n]); r != 0 {
		return r
	}
	putLE64(iov[8:], n)
	return e.ptraceOut(t, data+8, iov[8:])
}

// traceeVectorRegs returns o's x87, SSE and AVX registers in the XSAVE
// layout, or only its legacy part (struct user_fpregs_struct, FXSAVE's)
// when fx is set.
func (e *Engine) traceeVectorRegs(o *thread, fx bool) ([]byte, int64) {
	st, ok := e.t.(SpinTracer)
	if !ok {
		return nil, e.ptraceRefuse("reading the floating-point registers")
	}
	vr, err := st.VectorRegs(o.tid, nil)
	if err != nil || len(vr) < fxsaveSize {
		return nil, -abi.ESRCH
	}
	if fx {
		vr = vr[:fxsaveSize]
	}
	return vr, 0
}

// ptraceSiginfo writes the siginfo of o's stop: the kernel's for a
// signal-delivery-stop, a SIGTRAP's for the engine's own stops.
func (e *Engine) ptraceSiginfo(t, o *thread, addr uint64) int64 {
	info := make([]byte, siginfoSize)
	if si, ok := e.t.(SiginfoTracer); ok && o.pt.sig != 0 {
		b, err := si.Siginfo(o.tid)
		if err != nil {
			return -abi.ESRCH
		}
		copy(info, b)
	} else {
		// A syscall-stop's or event's: si_code is SIGTRAP|0x80 or
		// SIGTRAP|event<<8.
		signo, code := uint32(o.pt.status>>8&0x7f), uint32(o.pt.status>>8&0xffff)
		if o.pt.trapCode != 0 {
			code = uint32(o.pt.trapCode)
		}
		putLE32(info, signo)
		if code != signo {
			putLE32(info[8:], code)
		}
	}
	return e.ptraceOut(t, addr, info)
}
