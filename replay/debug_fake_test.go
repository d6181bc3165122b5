package replay

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
)

// fakeCPU is a detcore.Tracer and DebugRegs over a toy machine, enough to
// drive the debug layer through the stops the kernel gives it. All its
// threads share one memory, a byte map; an address not in it is unmapped.
// Its instructions, decoded from memory at the instruction pointer:
//
//	90     nop
//	cc     int3: SIGTRAP, ip after it, DR6 untouched
//	0f 05  syscall: a seccomp stop if its address is in intercepted, else
//	       it runs; a step over it reports SIGTRAP without DR6.BS
//	a2     store: increments the byte at stores[ip]; watchpoints trap
//	f4     exit the thread (status 0)
//
// A step of any other instruction traps with DR6.BS. A step resumed from
// a seccomp stop ends when the syscall does, with a SIGTRAP without BS.
type fakeCPU struct {
	mem         map[uint64]byte
	intercepted map[uint64]bool
	stores      map[uint64]uint64
	threads     map[int]*fthread
	order       []int
	queue       []detcore.Stop
	// log records each Resume ("1:cont", "1:step", "1:syscall") and each
	// write of one byte ("w 0x1002=cc").
	log []string
	// state is what ProcStat says of every thread ('S' if unset);
	// pending, the signals Signals says are pending at each; preempts
	// counts Preempt's SIGSTOPs.
	state    byte
	pending  uint64
	preempts int
}

type fthread struct {
	regs      abi.Regs
	dr        [8]uint64
	inSyscall bool // at a seccomp stop
	gone      bool
	// stopNext: the next resume stops at once for a SIGSTOP (the
	// watchdog's, sent before it), before any instruction runs.
	stopNext bool
}

func newFakeCPU(base uint64, code ...byte) *fakeCPU {
	f := &fakeCPU{mem: map[uint64]byte{}, intercepted: map[uint64]bool{}, stores: map[uint64]uint64{}, threads: map[int]*fthread{}}
	for i, b := range code {
		f.mem[base+uint64(i)] = b
	}
	f.addThread(1, base)
	return f
}

func (f *fakeCPU) addThread(tid int, ip uint64) {
	f.threads[tid] = &fthread{regs: abi.Regs{Rip: ip}}
	f.order = append(f.order, tid)
}

func (f *fakeCPU) list() []detcore.ThreadInfo {
	var out []detcore.ThreadInfo
	for _, tid := range f.order {
		if !f.threads[tid].gone {
			out = append(out, detcore.ThreadInfo{Tid: tid, Vtid: tid, Pid: 1, Vpid: 1, State: "ready"})
		}
	}
	return out
}

func (f *fakeCPU) live(tid int) (*fthread, error) {
	th := f.threads[tid]
	if th == nil || th.gone {
		return nil, fmt.Errorf("thread %d: %w", tid, detcore.ErrGone)
	}
	return th, nil
}

func (f *fakeCPU) Wait() (detcore.Stop, error) {
	if len(f.queue) == 0 {
		return detcore.Stop{}, errors.New("fakeCPU: Wait would block forever")
	}
	st := f.queue[0]
	f.queue = f.queue[1:]
	return st, nil
}

var modeNames = map[detcore.ResumeMode]string{detcore.ResumeCont: "cont", detcore.ResumeSyscall: "syscall", detcore.ResumeStep: "step"}

func (f *fakeCPU) Resume(tid int, mode detcore.ResumeMode, sig int) error {
	th, err := f.live(tid)
	if err != nil {
		return err
	}
	f.log = append(f.log, fmt.Sprintf("%d:%s", tid, modeNames[mode]))
	if th.stopNext {
		th.stopNext = false
		f.queue = append(f.queue, detcore.Stop{Tid: tid, Kind: detcore.StopSignal, Sig: abi.SIGSTOP})
		return nil
	}
	step := mode == detcore.ResumeStep
	trap := func() { f.queue = append(f.queue, detcore.Stop{Tid: tid, Kind: detcore.StopSignal, Sig: abi.SIGTRAP}) }
	if th.inSyscall {
		th.inSyscall = false
		switch mode {
		case detcore.ResumeSyscall:
			f.queue = append(f.queue, detcore.Stop{Tid: tid, Kind: detcore.StopSyscallExit})
			return nil
		case detcore.ResumeStep:
			trap()
			return nil
		}
	}
	for range 1000 {
		ip := th.regs.Rip
		op, ok := f.mem[ip]
		if !ok {
			return fmt.Errorf("fakeCPU: thread %d runs into unmapped %#x", tid, ip)
		}
		switch {
		case op == int3:
			th.regs.Rip++
			trap()
			return nil
		case op == 0x0f && f.mem[ip+1] == 0x05:
			th.regs.Rip += 2
			if f.intercepted[ip] {
				th.inSyscall = true
				f.queue = append(f.queue, detcore.Stop{Tid: tid, Kind: detcore.StopSeccomp})
				return nil
			}
			if step {
				trap()
				return nil
			}
			continue
		case op == 0xf4:
			th.gone = true
			f.queue = append(f.queue, detcore.Stop{Tid: tid, Kind: detcore.StopExited})
			return nil
		case op == 0xa2:
			th.regs.Rip++
			a := f.stores[ip]
			f.mem[a]++
			if hit := f.watchHits(th, a); hit != 0 {
				th.dr[6] = hit
				if step {
					th.dr[6] |= dr6Step
				}
				trap()
				return nil
			}
		case op == 0x90:
			th.regs.Rip++
		default:
			return fmt.Errorf("fakeCPU: bad instruction %#x at %#x", op, ip)
		}
		if step {
			th.dr[6] = dr6Step
			trap()
			return nil
		}
	}
	return errors.New("fakeCPU: ran 1000 instructions without a stop")
}

