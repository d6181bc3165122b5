// Package testenv holds the helpers shared by hermit's end-to-end tests:
// building the hermit binary and the guest programs once per test process,
// running commands under a hard timeout, and the single skip helper.
//
// A test package that uses testenv must call Main from its TestMain, which
// removes the build cache and reports every skip with its reason.
//
// Builds are cached in one temporary directory per test process. Each cache
// entry is built at most once, even by parallel tests (mu guards the entry
// table; the entry's sync.Once guards the build).
package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/detcore/ptrace"

	"github.com/hermitdbg/hermit/tests/internal/procrun"
)

// Result is what a finished command showed its user: stdout, stderr and
// the shell-style exit status (128+N for death by signal N).
type Result = procrun.Result

// buildTimeout bounds one compiler or go build invocation.
const buildTimeout = 5 * time.Minute

// cFlags are the flags every C guest is compiled with. -Werror keeps the
// guests warning-free.
var cFlags = []string{"-O1", "-g", "-pthread", "-Wall", "-Werror"}

var (
	mu       sync.Mutex
	cacheDir string                // protected by mu; created on first use
	builds   = map[string]*build{} // protected by mu; key is the output name
	skips    []string              // protected by mu; "TestName: reason"
)

// build is one cached build product.
type build struct {
	once sync.Once
	path string
	err  error
}

// Main runs the tests, removes the build cache, lists the skipped tests with
// their reasons on stderr and exits with the tests' status.
func Main(m *testing.M) {
	// hermit's own cache (blobs of recorded files, replay roots) for this
	// run only: tests record many short-lived files, which would pile up
	// in the user's cache.
	hc, err := os.MkdirTemp("", "hermit-test-cache-")
	if err == nil {
		os.Setenv("HERMIT_CACHE_DIR", hc)
	}
	// Many hermits run at once here: let each run on the CPU it starts
	// on rather than all on the first (TestCPUView checks the default).
	os.Setenv("HERMIT_CPU", "auto")
	code := m.Run()
	if hc != "" {
		os.RemoveAll(hc)
	}
	mu.Lock()
	if cacheDir != "" {
		os.RemoveAll(cacheDir)
	}
	if len(skips) > 0 {
		fmt.Fprintf(os.Stderr, "testenv: %d skipped:\n", len(skips))
		for _, s := range skips {
			fmt.Fprintf(os.Stderr, "  %s\n", s)
		}
	}
	mu.Unlock()
	os.Exit(code)
}

// Skip skips t, recording reason for the report Main prints. Every skip in
// the end-to-end tests goes through here.
func Skip(t testing.TB, reason string) {
	t.Helper()
	mu.Lock()
	skips = append(skips, t.Name()+": "+reason)
	mu.Unlock()
	t.Skip(reason)
}

// Require returns the path of tool, or skips t naming the missing tool.
func Require(t testing.TB, tool string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		Skip(t, fmt.Sprintf("%s not found in PATH", tool))
	}
	return path
}

// RepoRoot returns the module root (the directory holding go.mod), found by
// walking up from the working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// GuestsDir returns the directory holding the guest sources.
func GuestsDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(RepoRoot(t), "tests", "guests")
}

// HermitEnv names an environment variable that, when set, gives the path of
// a hermit binary to test instead of building ./cmd/hermit.
const HermitEnv = "HERMIT_TEST_BINARY"

// Hermit builds the hermit binary (once per test process) and returns its
// path, or returns $HERMIT_TEST_BINARY if that is set.
func Hermit(t testing.TB) string {
	t.Helper()
	if path := os.Getenv(HermitEnv); path != "" {
		return path
	}
	root := RepoRoot(t)
	return cached(t, "hermit", func(out string) error {
		return goBuild(root, out, "./cmd/hermit")
	})
}

// BuildC compiles tests/guests/src with cc (-O1 -g -pthread -Wall -Werror plus
// flags), once per process for each source and flag set, and returns the
// binary's path. A missing cc skips t.
func BuildC(t testing.TB, src string, flags ...string) string {
	t.Helper()
	return buildC(t, "cc", src, flags)
}

// BuildCXX builds the C++ guest tests/guests/src as BuildC does, with c++.
func BuildCXX(t testing.TB, src string, flags ...string) string {
	t.Helper()
	return buildC(t, "c++", src, flags)
}

func buildC(t testing.TB, compiler, src string, flags []string) string {
	t.Helper()
	cc := Require(t, compiler)
	srcPath := filepath.Join(GuestsDir(t), src)
	name := strings.TrimSuffix(strings.TrimSuffix(src, ".c"), ".cc")
	if len(flags) > 0 {
		sum := sha256.Sum256([]byte(strings.Join(flags, "\x00")))
		name += "-" + hex.EncodeToString(sum[:4])
	}
	return cached(t, name, func(out string) error {
		args := append(append(append([]string{}, cFlags...), flags...), "-o", out, srcPath)
		return runBuild(exec.Command(cc, args...))
	})
}

