package recorder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore"
	"github.com/hermitdbg/hermit/detcore/abi"
	"github.com/hermitdbg/hermit/detcore/ptrace"
	"github.com/hermitdbg/hermit/trace"
)

// fakeHost is the kernel as the recorder sees it: descriptor classes,
// guest memory and files.
type fakeHost struct {
	classes map[int]ptrace.FdClass
	mem     fakeMem
	files   map[string]string // path: content
	cwd     string
	argv    map[int][]string  // per host tid, for Argv
	paths   map[int]string    // descriptor: path, for FdPath
	links   map[string]string // symbolic link: target
	hidden  map[string]bool   // paths the host cannot answer for (ErrNotEmulated)
}

func (h *fakeHost) FdClass(tid, fd int) ptrace.FdClass { return h.classes[fd] }
func (h *fakeHost) FdFile(tid, fd int) (*os.File, error) {
	return nil, errors.New("no descriptors in the fake")
}
func (h *fakeHost) FdPath(tid, fd int) (string, error) {
	if p, ok := h.paths[fd]; ok {
		return p, nil
	}
	return "", errors.New("no descriptors")
}
func (h *fakeHost) Cwd(tid int) (string, error) { return h.cwd, nil }
func (h *fakeHost) GuestPathExists(tid int, abs string) bool {
	_, ok := h.files[abs]
	return ok
}
func (h *fakeHost) abs(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(h.cwd, path)
}
func (h *fakeHost) Readlink(tid, dirfd int, path string) (string, error) {
	p := h.abs(path)
	target, link := h.links[p]
	_, file := h.files[p]
	switch {
	case h.hidden[p]:
		return "", detcore.ErrNotEmulated
	case link:
		return target, nil
	case file:
		return "", detcore.Errno(abi.EINVAL)
	}
	return "", detcore.Errno(abi.ENOENT)
}
func (h *fakeHost) PathExists(tid, dirfd int, path string, nofollow bool) error {
	p := h.abs(path)
	target, link := h.links[p]
	_, file := h.files[p]
	_, there := h.files[h.abs(target)]
	switch {
	case h.hidden[p]:
		return detcore.ErrNotEmulated
	case file, link && (nofollow || there):
		return nil
	}
	return detcore.Errno(abi.ENOENT)
}
func (h *fakeHost) GuestLink(tid int, abs string) (string, error) {
	if t, ok := h.links[abs]; ok {
		return t, nil
	}
	return "", os.ErrInvalid
}
func (h *fakeHost) OpenGuestPath(tid int, abs string) (*os.File, error) {
	c, ok := h.files[abs]
	if !ok {
		return nil, os.ErrNotExist
	}
	p := filepath.Join(os.TempDir(), "hermit-recorder-test-"+filepath.Base(abs))
	if err := os.WriteFile(p, []byte(c), 0o755); err != nil {
		return nil, err
	}
	defer os.Remove(p)
	return os.Open(p)
}
func (h *fakeHost) ReadString(tid int, addr uint64, max int) (string, error) {
	b := make([]byte, 0, 64)
	for i := uint64(0); i < uint64(max); i++ {
		var c [1]byte
		if err := h.mem.read(addr+i, c[:]); err != nil {
			return "", err
		}
		if c[0] == 0 {
			return string(b), nil
		}
		b = append(b, c[0])
	}
	return "", errors.New("too long")
}
func (h *fakeHost) ReadMem(tid int, addr uint64, b []byte) error    { return h.mem.read(addr, b) }
func (h *fakeHost) ExecPath(tid int) (string, error)                { return "prog", nil }
func (h *fakeHost) Signals(tid int) (uint64, uint64, uint64, error) { return 0, 0, 0, nil }
func (h *fakeHost) Argv(tid int) ([]string, error) {
	if h.argv == nil {
		return nil, errors.New("no argv")
	}
	return h.argv[tid], nil
}

// record runs calls through a recorder and returns the trace's events.
func record(t *testing.T, h *fakeHost, calls func(r *Recorder)) []trace.Event {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t")
	w, err := trace.Create(dir, trace.Header{})
	if err != nil {
		t.Fatal(err)
	}
	r := New(w, h)
	calls(r)
	if err := r.Close(detcore.Result{}, 0); err != nil {
		t.Fatal(err)
	}
	rd, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var evs []trace.Event
	for _, ev := range rd.Events() {
		e := *ev
		e.Mem = append([]trace.MemWrite(nil), ev.Mem...)
		evs = append(evs, e)
	}
	return evs
}

