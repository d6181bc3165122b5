package ptrace

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"golang.org/x/sys/unix"
)

// remakeGuest loops on two calls hermit's filter traces (sched_yield) and
// one it lets through (getuid). In count mode, resumed from the first
// sched_yield's seccomp stop, the thread makes the second under
// PTRACE_SYSEMU, which skips it, and so the getuid after it: each is
// made again when the engine lets it run, the one through its seccomp
// stop, the other through its entry. A call that returns ENOSYS, skipped
// and never made again, ends the guest with status 99.
const remakeGuest = `
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>

// Each call at a syscall instruction of its own.
#define SC(nr) ({ long r_; __asm__ volatile("syscall" : "=a"(r_) : "a"((long)(nr)) : "rcx", "r11", "memory"); r_; })

static void on(int sig) {}

int main(void) {
	signal(SIGUSR1, on);
	for (;;) {
		if (SC(SYS_sched_yield) < 0 || SC(SYS_sched_yield) < 0 || SC(SYS_getuid) < 0)
			_exit(99);
	}
}
`

// remakeRun is the guest stopped at a call PTRACE_SYSEMU skipped (nr),
// with the watchdog's SIGSTOP taken between the call's rewind and the
// stop that would make it again: the thread is at its syscall
// instruction, the call not yet made.
type remakeRun struct {
	tr   *Tracer
	tid  int
	nr   int
	insn uint64 // the call's syscall instruction
}

