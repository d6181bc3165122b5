package detcore

import "github.com/hermitdbg/hermit/detcore/abi"

// ioctl(FS_IOC_GETVERSION) returns a file's inode generation, which
// ext4 and tmpfs draw at random when the inode is made: a file the guest
// creates would show a new number on every run. hermit answers 0, the
// generation of a file system that keeps none, once the call has
// succeeded (so its errors stay the kernel's). Other ioctls are not
// stopped for (TracedWhen), or, in a recording, are the journal's alone.

// From <linux/fs.h>: _IOR('v', 1, long) and its 32-bit form.
const (
	fsIocGetversion   = 0x80087601
	fsIoc32Getversion = 0x80047601
)

func init() { policy[abi.SYS_IOCTL] = sysIoctl }

func sysIoctl(e *Engine, t *thread) {
	size := 0
	switch uint32(t.regs.Rsi) {
	case fsIocGetversion:
		size = 8
	case fsIoc32Getversion:
		size = 4
	default:
		t.policy = false
		return
	}
	addr := t.regs.Rdx
	t.act = actExitStop
	t.onExit = func(e *Engine, t *thread) {
		if int64(t.regs.Rax) == 0 {
			_ = e.t.WriteMem(t.tid, addr, make([]byte, size))
		}
	}
}
