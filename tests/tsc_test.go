package tests

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// tscLineRE is the summary's rdtsc line.
var tscLineRE = regexp.MustCompile(`(?m)^  rdtsc: virtualized \((\d+) answered from the virtual clock: (\d+) trapped, (\d+) read hermit's clock page; sites patched (\d+) times\)$`)

// tscLine returns the numbers of r's rdtsc summary line: answered,
// trapped, read in the page, patches.
func tscLine(t *testing.T, r testenv.Result) [4]int64 {
	t.Helper()
	m := tscLineRE.FindStringSubmatch(string(r.Stderr))
	if m == nil {
		t.Fatalf("no rdtsc line in the summary:\n%s", r.Stderr)
	}
	var n [4]int64
	for i := range n {
		n[i], _ = strconv.ParseInt(m[i+1], 10, 64)
	}
	return n
}

// TestTSCSites: a program that reads the time-stamp counter in hot loops
// (rdtsc and rdtscp in the executable, two threads, a sleep, a fork, an
// exec) has its sites patched to read hermit's clock page, without a
// stop; a site that cannot be patched (an rdtsc followed by a jmp) traps
// on every read. The counter never goes back on either path, nor behind
// the monotonic clock, the output is the same on 5 runs, and record and
// replay give it again.
func TestTSCSites(t *testing.T) {
	testenv.RequireTSCTrap(t)
	t.Parallel()
	argv := cGuest("tsc_sites.c")(t)
	const want = "tsc_sites: ok\n"
	if nat := native(t, append(argv, "native")); nat.Exit != 0 || !strings.HasSuffix(string(nat.Stdout), want) {
		t.Fatalf("native run: want %q; %s", want, describe(nat))
	}
	runsAlike(t, append(argv, "hermit"), want, func(run int, r testenv.Result) {
		n := tscLine(t, r)
		// 5 loops of 20000 rounds, each with an rdtsc and an rdtscp at
		// patchable sites and, every 16th, the trapping one.
		const hot, cold = 5 * 20000 * 2, 5 * 20000 / 16
		if n[2] < hot*9/10 || n[1] < cold || n[1] > cold+hot/10 || n[3] < 2 {
			t.Errorf("run %d: %s; want about %d reads in the page, %d trapped", run, tscLineRE.FindString(string(r.Stderr)), hot, cold)
		}
	})
}

// TestTSCSitesLearned: the rdtsc sites a program's loader runs once each
// (glibc's ld.so times itself) are patched in every later program that
// has the same loader, at its exec: no rdtsc of theirs traps.
func TestTSCSitesLearned(t *testing.T) {
	testenv.RequireTSCTrap(t)
	t.Parallel()
	sh := testenv.Require(t, "sh")
	const execs = 8
	r := hermitRun(t, []string{"--summary"}, []string{sh, "-c", "for i in 1 2 3 4 5 6 7 8; do /bin/true; done"})
	if r.Exit != 0 {
		t.Fatalf("%s", describe(r))
	}
	n := tscLine(t, r)
	if n[0] == 0 {
		testenv.Skip(t, "this machine's loader reads no time-stamp counter: nothing to patch")
	}
	// The shell's sites are patched as they trap, the same ones in each
	// program after it at its exec.
	if n[1] != 0 || n[2] != n[0] || n[3] < execs+1 || n[3]%(execs+1) != 0 {
		t.Errorf("%s; want every read in the page, each site of the shell's patched in the %d programs after it", tscLineRE.FindString(string(r.Stderr)), execs)
	}
	// --no-fast-io patches nothing: every read traps.
	r = hermitRun(t, []string{"--summary", "--no-fast-io"}, []string{sh, "-c", "for i in 1 2 3 4 5 6 7 8; do /bin/true; done"})
	if m := tscLine(t, r); r.Exit != 0 || m[1] != n[0] || m[3] != 0 {
		t.Errorf("--no-fast-io: %s; want all %d reads trapped, no site patched", tscLineRE.FindString(string(r.Stderr)), n[0])
	}
}

