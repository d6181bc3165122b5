package recorder

import (
	"testing"

	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/trace"
)

// TestQueriesAnsweredAtEntry checks which readlink and access calls the
// recorder answers at their entry (one stop) and which it lets run to
// their exit, and that the trace keeps the same result either way.
func TestQueriesAnsweredAtEntry(t *testing.T) {
	h := &fakeHost{
		classes: map[int]ptrace.FdClass{},
		mem: fakeMem{
			0x1000: []byte("/usr/bin/cc\x00"), 0x2000: []byte("/nowhere\x00"), 0x3000: []byte("/lib\x00"),
			0x4000: []byte("cc\x00"), 0x5000: []byte("/proc/self/exe\x00"), 0x6000: []byte("/dangling\x00"),
		},
		files:  map[string]string{"/usr/bin/cc": "ELF", "/usr/bin/x": ""},
		links:  map[string]string{"/lib": "usr/lib", "/dangling": "/gone"},
		hidden: map[string]bool{"/proc/self/exe": true},
		cwd:    "/usr/bin",
	}
	const (
		fOK, xOK = 0, 1
		nofollow = 0x100
	)
	fdcwd := int32(abi.AT_FDCWD)
	cwdFd := uint64(uint32(fdcwd))
	cases := []struct {
		name    string
		nr      int
		args    [6]uint64
		res     int64 // the kernel's result, when the call runs
		emulate bool  // answered at the entry
	}{
		{"readlink of a file", abi.SYS_READLINK, [6]uint64{0x1000, 0x9000, 64}, -abi.EINVAL, true},
		{"readlink of nothing", abi.SYS_READLINK, [6]uint64{0x2000, 0x9000, 64}, -abi.ENOENT, true},
		{"readlinkat, relative", abi.SYS_READLINKAT, [6]uint64{cwdFd, 0x4000, 0x9000, 64}, -abi.EINVAL, true},
		{"readlink of a link: its target goes through the kernel", abi.SYS_READLINK, [6]uint64{0x3000, 0x9000, 64}, 7, false},
		{"readlink with a size of 0: EINVAL first", abi.SYS_READLINK, [6]uint64{0x2000, 0x9000, 0}, -abi.EINVAL, false},
		{"readlink the host cannot answer", abi.SYS_READLINK, [6]uint64{0x5000, 0x9000, 64}, 12, false},
		{"access F_OK of a file", abi.SYS_ACCESS, [6]uint64{0x1000, fOK}, 0, true},
		{"access X_OK of a file: a permission check", abi.SYS_ACCESS, [6]uint64{0x1000, xOK}, 0, false},
		{"access X_OK of nothing", abi.SYS_ACCESS, [6]uint64{0x2000, xOK}, -abi.ENOENT, true},
		{"access of a bad mode", abi.SYS_ACCESS, [6]uint64{0x1000, 8}, -abi.EINVAL, false},
		{"faccessat of a dangling link", abi.SYS_FACCESSAT, [6]uint64{cwdFd, 0x6000, fOK}, -abi.ENOENT, true},
		{"faccessat2 of a dangling link, not followed", abi.SYS_FACCESSAT2, [6]uint64{cwdFd, 0x6000, fOK, nofollow}, 0, true},
		{"faccessat2 with an unknown flag", abi.SYS_FACCESSAT2, [6]uint64{cwdFd, 0x6000, fOK, 0x8000}, -abi.EINVAL, false},
	}
	evs := record(t, h, func(r *Recorder) {
		for _, c := range cases {
			o := call(t, r, c.nr, c.args, c.res)
			switch {
			case o.Emulate != c.emulate || o.Exit == c.emulate:
				t.Errorf("%s: emulated %v, let run to its exit %v; want emulated %v", c.name, o.Emulate, o.Exit, c.emulate)
			case o.Emulate && o.Result != c.res:
				t.Errorf("%s: answered %d, want the kernel's %d", c.name, o.Result, c.res)
			}
		}
	})
	got := results(evs)
	if len(got) != len(cases) {
		t.Fatalf("%d results kept, want %d", len(got), len(cases))
	}
	for i, c := range cases {
		if ev := got[i]; int(ev.Sysno) != c.nr || ev.Result != c.res || ev.Digest != ResultEmulate {
			t.Errorf("%s: kept %s = %d (digest %d), want %s = %d as replay emulates it", c.name,
				abi.SyscallName(int(ev.Sysno)), ev.Result, ev.Digest, abi.SyscallName(c.nr), c.res)
		}
	}
	if evs[len(evs)-1].Kind != trace.KindExit {
		t.Errorf("the trace ends with %+v, want the exit", evs[len(evs)-1])
	}
}
