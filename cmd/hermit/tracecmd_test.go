package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/trace"
	"github.com/hermitdbg/hermit/trace/tracetest"
)

// runTraceCmd runs "hermit trace ARGS..." in-process with base as the trace
// directory and returns its exit status, stdout and stderr.
func runTraceCmd(t *testing.T, base string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("HERMIT_TRACE_DIR", base)
	var stdout, stderr bytes.Buffer
	code := runTrace(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// makeTrace records events into a new trace of program in base, as the
// recorder will, and makes it the latest.
func makeTrace(t *testing.T, base, program string, evs []trace.Event, opts trace.Options) string {
	t.Helper()
	dir, err := trace.NewDir(base, program)
	if err != nil {
		t.Fatal(err)
	}
	traces++
	w, err := trace.CreateOptions(dir, trace.Header{
		Hermit: version, Created: time.Date(2026, 3, 4, 5, 6, traces, 0, time.UTC),
		Argv: []string{program, "-l", "a b"}, Env: []string{"HOME=/root"}, Dir: "/work",
		Flags: map[string]string{"seed": "7"}, Kernel: "6.18.44", CPU: "AMD EPYC",
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The blob that everyKind's exec and mmap events refer to.
	if _, err := w.PutBlob(strings.NewReader("ls")); err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Append(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := trace.SetLatest(base, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// traces counts the traces made by makeTrace, to give each its own time.
var traces int

func everyKind() []trace.Event {
	blob := trace.BlobOf([]byte("ls"))
	return []trace.Event{
		{Kind: trace.KindExec, Tid: 100, Exec: &trace.Exec{Path: "/bin/ls", Argv: []string{"ls", "-l"},
			Files: []trace.MappedFile{{Path: "/bin/ls", Blob: blob, Addr: 0x400000}}}},
		{Kind: trace.KindClone, Tid: 100, Child: 101, Flags: 0x3d0f00},
		{Kind: trace.KindSyscall, Tid: 101, Sysno: 0, External: true, Digest: 0xab, Result: 5,
			Mem: []trace.MemWrite{{Addr: 0x7000, Data: []byte("hi\n\x00!")}}},
		{Kind: trace.KindSyscall, Tid: 100, Sysno: 257, Digest: 0xcd, Result: -2},
		{Kind: trace.KindTiming, Tid: 101, Time: 1_500_000_000},
		{Kind: trace.KindSignal, Tid: 101, Signo: 11, Code: 1, Deterministic: true},
		{Kind: trace.KindMmap, Tid: 100, Map: &trace.MappedFile{Path: "/lib/libc.so.6", Blob: blob, Addr: 0x7f00, Len: 0x1000}},
		{Kind: trace.KindExit, Tid: 101, Status: 9},
		{Kind: trace.KindExit, Tid: 100, Status: 3 << 8, Group: true},
	}
}

func TestTraceLsEmpty(t *testing.T) {
	base := filepath.Join(t.TempDir(), "none")
	code, out, errOut := runTraceCmd(t, base, "ls")
	if code != 0 || out != "no traces in "+base+"\n" || errOut != "" {
		t.Errorf("ls of no traces: %d, %q, %q", code, out, errOut)
	}
	code, _, errOut = runTraceCmd(t, base, "info")
	if code != 1 || errOut != "hermit trace info: no latest trace in "+base+"\n" {
		t.Errorf("info without traces: %d, %q", code, errOut)
	}
}

func TestTraceLsInfoDump(t *testing.T) {
	base := t.TempDir()
	makeTrace(t, base, "/usr/bin/true", nil, trace.Options{})
	dir := makeTrace(t, base, "/bin/ls", everyKind(), trace.Options{})

	code, out, errOut := runTraceCmd(t, base, "ls")
	if code != 0 || errOut != "" {
		t.Fatalf("ls: %d, %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") ||
		!regexp.MustCompile(`^true-1 +/usr/bin/true +\S+ \S+ +\S+ \S+ +0 +ok$`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^ls-1 \* +/bin/ls .* 9 +ok$`).MatchString(lines[2]) {
		t.Errorf("ls output:\n%s", out)
	}

	code, out, errOut = runTraceCmd(t, base, "info")
	if code != 0 || errOut != "" {
		t.Fatalf("info: %d, %q", code, errOut)
	}
	for _, want := range []string{
		"trace:       " + dir, "command:     /bin/ls -l \"a b\"", "flags:       seed=7",
		"events:      9 in 1 blocks; 2 threads (100: 5, 101: 4)", "status:      complete",
		"syscall       2", "exit       2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("info output lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runTraceCmd(t, base, "dump", "ls-1")
	want := `#0 100 execve("/bin/ls", ["ls", "-l"]) maps /bin/ls@0x400000=blob:` + trace.BlobOf([]byte("ls")).Short() + `
#1 100 clone(flags=0x3d0f00) = 101
#2 101 <- read = 5 0x7000<-"hi\n\x00!"
#3 100 -> openat(args=00000000000000cd)
#4 101 timing 1.500000000s
#5 101 --- SIGSEGV {si_code=1} deterministic ---
#6 100 mmap(/lib/libc.so.6, len=0x1000, off=0x0) = 0x7f00 blob:` + trace.BlobOf([]byte("ls")).Short() + `
#7 101 +++ thread killed by SIGKILL +++
#8 100 +++ exited with 3 +++
`
	if code != 0 || out != want || errOut != "" {
		t.Errorf("dump: %d, %q\ngot:\n%s\nwant:\n%s", code, errOut, out, want)
	}

	code, out, _ = runTraceCmd(t, base, "dump", "--from", "2", dir, "--to=6", "--tid", "101")
	if got := lineNumbers(out); code != 0 || got != "2 4 5" {
		t.Errorf("dump --from 2 --to 6 --tid 101: %d, events %q, want 2 4 5", code, got)
	}

	code, out, _ = runTraceCmd(t, base, "dump", "--json")
	jl := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(jl) != 9 {
		t.Fatalf("dump --json: %d, %d lines", code, len(jl))
	}
	var sc struct {
		N        uint64 `json:"n"`
		Kind     string `json:"kind"`
		Syscall  string `json:"syscall"`
		Sysno    *int32 `json:"sysno"`
		Result   int64  `json:"result"`
		External bool   `json:"external"`
		Mem      []struct {
			Addr uint64 `json:"addr"`
			Data []byte `json:"data"`
		} `json:"mem"`
	}
	if err := json.Unmarshal([]byte(jl[2]), &sc); err != nil {
		t.Fatal(err)
	}
	if sc.N != 2 || sc.Kind != "syscall" || sc.Syscall != "read" || sc.Sysno == nil || *sc.Sysno != 0 ||
		sc.Result != 5 || !sc.External || len(sc.Mem) != 1 || string(sc.Mem[0].Data) != "hi\n\x00!" {
		t.Errorf("dump --json line 2: %s", jl[2])
	}
	for i, l := range jl {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["n"] != float64(i) {
			t.Errorf("json line %d: %q, %v", i, l, err)
		}
	}
}

// lineNumbers returns the event numbers of dump lines, space-separated.
func lineNumbers(out string) string {
	var ns []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if n, _, ok := strings.Cut(l, " "); ok {
			ns = append(ns, strings.TrimPrefix(n, "#"))
		}
	}
	return strings.Join(ns, " ")
}

var damageMsg = regexp.MustCompile(`^hermit trace (info|dump): \S+: (truncated at event (\d+) \(block \d+\)|checksum mismatch at block \d+ \(event (\d+)\))\n$`)

// TestTraceDamaged cuts a trace at 10 random offsets and flips 10 random
// bytes: info and dump must fail with one clear line, and dump must print
// every event before the damage.
func TestTraceDamaged(t *testing.T) {
	base := t.TempDir()
	s := tracetest.NewStream(9, true)
	evs := make([]trace.Event, 20000)
	for i := range evs {
		s.Next(&evs[i])
		evs[i] = trace.Event{Kind: evs[i].Kind, Tid: evs[i].Tid, Sysno: evs[i].Sysno, Result: evs[i].Result,
			Digest: evs[i].Digest, Time: evs[i].Time, Child: evs[i].Child} // drop aliased payloads
	}
	orig := makeTrace(t, base, "srv", evs, trace.Options{BlockEvents: 500})
	events, err := os.ReadFile(filepath.Join(orig, "events"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		b := bytes.Clone(events)
		what := ""
		if i < 10 {
			cut := rng.IntN(len(b))
			b, what = b[:cut], fmt.Sprintf("cut at %d", cut)
		} else {
			off := rng.IntN(len(b))
			b[off] ^= byte(1 + rng.IntN(255))
			what = fmt.Sprintf("flip at %d", off)
		}
		dir := filepath.Join(base, "damaged")
		os.RemoveAll(dir)
		os.MkdirAll(filepath.Join(dir, "blobs"), 0o700)
		for _, f := range []string{"header", "index"} {
			c, _ := os.ReadFile(filepath.Join(orig, f))
			os.WriteFile(filepath.Join(dir, f), c, 0o600)
		}
		os.WriteFile(filepath.Join(dir, "events"), b, 0o600)

		code, _, errOut := runTraceCmd(t, base, "info", "damaged")
		if code != 1 || !damageMsg.MatchString(errOut) {
			t.Errorf("%s: info exited %d with %q", what, code, errOut)
		}
		code, out, errOut := runTraceCmd(t, base, "dump", dir)
		m := damageMsg.FindStringSubmatch(errOut)
		if code != 1 || m == nil {
			t.Errorf("%s: dump exited %d with %q", what, code, errOut)
			continue
		}
		k, _ := strconv.Atoi(m[3] + m[4])
		if n := strings.Count(out, "\n"); n != k {
			t.Errorf("%s: dump printed %d events, then %q", what, n, errOut)
		}
	}
}

func TestTraceRm(t *testing.T) {
	base := t.TempDir()
	a := makeTrace(t, base, "a", nil, trace.Options{})
	b := makeTrace(t, base, "b", nil, trace.Options{})
	other := filepath.Join(base, "photos")
	os.Mkdir(other, 0o700)

	code, _, errOut := runTraceCmd(t, base, "rm", other)
	if code != 1 || !strings.HasSuffix(errOut, ": not a trace\n") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("rm non-trace: %d, %q", code, errOut)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("rm removed a non-trace: %v", err)
	}
	if code, _, _ := runTraceCmd(t, base, "rm"); code != 2 {
		t.Errorf("rm without TRACE exited %d, want 2", code)
	}
	code, out, _ := runTraceCmd(t, base, "rm", "latest")
	if code != 0 || out != "removed "+b+"\n" {
		t.Errorf("rm latest: %d, %q", code, out)
	}
	if code, out, _ := runTraceCmd(t, base, "info"); code != 0 || !strings.Contains(out, a) {
		t.Errorf("after rm, info of latest: %d\n%s", code, out)
	}
}

func TestTraceUsage(t *testing.T) {
	base := t.TempDir()
	code, out, _ := runTraceCmd(t, base, "dump", "--help")
	for _, want := range []string{"Usage: hermit trace dump", "-from", "-to", "-tid", "-json", "inclusive"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("dump --help: %d, lacks %q:\n%s", code, want, out)
		}
	}
	code, out, _ = runTraceCmd(t, base, "--help")
	if code != 0 || !strings.Contains(out, "hermit trace ls") || !strings.Contains(out, base) {
		t.Errorf("trace --help: %d\n%s", code, out)
	}
	for _, args := range [][]string{{}, {"frob"}, {"dump", "--frob"}, {"dump", "--from", "x"}, {"info", "a", "b"}} {
		code, _, errOut := runTraceCmd(t, base, args...)
		if code != 2 || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
		if len(args) > 0 && strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: stderr %q is not one line", args, errOut)
		}
	}
	code, _, errOut := runTraceCmd(t, base, "info", t.TempDir())
	if code != 1 || !strings.HasSuffix(errOut, ": not a trace\n") {
		t.Errorf("info of a non-trace: %d, %q", code, errOut)
	}
}
