package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// POSIX message queues (mq_timedsend, mq_timedreceive, and mq_send and
// mq_receive, which glibc makes with a null timeout) block in the kernel
// until another thread receives or sends. They are tried without waiting,
// as kwait.go's calls are: with an absolute timeout already past (a zero
// timespec), which the kernel answers ETIMEDOUT when the call would wait;
// the guest's own timeout, if any, runs in virtual time.

func init() {
	policy[abi.SYS_MQ_TIMEDSEND] = sysMqTimed
	policy[abi.SYS_MQ_TIMEDRECEIVE] = sysMqTimed
}

// mqScratch is how far below the guest's stack pointer (past the red
// zone) the zero timespec of a try is written.
const mqScratch = 128 + 16

func sysMqTimed(e *Engine, t *thread) {
	r := &t.regs
	deadline := int64(-1)
	if r.R8 != 0 {
		if rs := t.retry; rs != nil && rs.rip == r.Rip && rs.nr == t.nr {
			deadline = rs.deadline
		} else if d, ok := e.readDeadline(t, r.R8, true, clockRealtime); ok {
			deadline = d
		} else {
			return // a bad pointer: the kernel says EFAULT
		}
	}
	zero := (r.Rsp - mqScratch) &^ 15
	if e.t.WriteMem(t.tid, zero, make([]byte, 16)) != nil {
		return
	}
	e.tryNonblocking(t, tryCall{
		set:      func(r *abi.Regs) { r.R8 = zero },
		blocked:  []int64{-abi.ETIMEDOUT},
		restart:  -abi.ERESTARTSYS,
		deadline: deadline,
		timeout:  -abi.ETIMEDOUT,
	})
}