// BuildGo builds the Go guest in tests/guests/dir (once per process) and
// returns the binary's path.
func BuildGo(t testing.TB, dir string) string {
	t.Helper()
	Require(t, "go")
	root := RepoRoot(t)
	return cached(t, "go-"+filepath.Base(dir), func(out string) error {
		return goBuild(root, out, "./"+filepath.ToSlash(filepath.Join("tests", "guests", dir)))
	})
}

// BuildGoTest builds the test binary of standard library package pkg
// (go test -c) and returns its path and the package's source directory,
// where it must run (its testdata).
func BuildGoTest(t testing.TB, pkg string) (bin, dir string) {
	t.Helper()
	Require(t, "go")
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	dir = filepath.Join(strings.TrimSpace(string(out)), "src", filepath.FromSlash(pkg))
	bin = cached(t, "gotest-"+strings.ReplaceAll(pkg, "/", "-"), func(out string) error {
		cmd := exec.Command("go", "test", "-c", "-o", out, pkg)
		cmd.Dir = RepoRoot(t)
		return runBuild(cmd)
	})
	return bin, dir
}

// cached returns the product named name, producing it with produce (which gets
// the output path) the first time. A failed build fails every caller.
func cached(t testing.TB, name string, produce func(out string) error) string {
	t.Helper()
	mu.Lock()
	if cacheDir == "" {
		dir, err := os.MkdirTemp("", "hermit-tests-")
		if err != nil {
			mu.Unlock()
			t.Fatalf("create build cache: %v", err)
		}
		cacheDir = dir
	}
	b, ok := builds[name]
	if !ok {
		b = &build{path: filepath.Join(cacheDir, name)}
		builds[name] = b
	}
	mu.Unlock()

	b.once.Do(func() { b.err = produce(b.path) })
	if b.err != nil {
		t.Fatalf("build %s: %v", name, b.err)
	}
	return b.path
}

func goBuild(root, out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	return runBuild(cmd)
}

func runBuild(cmd *exec.Cmd) error {
	res, err := procrun.Run(cmd, buildTimeout)
	if err != nil {
		return err
	}
	if res.Exit != 0 {
		return fmt.Errorf("%s exited %d:\n%s%s", strings.Join(cmd.Args, " "), res.Exit, res.Stdout, res.Stderr)
	}
	return nil
}

// Opts are the optional settings of RunWith.
type Opts struct {
	Timeout time.Duration // required
	Stdin   []byte        // nil means /dev/null
	Env     []string      // appended to the test's environment
	Dir     string        // working directory; "" means the test's
}

// Run runs name with args, capturing its output, and fails t if the command
// cannot be started or outlives timeout (its process group is then killed).
// A non-zero exit status is not a failure; it is returned in Result.Exit.
func Run(t testing.TB, timeout time.Duration, name string, args ...string) Result {
	t.Helper()
	return RunWith(t, Opts{Timeout: timeout}, name, args...)
}

// RunWith is Run with a stdin, extra environment and working directory.
func RunWith(t testing.TB, o Opts, name string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(name, args...)
	if o.Stdin != nil {
		cmd.Stdin = strings.NewReader(string(o.Stdin))
	}
	if o.Env != nil {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.Dir = o.Dir
	res, err := procrun.Run(cmd, o.Timeout)
	if errors.Is(err, procrun.ErrTimeout) {
		t.Fatalf("%s: %v\nstdout so far:\n%s\nstderr so far:\n%s", strings.Join(cmd.Args, " "), err, res.Stdout, res.Stderr)
	}
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	return res
}

// RequireDebugRegs skips t on a machine whose debug registers never
// trigger (hardware watchpoints and breakpoints cannot stop there).
func RequireDebugRegs(t testing.TB) {
	t.Helper()
	if !ptrace.DebugRegsTrigger() {
		Skip(t, "this machine's debug registers never trigger (a probe's hardware write breakpoint counted no write): no hardware watchpoint or breakpoint can stop here")
	}
}

// RequireTSCTrap skips t on a machine where rdtsc does not fault for a
// process that asks for it with PR_SET_TSC (hermit cannot answer rdtsc
// from its virtual clock there).
func RequireTSCTrap(t testing.TB) {
	t.Helper()
	if !ptrace.TSCTraps() {
		Skip(t, "this machine does not trap rdtsc (PR_SET_TSC(PR_TSC_SIGSEGV) has no effect: a probe's rdtsc did not fault)")
	}
}
