package ptrace

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/sys/unix"
)

// TestPtraceErrorNamesRequest: a failed ptrace call says which request
// failed (a fatal error read "thread N: input/output error" and no
// more), and still matches its errno, so that a thread gone is ErrGone.
func TestPtraceErrorNamesRequest(t *testing.T) {
	// This process is nobody's tracee of ours: ESRCH.
	err := ptraceRaw(unix.PTRACE_CONT, os.Getpid(), 0, 9)
	if err == nil {
		t.Fatal("PTRACE_CONT of an untraced process succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "PTRACE_CONT (signal 9)") || !strings.Contains(msg, "no such process") {
		t.Errorf("error %q does not name the request, its signal and the errno", msg)
	}
	if !errors.Is(err, unix.ESRCH) || !errors.Is(gone(err), detcore.ErrGone) {
		t.Errorf("error %v does not match ESRCH and ErrGone", err)
	}
	if err := setRegs(os.Getpid(), nil); err == nil || !strings.HasPrefix(err.Error(), "PTRACE_SETREGS: ") {
		t.Errorf("PTRACE_SETREGS of an untraced process: %v", err)
	}
}

// TestPointersSurviveStackGrowth: a ptrace request that reads into or
// from hermit's memory gets that memory, wherever the goroutine's stack
// must grow on the way to the syscall. The pointer once became a number
// before a function's prologue that could grow (and move) the stack, and
// the kernel then wrote the old copy: GETREGS gave zeros now and then,
// which took a syscall's entry for its exit and handed a guest ENOSYS.
// Each try reads the registers of a child stopped at its exec on a fresh
// goroutine's small stack, filled to a depth that moves in steps smaller
// than a frame, so that some try grows the stack inside the request.
func TestPointersSurviveStackGrowth(t *testing.T) {
	for depth := 0; depth < 300; depth++ {
		rip, err := regsAtDepth(depth)
		if err != nil {
			t.Fatal(err)
		}
		if rip == 0 {
			t.Fatalf("GETREGS with the stack %d frames deep read rip 0: the kernel wrote where the registers were before the stack moved", depth)
		}
	}
}

// regsAtDepth starts a traced child, stopped at its exec, and reads its
// rip with depth small frames on the stack of a new goroutine.
func regsAtDepth(depth int) (uint64, error) {
	type result struct {
		rip uint64
		err error
	}
	done := make(chan result)
	go func() {
		// Left locked: the thread, the child's tracer, ends with it.
		runtime.LockOSThread()
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
		if err := cmd.Start(); err != nil {
			done <- result{err: err}
			return
		}
		defer cmd.Wait()
		defer cmd.Process.Kill()
		if _, _, err := wait4(cmd.Process.Pid, 0); err != nil {
			done <- result{err: err}
			return
		}
		var rip uint64
		var err error
		deep(depth, func() {
			var r abi.Regs
			err = getRegs(cmd.Process.Pid, &r)
			rip = r.Rip
		})
		done <- result{rip, err}
	}()
	r := <-done
	return r.rip, r.err
}

// deep calls f under n frames of 32 bytes or so.
//
//go:noinline
func deep(n int, f func()) {
	if n > 0 {
		deep(n-1, f)
		return
	}
	f()
}