// TestTSCSiteUnderBreakpoint: a gdb breakpoint on an instruction that a
// patched rdtsc site's jmp covers (set before the site is patched, at its
// first run in the replay) does not end up inside the jmp: the program
// runs on to its end as recorded, and the breakpoint is not hit (as the
// README says); one on the rdtsc itself is, and a step goes over the site.
func TestTSCSiteUnderBreakpoint(t *testing.T) {
	testenv.RequireTSCTrap(t)
	requireDebugging(t, "gdb")
	t.Parallel()
	dir := recordC(t, "step_emulated.c")
	r := hermitClient(t, "replay", "--gdb", dir, "--", "-nx", "-batch",
		"-ex", "break *(&L_tsc_patched + 3)", "-ex", "continue", "-ex", "p/x $pc",
		"-ex", "delete", "-ex", "continue")
	if out := string(r.Stdout); r.Exit != 0 || !strings.Contains(out, "done\n") || strings.Contains(out, "Breakpoint 1,") || strings.Contains(out, "SIGSEGV") {
		t.Errorf("a breakpoint inside a patched site: want the program to run to its end without stopping there\n%s", describe(r))
	}
	r = hermitClient(t, "replay", "--gdb", dir, "--", "-nx", "-batch",
		"-ex", "break *&L_tsc_patched", "-ex", "continue", "-ex", "p/x $pc == (long)&L_tsc_patched",
		"-ex", "stepi", "-ex", "p/x $pc == (long)&L_after_tsc_patched", "-ex", "continue")
	if out := string(r.Stdout); r.Exit != 0 || strings.Count(out, "= 0x1") != 2 || !strings.Contains(out, "done\n") {
		t.Errorf("a breakpoint on a patched rdtsc: want a stop there, a step over the site, and the program's end\n%s", describe(r))
	}
}

// TestTSCSiteUnderWatchpoint: a store that a patched rdtsc site's jmp
// covers runs, moved, in hermit's stub; the watchpoint it triggers is
// reported in the program, right after the site (hermit stopped in its
// stub, where gdb showed ?? ()), at each hit forwards, and at the site
// itself, before the store, by reverse-continue.
func TestTSCSiteUnderWatchpoint(t *testing.T) {
	testenv.RequireTSCTrap(t)
	testenv.RequireDebugRegs(t)
	requireDebugging(t, "gdb")
	t.Parallel()
	got, r := gdbValues(t, recordC(t, "tsc_watch.c"), "watch stamp", "continue",
		"p $pc == (long)&L_after_tsc_store", "p stamp", "continue", "p $pc == (long)&L_after_tsc_store",
		"reverse-continue", "p $pc == (long)&L_tsc_store", "p stamp", "delete", "continue")
	if len(got) != 5 || got[0] != "1" || got[2] != "1" || got[3] != "1" || got[4] != got[1] || !strings.Contains(string(r.Stdout), "done\n") {
		t.Errorf("a watchpoint on a store moved into a patched site's stub: want stops after the site forwards (1, 1), at the site backwards (1) with the first store's value, and the program's end; got %v\n%s", got, describe(r))
	}
}

// TestTSCSiteAfterGuestFault: a thread whose own PR_TSC_SIGSEGV made its
// rdtsc fault, and whose handler steps over it, returns after it even
// though another thread ran the same site meanwhile: the site stays
// unpatched in that process (hermit used to patch it, and the handler
// returned into the jmp). Runs and a replay agree with the native run.
func TestTSCSiteAfterGuestFault(t *testing.T) {
	testenv.RequireTSCTrap(t)
	t.Parallel()
	argv := cGuest("tsc_handler.c")(t)
	const want = "A's rdtsc faulted 1 time(s)\n"
	if nat := native(t, argv); nat.Exit != 0 || string(nat.Stdout) != want {
		t.Fatalf("native run: want %q; %s", want, describe(nat))
	}
	runsAlike(t, argv, want, func(int, testenv.Result) {})
}
