package ptrace

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
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
