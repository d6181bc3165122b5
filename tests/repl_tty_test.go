package tests

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

// TestREPLTerminal drives the interactive debugger on a real terminal,
// tmux's, as a person would: the prompt, tab completion of a command,
// history with the up arrow, Ctrl-C during a long continue (back at the
// prompt with the stop printed), and Ctrl-D ending hermit with status 0.
func TestREPLTerminal(t *testing.T) {
	requireDebugging(t, "tmux")
	tmux := testenv.Require(t, "tmux")
	dir := recordYieldLoop(t, "400000")
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	shell := "HERMIT_TRACE_DIR=" + t.TempDir() + " " + testenv.Hermit(t) + " replay " + dir + "; echo hermit-exit=$?; sleep 60"
	tm("new-session", "-d", "-x", "160", "-y", "50", shell)
	defer exec.Command(tmux, "-S", sock, "kill-server").Run()
	screen := func() string { return tm("capture-pane", "-p", "-S", "-100") }
	waitFor := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			s := screen()
			if ok(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s; the screen:\n%s", what, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	prompts := func(n int) func(string) bool {
		return func(s string) bool { return strings.Count(s, "(hermit)") >= n } // tmux drops trailing blanks
	}
	waitFor("the prompt", prompts(1))
	// Tab completes "cont" to "continue".
	tm("send-keys", "cont", "Tab")
	waitFor("the completion", func(s string) bool { return strings.Contains(s, "(hermit) continue") })
	tm("send-keys", "Enter")
	waitFor("the continue to start", func(s string) bool { return strings.Contains(s, "yielding 400000 times") })
	tm("send-keys", "C-c")
	s := waitFor("the interrupted stop and a new prompt", prompts(2))
	if !strings.Contains(s, " interrupted at 0x") || strings.Contains(s, "the recording ends") {
		t.Fatalf("Ctrl-C during continue: want the interrupted stop before the end; the screen:\n%s", s)
	}
	// The up arrow brings "continue" back.
	tm("send-keys", "Up")
	waitFor("the history", func(s string) bool {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return strings.HasSuffix(lines[len(lines)-1], "(hermit) continue")
	})
	tm("send-keys", "C-u", "C-d")
	s = waitFor("hermit to exit", func(s string) bool { return strings.Contains(s, "hermit-exit=") })
	if !strings.Contains(s, "hermit-exit=0") {
		t.Errorf("Ctrl-D: want exit status 0; the screen:\n%s", s)
	}
}
