package detcore

import (
	"fmt"

	"github.com/hermitdbg/hermit/detcore/abi"
)

// handleSignal handles a signal-delivery-stop of t: the watchdog's own
// preemption, an rdtsc trap, or a signal to deliver.
func (e *Engine) handleSignal(t *thread, st Stop) error {
	if st.Sig == abi.SIGSTOP && int(e.watchTid.Load()) == t.tid {
		// Our own watchdog preemption: suppress it and reschedule.
		e.watchTid.Store(0)
		e.result.Stats.Preemptions++
		e.result.Stats.Nondet++
		var r abi.Regs
		_ = e.t.GetRegs(t.tid, &r)
		e.warnOnce("watchdog", fmt.Sprintf("thread %d ran for %v without a syscall (ip %#x) while other threads waited to run; "+
			"without a PMU hermit cannot yet preempt it deterministically, so it preempted it at an arbitrary point "+
			"and this run may not repeat exactly (--watchdog sets the limit)", t.vtid, e.cfg.Watchdog, r.Rip))
		e.park(t)
		return nil
	}
	if t.state == tsDying || e.running != t {
		return e.deliver(t, st.Sig)
	}
	if st.Sig == abi.SIGSEGV && (e.cfg.TrapTSC || e.cfg.CPUID != nil) {
		if done, err := e.emulateInsn(t); done || err != nil {
			return err
		}
	}
	e.digest.add(-1, int64(t.vtid), int64(st.Sig))
	return e.deliver(t, st.Sig)
}

func (e *Engine) deliver(t *thread, sig int) error {
	if err := e.t.Resume(t.tid, ResumeCont, sig); err != nil {
		return e.gone(t, err)
	}
	return nil
}

// readTSC sets rdx:rax to the virtual time-stamp counter.
func (e *Engine) readTSC(r *abi.Regs) {
	e.clock += tscStep
	e.result.Stats.TSCReads++
	ns, _ := e.now(clockMonotonic)
	tsc := uint64(ns) * (TSCHz / 1_000_000_000)
	r.Rax = tsc & 0xffffffff
	r.Rdx = tsc >> 32
}

// TSCHz is the frequency of the guest's virtual time-stamp counter.
const TSCHz = 3_000_000_000

// tscStep is the logical time one rdtsc costs, so that consecutive reads
// differ.
const tscStep = 10

// emulateInsn answers an rdtsc or rdtscp that faulted because of
// PR_SET_TSC from the virtual clock, and a cpuid that faulted because of
// ARCH_SET_CPUID from Config.CPUID. It reports false if the fault was not
// one of those.
func (e *Engine) emulateInsn(t *thread) (bool, error) {
	var r abi.Regs
	if err := e.t.GetRegs(t.tid, &r); err != nil {
		return false, e.gone(t, err)
	}
	var insn [3]byte
	if e.t.ReadMem(t.tid, r.Rip, insn[:]) != nil {
		return false, nil
	}
	switch {
	case e.cfg.CPUID != nil && insn[0] == 0x0f && insn[1] == 0xa2: // cpuid
		v := e.cfg.CPUID(uint32(r.Rax), uint32(r.Rcx))
		r.Rax, r.Rbx, r.Rcx, r.Rdx = uint64(v[0]), uint64(v[1]), uint64(v[2]), uint64(v[3])
		r.Rip += 2
		e.result.Stats.CPUIDs++
	case !e.cfg.TrapTSC:
		return false, nil
	case insn[0] == 0x0f && insn[1] == 0x31: // rdtsc
		e.readTSC(&r)
		r.Rip += 2
	case insn == [3]byte{0x0f, 0x01, 0xf9}: // rdtscp
		e.readTSC(&r)
		r.Rcx = 0 // IA32_TSC_AUX: CPU 0
		r.Rip += 3
	default:
		return false, nil
	}
	if err := e.t.SetRegs(t.tid, &r); err != nil {
		return true, e.gone(t, err)
	}
	return true, e.deliver(t, 0)
}
