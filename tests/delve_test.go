package tests

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/internal/procrun"
	"github.com/hermitdbg/hermit/tests/testenv"
)

// dlvTimeout bounds one Delve session: recording (for --backend=rr),
// starting the replay, and every command of the script.
const dlvTimeout = 3 * time.Minute

// perfEventParanoid is the file Delve checks before it starts rr.
const perfEventParanoid = "/proc/sys/kernel/perf_event_paranoid"

// The gochan guest's constants, exit status and output.
const (
	gochanWorkers = 4
	gochanJobs    = 10
	gochanExit    = 3
	gochanOutput  = "sum of the squares of 1..10: 385\n"
)

// TestDelve drives unmodified Delve (dlv v1.27) through its rr backend with
// hermit standing in for rr (hermit rr-shim): dlv replay of a hermit
// trace, and dlv exec/debug --backend=rr, which record with hermit first.
// Delve refuses rr while /proc/sys/kernel/perf_event_paranoid > 1, so dlv
// then runs in a private mount namespace where that file reads 1; the
// host's setting is left alone.
func TestDelve(t *testing.T) {
	t.Parallel()
	dlv := findDlv(t)
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root: dlv runs in a private mount namespace (unshare -m) to pass Delve's perf_event_paranoid check")
	}
	hermit := testenv.Hermit(t)
	bin := testenv.BuildGo(t, "gochan")
	tmp := t.TempDir()

	shimDir := filepath.Join(tmp, "shim")
	r := testenv.Run(t, runTimeout, hermit, "rr-shim", shimDir)
	if r.Exit != 0 {
		t.Fatalf("hermit rr-shim %s: %s", shimDir, describe(r))
	}
	if target, err := os.Readlink(filepath.Join(shimDir, "rr")); err != nil {
		t.Fatalf("hermit rr-shim made no link: %v", err)
	} else if !sameFile(target, hermit) {
		t.Fatalf("hermit rr-shim: %s/rr -> %s, want %s", shimDir, target, hermit)
	}
	// A file reading 1 to bind over perf_event_paranoid, if that is above 1.
	paranoid := ""
	if b, err := os.ReadFile(perfEventParanoid); err == nil {
		if v, _ := strconv.Atoi(strings.TrimSpace(string(b))); v > 1 {
			paranoid = filepath.Join(tmp, "perf_event_paranoid")
			if err := os.WriteFile(paranoid, []byte("1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	env := []string{
		"PATH=" + shimDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HERMIT_TRACE_DIR=" + filepath.Join(tmp, "traces"),
		"XDG_CONFIG_HOME=" + filepath.Join(tmp, "config"), // Delve's config.yml
		"TERM=dumb", // no colours
	}
	src := filepath.Join(testenv.GuestsDir(t), "gochan", "main.go")
	sendLine := sourceLine(t, src, "out <- square")

	t.Run("replay", func(t *testing.T) {
		dir := filepath.Join(tmp, "trace")
		rec := record(t, dir, nil, []string{bin})
		if rec.Exit != gochanExit || string(rec.Stdout) != gochanOutput {
			t.Fatalf("hermit record: want exit %d and %q: %s", gochanExit, gochanOutput, describe(rec))
		}
		runDelveScript(t, dlv, paranoid, env, sendLine, "replay", dir)
	})
	t.Run("reverse", func(t *testing.T) {
		dir := filepath.Join(tmp, "trace-reverse")
		rec := record(t, dir, nil, []string{bin})
		if rec.Exit != gochanExit {
			t.Fatalf("hermit record: want exit %d: %s", gochanExit, describe(rec))
		}
		runDelve(t, dlv, paranoid, env, reverseScript(sendLine), "replay", dir)
	})
	// With --backend=rr, Delve records through "rr record": the trace is
	// hermit's, in $HERMIT_TRACE_DIR, and the latest there.
	recorded := func(t *testing.T, prog string) {
		t.Helper()
		latest, err := os.Readlink(filepath.Join(tmp, "traces", "latest"))
		if err != nil || !strings.HasPrefix(filepath.Base(latest), filepath.Base(prog)+"-") {
			t.Fatalf("no hermit trace of %s is the latest in $HERMIT_TRACE_DIR (latest: %q, %v)", prog, latest, err)
		}
	}
	t.Run("exec", func(t *testing.T) {
		runDelveScript(t, dlv, paranoid, env, sendLine, "exec", "--backend=rr", bin)
		recorded(t, bin)
	})
	t.Run("next", func(t *testing.T) {
		// Built by Delve without optimizations: each line of lines is
		// one instruction, and next goes one line at a time.
		first := sourceLine(t, src, "a := 1 // the Delve test")
		var script []dlvStep
		add := func(cmd string, check func(string) error) { script = append(script, dlvStep{cmd, check}) }
		add(fmt.Sprintf("break main.go:%d", first), contains("Breakpoint 1 set at"))
		add("continue", contains("> [Breakpoint 1] main.lines()", fmt.Sprintf("main.go:%d", first)))
		add("next", contains(fmt.Sprintf("> main.lines() ./tests/guests/gochan/main.go:%d", first+1)))
		add("next", contains(fmt.Sprintf("> main.lines() ./tests/guests/gochan/main.go:%d", first+2)))
		add("print a", printsInt(func(v int) bool { return v == 1 }, "1"))
		add("clearall", contains("Breakpoint 1 cleared"))
		add("continue", matches(fmt.Sprintf(`Process \d+ has exited with status %d\b`, gochanExit)))
		runDelve(t, dlv, paranoid, env, script, "debug", "--backend=rr", "--output="+filepath.Join(tmp, "next-bin"), "./tests/guests/gochan")
	})
	t.Run("debug", func(t *testing.T) {
		out := filepath.Join(tmp, "debug-bin")
		runDelveScript(t, dlv, paranoid, env, sendLine, "debug", "--backend=rr", "--output="+out, "./tests/guests/gochan")
		recorded(t, out)
	})
}

// runDelveScript runs dlv ARGS... with the test's command script on stdin
// and checks what each command printed.
func runDelveScript(t *testing.T, dlv, paranoid string, env []string, sendLine int, args ...string) {
	t.Helper()
	runDelve(t, dlv, paranoid, env, gochanScript(sendLine), args...)
}

// dlvStep is a command of a Delve script and what its output must show.
type dlvStep struct {
	cmd   string
	check func(out string) error
}

// gochanScript is the forward session over gochan.
func gochanScript(sendLine int) []dlvStep {
	var script []dlvStep
	add := func(cmd string, check func(string) error) { script = append(script, dlvStep{cmd, check}) }
	add("break main.main", contains("Breakpoint 1 set at", "for main.main()"))
	add("break main.work", contains("Breakpoint 2 set at", "for main.work()"))
	add("continue", contains("> [Breakpoint 1] main.main()"))
	// One stop per worker entering work: after the last, all are inside.
	for range gochanWorkers {
		add("continue", contains("> [Breakpoint 2] main.work()"))
	}
	add("goroutines", checkGoroutines)
	add("stack", matches(`(?m)^0  0x[0-9a-f]+ in main\.work$`, `(?m)^1  0x[0-9a-f]+ in main\.main\.gowrap1$`))
	add("print id", printsInt(func(v int) bool { return v >= 0 && v < gochanWorkers }, fmt.Sprintf("a worker id, 0..%d", gochanWorkers-1)))
	add("clear 2", contains("Breakpoint 2 cleared"))
	add(fmt.Sprintf("break main.go:%d", sendLine), contains("Breakpoint 3 set at", fmt.Sprintf("main.go:%d", sendLine)))
	add("continue", contains("> [Breakpoint 3] main.work()", fmt.Sprintf("main.go:%d", sendLine)))
	add("print square", printsInt(func(v int) bool {
		r := 1
		for r*r < v {
			r++
		}
		return r*r == v && r <= gochanJobs
	}, fmt.Sprintf("the square of one of 1..%d", gochanJobs)))
	add("clearall", contains("Breakpoint 1 cleared", "Breakpoint 3 cleared"))
	add("continue", matches(fmt.Sprintf(`Process \d+ has exited with status %d\b`, gochanExit)))
	return script
}

// runDelve runs dlv ARGS... with script on stdin and checks what each
// command printed.
func runDelve(t *testing.T, dlv, paranoid string, env []string, script []dlvStep, args ...string) {
	t.Helper()
	var stdin strings.Builder
	for _, s := range script {
		stdin.WriteString(s.cmd + "\n")
	}
	stdin.WriteString("exit\n")

	argv := append(append([]string{dlv}, args...), "--allow-non-terminal-interactive=true")
	if paranoid != "" {
		// In a private mount namespace, perf_event_paranoid reads 1.
		sh := `mount --bind "$1" /proc/sys/kernel/perf_event_paranoid && shift && exec "$@"`
		argv = append([]string{"unshare", "-m", "sh", "-c", sh, "sh", paranoid}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = testenv.RepoRoot(t)
	cmd.Stdin = strings.NewReader(stdin.String())
	// Delve prints errors ("Command failed: ...", "Process N has exited")
	// on stderr, the rest on stdout: one file for both keeps their order.
	outFile, err := os.Create(filepath.Join(t.TempDir(), "dlv.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	cmd.Stdout, cmd.Stderr = outFile, outFile
	r, runErr := procrun.Run(cmd, dlvTimeout)
	output, err := os.ReadFile(outFile.Name())
	if err != nil {
		t.Fatal(err)
	}
	session := fmt.Sprintf("dlv %s: exit %d\nstdin:\n%soutput:\n%s", strings.Join(args, " "), r.Exit, stdin.String(), output)
	if runErr != nil {
		t.Fatalf("%v\n%s", runErr, session)
	}

	// Delve prints "(dlv) " before reading each command, so the text
	// after the i-th prompt is what command i printed.
	parts := strings.Split(string(output), "(dlv) ")
	for i, s := range script {
		if i+1 >= len(parts) {
			t.Fatalf("dlv stopped before command %d (%q)\n%s", i+1, s.cmd, session)
		}
		if err := s.check(parts[i+1]); err != nil {
			t.Fatalf("dlv command %d (%q): %v; it printed:\n%s\n%s", i+1, s.cmd, err, parts[i+1], session)
		}
	}
	if r.Exit != 0 {
		t.Fatalf("dlv exited %d after the script\n%s", r.Exit, session)
	}
}

// reverseScript goes backwards through gochan with Delve: rewind from the
// second breakpoint hit to the first (the same square), rev next to the line
// before, a checkpoint there, forwards past two hits and restart c1 back
// to it, rev step to the line before and rev stepout to work's caller,
// then on to the end.
func reverseScript(sendLine int) []dlvStep {
	var script []dlvStep
	add := func(cmd string, check func(string) error) { script = append(script, dlvStep{cmd, check}) }
	hit := contains("> [Breakpoint 1] main.work()", fmt.Sprintf("main.go:%d", sendLine))
	var first, second int
	isSquare := func(v int) bool {
		r := 1
		for r*r < v {
			r++
		}
		return r*r == v && r <= gochanJobs
	}
	record := func(to *int) func(string) error {
		return printsInt(func(v int) bool { *to = v; return isSquare(v) }, fmt.Sprintf("the square of one of 1..%d", gochanJobs))
	}
	same := func(want *int, what string) func(string) error {
		return printsInt(func(v int) bool { return v == *want }, what)
	}
	add(fmt.Sprintf("break main.go:%d", sendLine), contains("Breakpoint 1 set at"))
	add("continue", hit)
	add("print square", record(&first))
	add("continue", hit)
	add("print square", record(&second))
	add("rewind", hit)
	add("print square", same(&first, "square at the first hit"))
	add("rev next", contains(fmt.Sprintf("main.go:%d", sendLine-1)))
	add("checkpoint", matches(`Checkpoint c1 created\.`))
	add("checkpoints", matches(`(?m)^c1\s+\d+\s+`))
	add("continue", hit)
	add("print square", same(&first, "square at the first hit"))
	add("continue", hit)
	add("print square", same(&second, "square at the second hit"))
	add("restart c1", func(string) error { return nil })
	add("continue", hit)
	add("print square", same(&first, "square at the first hit, after the restart"))
	add("rev step", contains(fmt.Sprintf("main.go:%d", sendLine-1)))
	add("continue", hit)
	add("rev stepout", matches(`> main\.main\.gowrap1\(\) \S*main\.go:\d+`)) // work's caller
	add("clearall", contains("Breakpoint 1 cleared"))
	add("continue", matches(fmt.Sprintf(`Process \d+ has exited with status %d\b`, gochanExit)))
	return script
}

// checkGoroutines checks the goroutines listing at the last worker's entry
// to work: the current goroutine (*) is in main.work, and every worker is
// either in main.work or (for a worker stopped in work's stack check)
// main.main.gowrap1, the wrapper that go work(...) runs it in.
func checkGoroutines(out string) error {
	var works, wrappers int
	current := ""
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, "Goroutine ") {
			continue
		}
		if strings.HasPrefix(l, "* ") {
			current = l
		}
		switch {
		case strings.Contains(l, " main.work ("):
			works++
		case strings.Contains(l, " main.main.gowrap1 ("):
			wrappers++
		}
	}
	switch {
	case !strings.Contains(current, " main.work ("):
		return fmt.Errorf("the current goroutine (*) is not in main.work: %q", current)
	case works+wrappers != gochanWorkers:
		return fmt.Errorf("want %d worker goroutines (main.work or main.main.gowrap1), found %d and %d", gochanWorkers, works, wrappers)
	case !strings.Contains(out, "Goroutine 1 - "):
		return fmt.Errorf("no goroutine 1 (main)")
	}
	m := regexp.MustCompile(`\[(\d+) goroutines\]`).FindStringSubmatch(out)
	if m == nil {
		return fmt.Errorf("no [N goroutines] line")
	}
	if n, _ := strconv.Atoi(m[1]); n < gochanWorkers+1 {
		return fmt.Errorf("only %d goroutines", n)
	}
	return nil
}

// contains checks that a command's output holds every one of subs.
func contains(subs ...string) func(string) error {
	return func(out string) error {
		for _, s := range subs {
			if !strings.Contains(out, s) {
				return fmt.Errorf("no %q", s)
			}
		}
		return nil
	}
}

// matches checks that a command's output matches every one of res.
func matches(res ...string) func(string) error {
	return func(out string) error {
		for _, re := range res {
			if !regexp.MustCompile(re).MatchString(out) {
				return fmt.Errorf("nothing matches %s", re)
			}
		}
		return nil
	}
}

// printsInt checks that a print command showed one integer for which ok
// holds (want describes such a value).
func printsInt(ok func(int) bool, want string) func(string) error {
	return func(out string) error {
		v, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			return fmt.Errorf("want %s, not %q", want, strings.TrimSpace(out))
		}
		if !ok(v) {
			return fmt.Errorf("printed %d, want %s", v, want)
		}
		return nil
	}
}

// findDlv returns Delve's path: from PATH, else from $(go env GOPATH)/bin,
// where `go install` puts it; it skips t when there is none.
func findDlv(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("dlv"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			p := filepath.Join(dir, "bin", "dlv")
			if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	testenv.Skip(t, "dlv not found in PATH or $(go env GOPATH)/bin (go install github.com/go-delve/delve/cmd/dlv@v1.27.2)")
	return ""
}

// sourceLine returns the number of the first line of file holding text.
func sourceLine(t *testing.T, file, text string) int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), text) {
			return n
		}
	}
	t.Fatalf("%s has no line with %q", file, text)
	return 0
}

// sameFile says whether paths a and b name the same file.
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