// watchHits returns the DR6 bits of the write watchpoints of th that
// cover addr.
func (f *fakeCPU) watchHits(th *fthread, addr uint64) uint64 {
	var hit uint64
	for i := range 4 {
		if th.dr[7]&(1<<(2*i)) == 0 {
			continue
		}
		size := map[uint64]uint64{0: 1, 1: 2, 3: 4, 2: 8}[th.dr[7]>>(18+4*i)&3]
		if addr >= th.dr[i] && addr < th.dr[i]+size {
			hit |= 1 << i
		}
	}
	return hit
}

func (f *fakeCPU) GetRegs(tid int, r *abi.Regs) error {
	th, err := f.live(tid)
	if err == nil {
		*r = th.regs
	}
	return err
}

func (f *fakeCPU) SetRegs(tid int, r *abi.Regs) error {
	th, err := f.live(tid)
	if err == nil {
		th.regs = *r
	}
	return err
}

func (f *fakeCPU) ReadMem(tid int, addr uint64, b []byte) error {
	for i := range b {
		v, ok := f.mem[addr+uint64(i)]
		if !ok {
			return fmt.Errorf("fakeCPU: %#x is not mapped", addr+uint64(i))
		}
		b[i] = v
	}
	return nil
}

func (f *fakeCPU) WriteMem(tid int, addr uint64, b []byte) error {
	for i, v := range b {
		if _, ok := f.mem[addr+uint64(i)]; !ok {
			return fmt.Errorf("fakeCPU: %#x is not mapped", addr+uint64(i))
		}
		f.mem[addr+uint64(i)] = v
	}
	if len(b) == 1 {
		f.log = append(f.log, fmt.Sprintf("w %#x=%02x", addr, b[0]))
	}
	return nil
}

func (f *fakeCPU) DebugReg(tid, i int) (uint64, error) {
	th, err := f.live(tid)
	if err != nil {
		return 0, err
	}
	return th.dr[i], nil
}

func (f *fakeCPU) SetDebugReg(tid, i int, v uint64) error {
	th, err := f.live(tid)
	if err == nil {
		th.dr[i] = v
	}
	return err
}

func (f *fakeCPU) FdKind(tid, fd int) detcore.FdKind { return detcore.FdOther }
func (f *fakeCPU) PipeSpace(tid, fd int) int         { return -1 }
func (f *fakeCPU) Poll(ws []detcore.FdWait, timeout time.Duration) ([]bool, error) {
	return make([]bool, len(ws)), nil
}
func (f *fakeCPU) Signals(tid int) (uint64, uint64, uint64, error) { return f.pending, 0, 0, nil }
func (f *fakeCPU) Caught(tid int) (uint64, uint64, error)          { return 0, 0, nil }
func (f *fakeCPU) Preempt(tid int) error                           { f.preempts++; return nil }
func (f *fakeCPU) SharedMapping(tid int, addr uint64) (uint64, uint64, uint64, bool) {
	return 0, 0, 0, false
}
func (f *fakeCPU) ProcStat(pid int) (byte, int, error) {
	if f.state == 0 {
		return 'S', pid, nil
	}
	return f.state, pid, nil
}
func (f *fakeCPU) Signal(pid, tid, sig int, info []byte) error      { return nil }
func (f *fakeCPU) AddTimerfdTicks(tid, fd int, n uint64) error      { return nil }
func (f *fakeCPU) GuestTid(tid int) (int, error)                    { return tid, nil }
func (f *fakeCPU) OnExec(int, [16]byte, bool) (detcore.Exec, error) { return detcore.Exec{}, nil }
func (f *fakeCPU) KillAll()                                         {}
func (f *fakeCPU) logSince(n int) string                            { return strings.Join(f.log[n:], " ") }
func (f *fakeCPU) regs(t *testing.T, tid int) abi.Regs              { t.Helper(); return f.threads[tid].regs }
func (f *fakeCPU) byteAt(addr uint64) byte                          { return f.mem[addr] }
func (f *fakeCPU) setIntercepted(addrs ...uint64)                   { setAll(f.intercepted, addrs) }
func setAll(m map[uint64]bool, addrs []uint64) {
	for _, a := range addrs {
		m[a] = true
	}
}
func (f *fakeCPU) dr(tid, i int) uint64        { return f.threads[tid].dr[i] }
func (f *fakeCPU) logLen() int                 { return len(f.log) }
func (f *fakeCPU) resumesSince(n int) []string { return filter(f.log[n:], ":") }
func filter(ss []string, sub string) []string {
	var out []string
	for _, s := range ss {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

var _ detcore.Tracer = (*fakeCPU)(nil)
var _ DebugRegs = (*fakeCPU)(nil)

// harness is a debug layer over a fakeCPU; the test plays the engine.