func startRemake(t *testing.T, nr int) *remakeRun {
	t.Helper()
	dir := t.TempDir()
	src, prog := filepath.Join(dir, "guest.c"), filepath.Join(dir, "guest")
	if err := os.WriteFile(src, []byte(remakeGuest), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cc", "-static", "-O1", "-o", prog, src).CombinedOutput(); err != nil {
		t.Skipf("needs a C compiler that links statically (cc -static): %v: %s", err, out)
	}
	// The tracer is bound to this thread; the test's goroutine ends
	// with it locked, so the thread goes with the test.
	runtime.LockOSThread()
	tr, tid, err := Start(Options{Path: prog, Argv: []string{"guest"}, CPU: -1, Traced: detcore.InterceptedSyscalls()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tr.KillAll()
		tr.Close()
	})
	r := &remakeRun{tr: tr, tid: tid, nr: nr}
	// On to a call nr that PTRACE_SYSEMU skipped; the calls before it
	// run as the engine would let them.
	st := r.resume(t, detcore.ResumeCount, 0)
	for i := 0; ; i++ {
		if s := tr.emus[tid]; s.skipped && (st.Kind == detcore.StopUntraced || st.Kind == detcore.StopSeccomp) && r.regs(t).OrigRax == uint64(nr) {
			break
		}
		if i == 1000 {
			t.Fatalf("no skipped call %d in 1000 stops; last %+v", nr, st)
		}
		st = r.resume(t, detcore.ResumeCount, st.Sig)
	}
	r.insn = r.regs(t).Rip - 2
	// The watchdog's SIGSTOP, on its way as the engine lets the call
	// run: it is taken once the skipped call has returned, at the
	// syscall instruction.
	if err := unix.Tgkill(tid, tid, unix.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if st := r.resume(t, detcore.ResumeCount, 0); st.Kind != detcore.StopSignal || st.Sig != int(unix.SIGSTOP) {
		t.Fatalf("stop %+v, want the SIGSTOP", st)
	}
	if got := r.regs(t); got.Rip != r.insn || got.Rax != uint64(nr) {
		t.Fatalf("at the SIGSTOP: rip %#x rax %d, want the rewound call %d at %#x", got.Rip, got.Rax, nr, r.insn)
	}
	return r
}

func (r *remakeRun) resume(t *testing.T, mode detcore.ResumeMode, sig int) detcore.Stop {
	t.Helper()
	if err := r.tr.Resume(r.tid, mode, sig); err != nil {
		t.Fatal(err)
	}
	st, err := r.tr.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if st.Tid != r.tid {
		t.Fatalf("stop of thread %d, want %d", st.Tid, r.tid)
	}
	return st
}

func (r *remakeRun) regs(t *testing.T) abi.Regs {
	t.Helper()
	var regs abi.Regs
	if err := r.tr.GetRegs(r.tid, &regs); err != nil {
		t.Fatal(err)
	}
	return regs
}

// blocked is the thread's signal mask.
func (r *remakeRun) blocked(t *testing.T) uint64 {
	t.Helper()
	_, _, mask, err := r.tr.Signals(r.tid)
	if err != nil {
		t.Fatal(err)
	}
	return mask
}

// next resumes the thread as mode says to its next stop the engine would
// see, and checks that it is not the call made again (the engine has had
// its turn at it) and that the guest got no ENOSYS.
func (r *remakeRun) next(t *testing.T, mode detcore.ResumeMode, sig int) detcore.Stop {
	t.Helper()
	st := r.resume(t, mode, sig)
	if st.Kind == detcore.StopExited {
		t.Fatalf("the guest exited with status %d: a call returned ENOSYS", st.Code)
	}
	if regs := r.regs(t); (st.Kind == detcore.StopUntraced || st.Kind == detcore.StopSeccomp) && regs.Rip == r.insn+2 {
		t.Fatalf("the call the engine let run was reported again (%+v)", st)
	}
	return st
}

// after checks that the call was made, once, and the thread is after it
// with its own signal mask.
func (r *remakeRun) after(t *testing.T, what string) {
	t.Helper()
	if got := r.regs(t); got.Rip != r.insn+2 || got.OrigRax != uint64(r.nr) || int64(got.Rax) < 0 {
		t.Errorf("%s at rip %#x, call %d, rax %d; want after call %d (%#x), made", what, got.Rip, int64(got.OrigRax), int64(got.Rax), r.nr, r.insn+2)
	}
	if m := r.blocked(t); m != 0 {
		t.Errorf("signal mask %#x at %s, want the guest's, 0", m, what)
	}
}

// runsOn resumes the thread as mode says for a few rounds of the guest's
// loop, which must go on without an ENOSYS.
func (r *remakeRun) runsOn(t *testing.T, mode detcore.ResumeMode) {
	t.Helper()
	for i := 0; i < 20; i++ {
		if st := r.resume(t, mode, 0); st.Kind == detcore.StopExited {
			t.Fatalf("the guest exited with status %d: a call returned ENOSYS", st.Code)
		}
	}
}

// TestRemakeAfterStop: a stop between the rewind of a call made again
// (count mode) and the stop that makes it again does not lose the call,
// report it to the engine a second time, or leave every signal blocked,
// however the engine resumes the thread from it: as it was, counting
// calls no more, with a signal to deliver, or single-stepping it (a
// spin examination). Both ways of making a call again are tried: one
// the filter lets through (getuid) through its new entry, one it traces
// (sched_yield) through its seccomp stop.
func TestRemakeAfterStop(t *testing.T) {
	for _, c := range []struct {
		name string
		nr   int
	}{{"counted", unix.SYS_GETUID}, {"intercepted", unix.SYS_SCHED_YIELD}} {
		t.Run(c.name+"/count", func(t *testing.T) {
			r := startRemake(t, c.nr)
			r.next(t, detcore.ResumeCount, 0)
			r.runsOn(t, detcore.ResumeCount)
			if m := r.blocked(t); m != 0 {
				t.Errorf("signal mask %#x, want the guest's, 0", m)
			}
		})
		t.Run(c.name+"/cont", func(t *testing.T) {
			r := startRemake(t, c.nr)
			r.next(t, detcore.ResumeCont, 0)
			r.runsOn(t, detcore.ResumeCont)
		})
		t.Run(c.name+"/signal", func(t *testing.T) {
			r := startRemake(t, c.nr)
			st := r.next(t, detcore.ResumeCount, int(unix.SIGUSR1))
			if st.Kind != detcore.StopSignal || st.Sig != int(unix.SIGUSR1) {
				t.Fatalf("stop %+v, want the SIGUSR1 the engine sent, delivered", st)
			}
			r.after(t, "the SIGUSR1")
			r.runsOn(t, detcore.ResumeCount)
		})
		t.Run(c.name+"/moved", func(t *testing.T) {
			// The engine moves the thread past the call (as if made):
			// the next call is not taken for it.
			r := startRemake(t, c.nr)
			regs := r.regs(t)
			regs.Rip, regs.Rax = r.insn+2, 0
			if err := r.tr.SetRegs(r.tid, &regs); err != nil {
				t.Fatal(err)
			}
			st := r.resume(t, detcore.ResumeCount, 0)
			if st.Kind != detcore.StopSeccomp && st.Kind != detcore.StopUntraced {
				t.Fatalf("stop %+v, want the next call's", st)
			}
			if got := r.regs(t); got.Rip == r.insn+2 {
				t.Errorf("stop at rip %#x, the call the thread was moved past", got.Rip)
			}
			if m := r.blocked(t); m != 0 {
				t.Errorf("signal mask %#x at the next call, want the guest's, 0", m)
			}
			r.runsOn(t, detcore.ResumeCount)
		})
		t.Run(c.name+"/step", func(t *testing.T) {
			r := startRemake(t, c.nr)
			st := r.next(t, detcore.ResumeStep, 0)
			if st.Kind != detcore.StopSignal || st.Sig != int(unix.SIGTRAP) {
				t.Fatalf("stop %+v, want the step's SIGTRAP", st)
			}
			r.after(t, "the step's end")
			r.runsOn(t, detcore.ResumeCount)
		})
	}
}
