package tests

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermitdbg/hermit/tests/testenv"
)

const (
	module    = "github.com/hermitdbg/hermit"
	xsysUnix  = "golang.org/x/sys/unix"
	ptracePkg = module + "/detcore/ptrace"
)

// ptraceFree are the packages (and their subpackages) that must not reach
// detcore/ptrace: they serve offline traces and remote debuggers.
var ptraceFree = []string{module + "/gdbstub", module + "/repl", module + "/trace"}

// listedPackage is the part of `go list -json` output the rules need.
type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// basePath strips the test-variant decorations go list -test adds:
// "p [p.test]", "p_test [p.test]" and "p.test" all become "p".
func basePath(importPath string) string {
	p, _, _ := strings.Cut(importPath, " ")
	p = strings.TrimSuffix(p, ".test")
	return strings.TrimSuffix(p, "_test")
}

func within(path, pkg string) bool {
	return path == pkg || strings.HasPrefix(path, pkg+"/")
}

// depViolations applies the layering rules to the module's packages:
// only detcore/ptrace imports x/sys/unix directly, and gdbstub, repl and
// trace do not depend on detcore/ptrace, even through other packages.
func depViolations(pkgs []listedPackage) []string {
	var bad []string
	for _, p := range pkgs {
		base := basePath(p.ImportPath)
		if !within(base, module) {
			continue
		}
		if base != ptracePkg && slices.Contains(p.Imports, xsysUnix) {
			bad = append(bad, p.ImportPath+" imports "+xsysUnix+"; only "+ptracePkg+" may")
		}
		for _, free := range ptraceFree {
			if within(base, free) && slices.ContainsFunc(p.Deps, func(d string) bool { return within(d, ptracePkg) }) {
				bad = append(bad, p.ImportPath+" depends on "+ptracePkg)
			}
		}
	}
	return bad
}

// TestDeps checks the layering rules on the whole module, test files included.
func TestDeps(t *testing.T) {
	goTool := testenv.Require(t, "go")
	r := testenv.RunWith(t, testenv.Opts{Timeout: 2 * time.Minute, Dir: testenv.RepoRoot(t)}, goTool, "list", "-deps", "-test", "-json", "./...")
	if r.Exit != 0 {
		t.Fatalf("go list: %s", describe(r))
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(r.Stdout))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if !slices.ContainsFunc(pkgs, func(p listedPackage) bool { return p.ImportPath == module+"/tests" }) {
		t.Fatalf("go list did not list %s/tests; the package list is incomplete", module)
	}
	for _, v := range depViolations(pkgs) {
		t.Error(v)
	}
}

// TestDepsRules checks that depViolations catches each kind of violation.
func TestDepsRules(t *testing.T) {
	cases := []struct {
		name string
		pkg  listedPackage
		bad  bool
	}{
		{"ptrace imports x/sys", listedPackage{ImportPath: ptracePkg, Imports: []string{xsysUnix}}, false},
		{"ptrace test imports x/sys", listedPackage{ImportPath: ptracePkg + "_test [" + ptracePkg + ".test]", Imports: []string{xsysUnix}}, false},
		{"cmd imports ptrace", listedPackage{ImportPath: module + "/cmd/hermit", Imports: []string{ptracePkg}, Deps: []string{ptracePkg, xsysUnix}}, false},
		{"cmd imports x/sys", listedPackage{ImportPath: module + "/cmd/hermit", Imports: []string{xsysUnix}}, true},
		{"tests import x/sys", listedPackage{ImportPath: module + "/tests [" + module + "/tests.test]", Imports: []string{xsysUnix}}, true},
		{"detcore imports x/sys", listedPackage{ImportPath: module + "/detcore", Imports: []string{xsysUnix}}, true},
		{"outside module", listedPackage{ImportPath: "example.com/other", Imports: []string{xsysUnix}}, false},
		{"trace reaches ptrace", listedPackage{ImportPath: module + "/trace", Deps: []string{module + "/detcore", ptracePkg}}, true},
		{"gdbstub subpackage reaches ptrace", listedPackage{ImportPath: module + "/gdbstub/rsp", Deps: []string{ptracePkg}}, true},
		{"repl stdlib only", listedPackage{ImportPath: module + "/repl", Deps: []string{"fmt", "io"}}, false},
		{"replay reaches ptrace", listedPackage{ImportPath: module + "/replay", Deps: []string{ptracePkg}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := depViolations([]listedPackage{c.pkg})
			if (len(got) > 0) != c.bad {
				t.Errorf("violations %q, want violation: %v", got, c.bad)
			}
		})
	}
}