// call runs one call: entry, the native-run decision and, if asked, its
// exit with result res.
func call(t *testing.T, r *Recorder, nr int, args [6]uint64, res int64) detcore.Outcome {
	t.Helper()
	c := &detcore.Call{Tid: 9, Vtid: 2, Nr: nr, Args: args}
	if err := r.Enter(c); err != nil {
		t.Fatal(err)
	}
	o := r.Native(c)
	if o.Exit {
		c.Result = res
		if _, _, err := r.Exit(c); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// results returns the external results among evs.
func results(evs []trace.Event) []trace.Event {
	var out []trace.Event
	for _, ev := range evs {
		if ev.Kind == trace.KindSyscall && ev.External && ev.Sysno >= 0 {
			out = append(out, ev)
		}
	}
	return out
}

func TestRecorderKeepsWhatCameFromOutside(t *testing.T) {
	h := &fakeHost{
		classes: map[int]ptrace.FdClass{0: ptrace.FdStdio, 1: ptrace.FdStdio, 3: ptrace.FdInternal, 4: ptrace.FdExternal},
		mem:     fakeMem{0x1000: []byte("input\n.........."), 0x4000: {16, 0, 0, 0}, 0x5000: []byte("0123456789abcdef")},
		cwd:     "/work",
	}
	evs := record(t, h, func(r *Recorder) {
		call(t, r, abi.SYS_READ, [6]uint64{0, 0x1000, 16}, 6)                // stdin: kept, with the bytes
		call(t, r, abi.SYS_READ, [6]uint64{3, 0x1000, 16}, 6)                // internal pipe: not kept
		call(t, r, abi.SYS_WRITE, [6]uint64{1, 0x1000, 6}, 6)                // stdout: replay writes it for real
		call(t, r, abi.SYS_WRITE, [6]uint64{4, 0x1000, 6}, 6)                // network: result kept
		call(t, r, abi.SYS_GETSOCKNAME, [6]uint64{4, 0x5000, 0x4000}, 0)     // outputs kept
		call(t, r, abi.SYS_CONNECT, [6]uint64{3, 0x5000, 16}, 0)             // inside the guest: replayed for real
		call(t, r, abi.SYS_CONNECT, [6]uint64{3, 0x5000, 16}, -abi.ENOENT)   // failed: kept
		call(t, r, abi.SYS_MKDIR, [6]uint64{0x1000, 0o755}, -17)             // forced
		call(t, r, abi.SYS_MMAP, [6]uint64{0, 4096, 1, 2, 3, 0}, 0x7f000000) // placed
		call(t, r, abi.SYS_MMAP, [6]uint64{0, 4096, 3, 0x22, ^uint64(0), 0}, 0x7f100000)
	})
	got := results(evs)
	want := []struct {
		nr     int
		digest uint64
		res    int64
		mem    string
	}{
		{abi.SYS_READ, ResultEmulate, 6, "input\n"},
		{abi.SYS_WRITE, ResultEmulate, 6, ""},
		{abi.SYS_GETSOCKNAME, ResultEmulate, 0, "\x10\x00\x00\x000123456789abcdef"},
		{abi.SYS_CONNECT, ResultEmulate, -abi.ENOENT, ""},
		{abi.SYS_MKDIR, ResultEmulate, -17, ""}, // failed: replay does not run it
		{abi.SYS_MMAP, ResultPlace, 0x7f000000, ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d results kept, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		var mem string
		for _, m := range got[i].Mem {
			mem += string(m.Data)
		}
		if int(got[i].Sysno) != w.nr || got[i].Digest != w.digest || got[i].Result != w.res || mem != w.mem {
			t.Errorf("result %d: %s digest %d = %d, mem %q; want %s digest %d = %d, mem %q", i,
				abi.SyscallName(int(got[i].Sysno)), got[i].Digest, got[i].Result, mem, abi.SyscallName(w.nr), w.digest, w.res, w.mem)
		}
	}
	if evs[len(evs)-1].Kind != trace.KindExit || !evs[len(evs)-1].Group {
		t.Errorf("the trace ends with %+v, want the exit", evs[len(evs)-1])
	}
}

func TestRecorderArgsOnlyWhenChanged(t *testing.T) {
	h := &fakeHost{classes: map[int]ptrace.FdClass{}, mem: fakeMem{}}
	evs := record(t, h, func(r *Recorder) {
		for i := 0; i < 3; i++ {
			call(t, r, abi.SYS_UMASK, [6]uint64{1}, 2)
		}
		call(t, r, abi.SYS_UMASK, [6]uint64{2}, 2)
	})
	var withArgs []bool
	for _, ev := range evs {
		if ev.Kind == trace.KindSyscall && !ev.External {
			withArgs = append(withArgs, len(ev.Mem) == 1)
		}
	}
	if len(withArgs) != 4 || !withArgs[0] || withArgs[1] || withArgs[2] || !withArgs[3] {
		t.Errorf("arguments stored %v; want only with the first call and when they change", withArgs)
	}
}

func TestRecorderCapturesExecutables(t *testing.T) {
	h := &fakeHost{
		mem: fakeMem{},
		cwd: "/work",
		files: map[string]string{
			"/work/prog":   "#!/usr/bin/env python3\nprint(1)\n",
			"/usr/bin/env": "\x7fELF not really",
		},
	}
	evs := record(t, h, func(r *Recorder) {
		if err := r.Exec(9, 2); err != nil {
			t.Fatal(err)
		}
	})
	var paths []string
	for _, ev := range evs {
		if ev.Kind == trace.KindFile {
			paths = append(paths, ev.File.Path)
			if ev.File.Blob.IsZero() || ev.File.Mode&trace.ModeType != trace.ModeRegular {
				t.Errorf("%s captured as %+v", ev.File.Path, ev.File)
			}
		}
	}
	if len(paths) != 2 || paths[0] != "/work/prog" || paths[1] != "/usr/bin/env" {
		t.Errorf("captured %v; want the script (relative to the working directory) and its interpreter", paths)
	}
}

// TestRecorderLogsProcesses: execs (with the path as the guest named it
// and the new argv), clones and process exits are logged with guest ids,
// and Close, not told the root's tid, ends the trace with the exit of the
// first exec's process.
func TestRecorderLogsProcesses(t *testing.T) {
	h := &fakeHost{mem: fakeMem{}, cwd: "/work", files: map[string]string{},
		argv: map[int][]string{9: {"prog", "-v"}, 10: {"prog", "child", ""}}}
	evs := record(t, h, func(r *Recorder) {
		if err := r.Exec(9, 2); err != nil {
			t.Fatal(err)
		}
		r.Clone(2, 3, abi.SIGCHLD)
		if err := r.Exec(10, 3); err != nil {
			t.Fatal(err)
		}
		r.ProcessExit(3, 11)
		r.ProcessExit(2, 1<<8)
	})
	var got []string
	for _, ev := range evs {
		switch ev.Kind {
		case trace.KindExec:
			got = append(got, fmt.Sprintf("%d exec %s %q", ev.Tid, ev.Exec.Path, ev.Exec.Argv))
		case trace.KindClone:
			got = append(got, fmt.Sprintf("%d clone %d %#x", ev.Tid, ev.Child, ev.Flags))
		case trace.KindExit:
			got = append(got, fmt.Sprintf("%d exit %#x %v", ev.Tid, ev.Status, ev.Group))
		}
	}
	want := []string{
		`2 exec prog ["prog" "-v"]`, "2 clone 3 0x11", `3 exec prog ["prog" "child" ""]`,
		"3 exit 0xb true", "2 exit 0x100 true", "2 exit 0x0 true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("process events\n%q\nwant\n%q", got, want)
	}
	pt := trace.NewProcessTable(nil)
	for i := range evs {
		pt.Add(uint64(i), &evs[i])
	}
	procs := pt.Processes()
	if len(procs) != 2 || procs[0].Vpid != 2 || procs[0].Status != 1<<8 || procs[1].Ppid != 2 ||
		!procs[1].Exited || procs[1].Status != 11 || procs[1].Argv[1] != "child" {
		t.Errorf("process table %+v", procs)
	}
}

// pollHost is a host whose descriptors are never ready; it counts polls.
type pollHost struct {
	HostTracer
	polls int
}

func (h *pollHost) Poll(ws []detcore.FdWait, timeout time.Duration) ([]bool, error) {
	h.polls++
	return make([]bool, len(ws)), nil
}

// TestRecorderKeepsNoProbe: a poll whose answer the schedule depends on
// is in the trace, for replay to answer it; the watchdog's probe, made
// at a wall-clock time, reaches the host but not the trace: a replay's
// watchdog probes at other times, and met the recording's answers out of
// place (a cold-cache `go build` diverged at its 208,410th event).
func TestRecorderKeepsNoProbe(t *testing.T) {
	h := &fakeHost{classes: map[int]ptrace.FdClass{}, mem: fakeMem{}}
	host := &pollHost{}
	evs := record(t, h, func(r *Recorder) {
		tr := r.Tracer(host)
		ws := []detcore.FdWait{{Tid: 9, Fd: 3, Events: 1}}
		for _, timeout := range []time.Duration{detcore.ProbeOnly, 0, detcore.ProbeOnly} {
			if _, err := tr.Poll(ws, timeout); err != nil {
				t.Fatal(err)
			}
		}
	})
	kept := 0
	for _, ev := range evs {
		if ev.Kind == trace.KindSyscall && ev.External && ev.Sysno == -QueryPoll {
			kept++
		}
	}
	if host.polls != 3 || kept != 1 {
		t.Errorf("3 polls (2 probes) asked the host %d times and left %d answers in the trace; want 3 and 1", host.polls, kept)
	}
}

// TestRecorderKeepsPreemptedNativeCall: a call the recording lets run for
// real (a read of a pipe inside the guest), which the watchdog's stop
// interrupted before it did anything, is kept as preempted, so that
// replay has the stop interrupt it too and meets the call made again (a
// splice into a Unix socket, under load, diverged there); the exit of
// such a call that ran whole is not kept.
func TestRecorderKeepsPreemptedNativeCall(t *testing.T) {
	h := &fakeHost{classes: map[int]ptrace.FdClass{3: ptrace.FdInternal}, mem: fakeMem{}}
	args := [6]uint64{3, 0x1000, 16}
	evs := record(t, h, func(r *Recorder) {
		for _, preempted := range []bool{true, false} {
			c := &detcore.Call{Tid: 9, Vtid: 2, Nr: abi.SYS_READ, Args: args}
			if err := r.Enter(c); err != nil {
				t.Fatal(err)
			}
			if o := r.Native(c); o.Exit || o.Emulate {
				t.Fatalf("read of an internal pipe: outcome %+v, want it run for real", o)
			}
			c.Result, c.Preempted, c.Spin = -abi.ERESTARTSYS, preempted, preempted
			if !preempted {
				c.Result = 16
			}
			if _, _, err := r.Exit(c); err != nil {
				t.Fatal(err)
			}
		}
	})
	got := results(evs)
	if len(got) != 1 || got[0].Sysno != abi.SYS_READ || got[0].Digest != ResultPreempted || got[0].Result != -abi.ERESTARTSYS ||
		len(got[0].Mem) != 1 || string(got[0].Mem[0].Data) != "\x01" {
		t.Fatalf("results kept %+v; want the one read, preempted by a spin examination, with ERESTARTSYS", got)
	}
}

// TestRecorderKeepsFailedStdioWrites: a write to hermit's stdout that
// wrote all it was given keeps nothing (replay writes it again); one that
// failed (the reader had gone: EPIPE) is kept to be given without
// writing, and one that wrote a part, as forced.
func TestRecorderKeepsFailedStdioWrites(t *testing.T) {
	h := &fakeHost{classes: map[int]ptrace.FdClass{1: ptrace.FdStdio}, mem: fakeMem{}}
	evs := record(t, h, func(r *Recorder) {
		call(t, r, abi.SYS_WRITE, [6]uint64{1, 0x1000, 100}, 100)
		call(t, r, abi.SYS_WRITE, [6]uint64{1, 0x1000, 100}, 40)
		call(t, r, abi.SYS_WRITE, [6]uint64{1, 0x1000, 100}, -abi.EPIPE)
	})
	got := results(evs)
	if len(got) != 2 || got[0].Digest != ResultForce || got[0].Result != 40 || got[1].Digest != ResultEmulate || got[1].Result != -abi.EPIPE {
		t.Fatalf("results kept %+v; want the part written (40, forced) and EPIPE", got)
	}
}
