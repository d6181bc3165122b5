package tests

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestKillIsDeterministic: a SIGKILL sent to a child that hermit holds
// stopped takes effect at once in the host; the run (schedule digest
// included) must not depend on when the host reaps it. The guest kills a
// sleeping child on a context timeout, then runs four commands at once.
func TestKillIsDeterministic(t *testing.T) {
	hermit := testenv.Hermit(t)
	bin := testenv.BuildGo(t, "gokill")
	digest := regexp.MustCompile(`schedule digest: [0-9a-f]+`)
	var first testenv.Result
	for i := 0; i < 5; i++ {
		r := testenv.Run(t, time.Minute, hermit, "run", "--summary", "--", bin)
		if r.Exit != 0 || !bytes.HasPrefix(r.Stdout, []byte("sleep: signal: killed\njob 0\n")) {
			t.Fatalf("run %d: exit %d, stdout %q\n%s", i, r.Exit, r.Stdout, r.Stderr)
		}
		if i == 0 {
			first = r
			continue
		}
		if !bytes.Equal(r.Stdout, first.Stdout) || !bytes.Equal(digest.Find(r.Stderr), digest.Find(first.Stderr)) {
			t.Fatalf("run %d differs from run 0:\n%s%s\nvs\n%s%s", i, r.Stdout, digest.Find(r.Stderr), first.Stdout, digest.Find(first.Stderr))
		}
	}
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.Run(t, time.Minute, hermit, "record", "-o", dir, "--", bin)
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rec.Exit != 0 || rep.Exit != 0 || !bytes.Equal(rep.Stdout, rec.Stdout) {
		t.Fatalf("record exit %d, replay exit %d:\n%s\nvs\n%s\n%s", rec.Exit, rep.Exit, rec.Stdout, rep.Stdout, rep.Stderr)
	}
}

// TestRecordReplayCPUID: with --virtualize-cpuid the recorded cpuid
// answers (RDRAND hidden, APIC ids fixed) are what replay gives, and the
// trace says to virtualize it.
func TestRecordReplayCPUID(t *testing.T) {
	hermit := testenv.Hermit(t)
	bin := testenv.BuildC(t, "cpuid.c")
	dir := filepath.Join(t.TempDir(), "trace")
	rec := testenv.Run(t, time.Minute, hermit, "record", "--virtualize-cpuid", "-o", dir, "--", bin)
	if rec.Exit == 2 && bytes.Contains(rec.Stderr, []byte("no CPUID faulting")) {
		testenv.Skip(t, "this machine has no CPUID faulting: "+string(bytes.TrimSpace(rec.Stderr)))
	}
	want := "apic id 0 rdrand 0\nrdseed 0\n"
	if rec.Exit != 0 || string(rec.Stdout) != want {
		t.Fatalf("record: exit %d, stdout %q, want %q\n%s", rec.Exit, rec.Stdout, want, rec.Stderr)
	}
	dump := testenv.Run(t, time.Minute, hermit, "trace", "dump", dir)
	if !bytes.Contains(dump.Stdout, []byte("host:cpuid(")) {
		t.Errorf("the trace holds no cpuid answers:\n%s", dump.Stdout)
	}
	rep := testenv.Run(t, time.Minute, hermit, "replay", "--autopilot", dir)
	if rep.Exit != 0 || string(rep.Stdout) != want {
		t.Fatalf("replay: exit %d, stdout %q\n%s", rep.Exit, rep.Stdout, rep.Stderr)
	}
}
