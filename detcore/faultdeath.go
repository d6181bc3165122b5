package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// The init of a pid namespace that faults with no handler is killed by
// hermit with SIGKILL (faultAgain): traced, the kernel drops its fatal
// signal. Its parent's wait reports the signal it dies of natively.

// noteFaultDeath remembers that hermit kills t's process, which would
// die of sig, for its parent's wait.
func (e *Engine) noteFaultDeath(t *thread, sig int) {
	par := t.proc.parent
	if par == nil {
		return
	}
	if par.faultDeaths == nil {
		par.faultDeaths = map[int]int{}
	}
	par.faultDeaths[t.proc.vpid] = sig
}

// reportFaultDeath, at the exit of a wait4 or waitid that reaped a child
// noteFaultDeath remembers, writes the signal it would have died of in
// place of the SIGKILL in the status or siginfo.
func (e *Engine) reportFaultDeath(t *thread) {
	r := &t.regs
	var b [28]byte
	var pid int
	var at uint64 // where the signal number is
	switch {
	case t.nr == abi.SYS_WAIT4 && int64(r.Rax) > 0 && r.Rsi != 0:
		if e.t.ReadMem(t.tid, r.Rsi, b[:4]) != nil || le32(b[:])&0x7f != abi.SIGKILL {
			return
		}
		pid, at = int(int64(r.Rax)), r.Rsi
	case t.nr == abi.SYS_WAITID && int64(r.Rax) == 0 && r.Rdx != 0:
		// struct siginfo: signo, errno, code, then pid, uid, status.
		if e.t.ReadMem(t.tid, r.Rdx, b[:]) != nil || le32(b[8:]) != cldKilled || le32(b[24:]) != abi.SIGKILL {
			return
		}
		pid, at = int(le32(b[16:])), r.Rdx+24
	default:
		return
	}
	sig, ok := t.proc.faultDeaths[pid]
	if !ok {
		return
	}
	// wait4's status keeps the signal in its low 7 bits (no core dump
	// bit: whether the kernel dumps core depends on the host's limits).
	if t.nr == abi.SYS_WAIT4 {
		sig |= int(le32(b[:])) &^ 0xff
	}
	putLE32(b[:4], uint32(sig))
	if e.t.WriteMem(t.tid, at, b[:4]) != nil {
		return
	}
	if t.nr == abi.SYS_WAIT4 || r.R10&abi.WNOWAIT == 0 {
		delete(t.proc.faultDeaths, pid)
	}
}
